"""The narrative entity-tracking paradigm (objects moved between containers in short stories).

Design: complexity C1-C5 crossed with the focus object (11 cells), three object templates
(standard, pseudoword, improbable), an explicit probe and an implicit pair of continuations on
every item, filler stories for the human study. Every item is replayed by the world simulator
and re-rendered before it is yielded.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterator, Mapping
from typing import Any

from tracktale.errors import TracktaleError
from tracktale.item import Item
from tracktale.stimuli import lexicons
from tracktale.stimuli.lexicons import TEMPLATES
from tracktale.stimuli.narrative.design import CELLS, LURES, parse_cell, sample_plan
from tracktale.stimuli.narrative.fillers import render_filler, sample_filler, verify_filler
from tracktale.stimuli.narrative.items import render_item, verify_item
from tracktale.stimuli.paradigm import Option, Paradigm

HUMAN_CELLS = ("C1.F0:8", "C2.F0:8", "C3.F0:4", "C3.F1:4", "C4.F0:4", "C4.F1:4", "C4.F2:4")
"""The human protocol's 36 main trials: the source paper's seven configurations."""
PRACTICE_CELLS = ("C1.F0", "C2.F0")
_MAX_DRAWS = 200


class GenerationError(TracktaleError):
    """The generator produced an item its own checks reject (a bug, never silently skipped)."""


class NarrativeParadigm(Paradigm):
    """Entity tracking in naturalistic narratives."""

    name = "narrative"
    version = "1"
    description = "objects moved between containers in short stories (complexity C1-C5)"
    max_new_tokens = 8  # one location word, with room for a stray article or punctuation
    options = (
        Option(
            "templates",
            str,
            "Object templates to generate (comma-separated).",
            choices=TEMPLATES,
            multiple=True,
            minimum=1,
        ),
        Option(
            "cells",
            str,
            "Design cells C<complexity>.F<focus>, each optionally with its own "
            "count as C3.F1:4 (comma-separated).",
            multiple=True,
            minimum=1,
        ),
        Option(
            "per_condition",
            int,
            "Items per cell and template where a cell gives no count.",
            minimum=1,
        ),
        Option(
            "adjective_rate",
            float,
            "Share of containers described with an adjective.",
            minimum=0,
            maximum=1,
        ),
        Option(
            "lure",
            str,
            "Kind of wrong location in the bad continuation ('any': the source paper's structure).",
            choices=LURES,
        ),
        Option(
            "minimal_pair", bool, "Make the two continuations differ only in the 'from' container."
        ),
        Option("fillers", int, "Filler stories with a comprehension question.", minimum=0),
        Option("practice", int, "Practice items (C1/C2, standard template).", minimum=0),
    )
    protocols = {
        "model": {
            "templates": list(TEMPLATES),
            "cells": list(CELLS),
            "per_condition": 50,
            "adjective_rate": 0.3,
            "lure": "any",
            "minimal_pair": False,
            "fillers": 0,
            "practice": 0,
        },
        "human": {
            "templates": ["standard"],
            "cells": list(HUMAN_CELLS),
            "per_condition": 4,
            "adjective_rate": 0.3,
            "lure": "any",
            "minimal_pair": False,
            "fillers": 10,
            "practice": 4,
        },
    }

    def check_config(self, config: Mapping[str, Any]) -> None:
        """Check the cell list (names and counts)."""
        _cell_counts(config)

    def expected_count(self, config: Mapping[str, Any]) -> int:
        """Main items for every template, plus practice items and fillers."""
        per_template = sum(count for _, count in _cell_counts(config))
        return per_template * len(config["templates"]) + config["practice"] + config["fillers"]

    def generate(self, config: Mapping[str, Any], seed: int) -> Iterator[Item]:
        """Yield main items (template by template, cell by cell), then practice, then fillers."""
        seen: set[str] = set()
        for template in config["templates"]:
            for cell, count in _cell_counts(config):
                yield from self._cell_items(config, seed, "main", template, cell, count, seen)
        for index in range(config["practice"]):
            cell = PRACTICE_CELLS[index % len(PRACTICE_CELLS)]
            yield from self._cell_items(
                config, seed, "practice", "standard", cell, 1, seen, stream=str(index)
            )
        rng = random.Random(f"narrative|{seed}|filler")
        for index in range(config["fillers"]):
            yield self._unique(
                lambda i=index: render_filler(sample_filler(rng, i)), verify_filler, seen, "filler"
            )

    def _cell_items(
        self,
        config: Mapping[str, Any],
        seed: int,
        role: str,
        template: str,
        cell: str,
        count: int,
        seen: set[str],
        stream: str = "",
    ) -> Iterator[Item]:
        # One random stream per (role, template, cell): a cell's items do not depend on which
        # other cells or templates are generated.
        rng = random.Random(f"narrative|{seed}|{role}|{template}|{cell}|{stream}")

        def draw() -> Item:
            plan, answer = sample_plan(
                rng,
                cell,
                template,
                adjective_rate=config["adjective_rate"],
                lure=config["lure"],
                minimal_pair=config["minimal_pair"],
            )
            return render_item(
                plan,
                cell=cell,
                template=template,
                answer=answer,
                minimal_pair=config["minimal_pair"],
                role=role,
            )

        for _ in range(count):
            yield self._unique(draw, verify_item, seen, f"{role} {template} {cell}")

    @staticmethod
    def _unique(draw: Any, verify: Any, seen: set[str], what: str) -> Item:
        for _ in range(_MAX_DRAWS):
            item = draw()
            problems = verify(item)
            if problems:
                raise GenerationError(
                    f"generated {what} item {item.item_id} is inconsistent: {problems[0]}"
                )
            if item.item_id not in seen:
                seen.add(item.item_id)
                return item
        raise TracktaleError(f"cannot draw another distinct {what} item; ask for fewer")

    def verify(self, item: Item) -> list[str]:
        """Replay and re-render the item (fillers: re-render and check the asked fact)."""
        if item.paradigm != self.name:
            return [f"item belongs to paradigm {item.paradigm!r}, not {self.name!r}"]
        return verify_filler(item) if item.role == "filler" else verify_item(item)

    def design_cell(self, item: Item) -> str:
        """``main/standard/C3.F1``, ``practice/standard/C1.F0``, ``filler/filler.garden``."""
        if item.role == "filler":
            return f"filler/{item.condition['cell']}"
        return f"{item.role}/{item.condition['template']}/{item.condition['cell']}"

    def score_response(self, item: Item, response: str) -> dict[str, Any]:
        """Correct when the response contains the answer as a whole word, in any case.

        This is the source paper's rule for generated answers (``correct``). ``matched`` is
        the text that matched (``None`` when nothing did). ``answers_named`` counts the
        distinct container nouns of the lexicon (and of the item) the response names, plurals
        included; ``several_answers`` is true when it names more than one, which the human
        study scores as incorrect by default (``box bag basket drawer`` contains every answer).
        """
        answer = r"\s+".join(re.escape(part) for part in item.answer.split())
        found = re.search(rf"\b{answer}\b", response, flags=re.IGNORECASE)
        named = _containers_named(item, response)
        return {
            "correct": found is not None,
            "matched": found.group(0) if found else None,
            "answers_named": named,
            "several_answers": named > 1,
        }


def _containers_named(item: Item, response: str) -> int:
    nouns = set(lexicons.containers()) | {
        str(container.get("noun")) for container in item.truth.get("containers", ())
    }
    nouns.add(item.answer)
    return sum(
        re.search(rf"\b{re.escape(noun)}(?:e?s)?\b", response, flags=re.IGNORECASE) is not None
        for noun in nouns
        if noun
    )


def _cell_counts(config: Mapping[str, Any]) -> list[tuple[str, int]]:
    counts = []
    for entry in config["cells"]:
        cell, _, count = entry.partition(":")
        parse_cell(cell)
        if count and not (count.isdigit() and int(count) > 0):
            raise TracktaleError(f"--cells: {entry!r} needs a positive count after the colon")
        counts.append((cell, int(count) if count else config["per_condition"]))
    names = [cell for cell, _ in counts]
    duplicated = sorted({cell for cell in names if names.count(cell) > 1})
    if duplicated:
        raise TracktaleError(f"--cells names {duplicated[0]} twice")
    return counts


PARADIGM = NarrativeParadigm()
