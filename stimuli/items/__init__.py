"""The researcher's own items: a paradigm whose items are imported from a table, not generated.

``tracktale stimuli import ITEMS --design DESIGN.yaml --out SET`` reads a CSV, TSV or XLSX
table in PCIbex's convention (one row per item x condition) with a design file that says what
each column means (:mod:`.design`, :mod:`.importer`); ``tracktale stimuli export SET --format
pcibex`` writes it back out for PCIbex (:mod:`.export`). Every item carries the text read
(``context``; its screens and word or region spans in ``truth``), the human response (typed
answers accepted, or forced-choice options with the right one), and for models the
continuation pair (``choice``) and the explicit prompt, so the model tasks apply as they do to
a generated set. Lists: :mod:`.lists`; word segmentation: :mod:`.segment`; judging answers:
:mod:`.answers`. An example table and design (a 2 x 2 design, 8 items, 4 fillers, 2 practice
items) ship in ``example/``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tracktale.errors import TracktaleError
from tracktale.item import Item
from tracktale.schema.payloads import truth_problems
from tracktale.schema.results import Judgement
from tracktale.stimuli.items.answers import answers_named
from tracktale.stimuli.items.payload import ItemsTruth, design_cell
from tracktale.stimuli.paradigm import Paradigm
from tracktale.stimulus_set import StimulusSet

EXAMPLE_DIR = Path(__file__).parent / "example"
"""The shipped example: ``items.csv`` and ``design.yaml``."""


@dataclass(frozen=True, kw_only=True)
class ItemsJudgement(Judgement):
    """A response as :meth:`ItemsParadigm.score_response` judges it.

    Attributes:
        matched: The accepted answer or the option the response gave (``None``: none, or for
            a forced choice more than one).
        options_named: How many forced-choice options the response gives (0 for typed ones).
    """

    matched: str | None
    options_named: int


class ItemsParadigm(Paradigm):
    """Items imported from the researcher's own table."""

    name = "items"
    version = "1"
    description = "the researcher's own items, imported from a CSV/TSV/XLSX table"
    source = "importer"
    example = EXAMPLE_DIR
    options = ()
    protocols: Mapping[str, Mapping[str, Any]] = {}
    judgement = ItemsJudgement
    export_formats = ("pcibex",)

    def expected_count(self, config: Mapping[str, Any]) -> int:
        """Imported items are counted by their table."""
        raise self._not_generated()

    def generate(self, config: Mapping[str, Any], seed: int) -> Iterator[Item]:
        """Imported items are not generated."""
        raise self._not_generated()

    def _not_generated(self) -> TracktaleError:
        return TracktaleError(
            f"the {self.name} paradigm's items come from a table: tracktale stimuli import "
            "ITEMS --design DESIGN.yaml --out SET"
        )

    def language(self, stimulus_set: StimulusSet) -> str:
        """The design's ``language``."""
        design = stimulus_set.manifest.config.get("design")
        return str(design.get("language") or "en") if isinstance(design, dict) else "en"

    def import_set(self, source: Path, design: Path) -> StimulusSet:
        """Import an item table with its design (:func:`.importer.import_table`)."""
        from tracktale.stimuli.items.importer import import_table

        return import_table(source, design)

    def export(self, stimulus_set: StimulusSet, fmt: str, folder: Path) -> list[Path]:
        """Write ``items.csv`` and its ``design.yaml`` for PCIbex (:mod:`.export`)."""
        from tracktale.stimuli.items.export import export_pcibex

        self.check_export_format(fmt)
        return export_pcibex(stimulus_set, folder)

    def verify(self, item: Item) -> list[str]:
        """Check the item's truth against its payload and its parts against each other."""
        if item.paradigm != self.name:
            return [f"item belongs to paradigm {item.paradigm!r}, not {self.name!r}"]
        problems = truth_problems(item.truth, ItemsTruth)
        if problems:
            return problems
        truth = item.truth
        response = truth["response"]
        if response["accepted"][:1] != ([item.answer] if item.answer else []):
            problems.append("the answer is not the first accepted answer")
        if response["kind"] == "choice" and item.answer not in response["options"]:
            problems.append("the answer is not among the options")
        if not truth["screens"] or any(not screen for screen in truth["screens"]):
            problems.append("a screen is empty")
        previous = 0
        for span in truth["segments"]:
            if len(span) != 2 or not previous <= span[0] < span[1] <= len(item.context):
                problems.append(f"the segment {span} is out of order or out of the text")
                break
            previous = span[1]
        return problems

    def design_cell(self, item: Item) -> str:
        """``main/attractor=pl,number=sg``, ``filler/-``, ``practice/-``."""
        return design_cell(item)

    def word_spans(self, item: Item) -> list[tuple[int, int]] | None:
        """The item's word or region spans, as imported."""
        return [(int(start), int(end)) for start, end in item.truth.get("segments", ())]

    def score_response(self, item: Item, response: str) -> ItemsJudgement:
        """Judge a typed answer, a chosen option or a model's generation (:mod:`.answers`).

        Typed: correct when the response gives an accepted answer. Forced choice: correct when
        it gives the right option and no other. An item without a response is never correct.
        Under ``exact`` matching only the response's first non-blank line counts (a model's
        generation goes on past its answer; people type one line).
        """
        truth = item.truth["response"]
        if truth["match"] == "exact":
            response = next((line for line in response.splitlines() if line.strip()), "")
        rule = {"match": truth["match"], "segmenter": item.truth["segmenter"]}
        if truth["kind"] == "choice":
            named = answers_named(response, truth["options"], **rule)
            return ItemsJudgement(
                correct=named == [item.answer],
                matched=named[0] if len(named) == 1 else None,
                options_named=len(named),
            )
        accepted = answers_named(response, truth["accepted"], **rule)
        matched = accepted[0] if accepted else None
        return ItemsJudgement(correct=matched is not None, matched=matched, options_named=0)


PARADIGM = ItemsParadigm()
