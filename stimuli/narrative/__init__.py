"""The narrative entity-tracking paradigm (objects moved between containers in short stories).

Design: complexity C1-C5 crossed with the focus object (11 cells), three object templates
(standard, pseudoword, improbable), an explicit probe and an implicit pair of continuations on
every item, filler stories for the human study. Every item is replayed by the world simulator
and re-rendered before it is yielded.

By default the templates tell the same stories (matched items: one story per cell and index,
written out with each template's nouns), every story text occurs once in a set, and the stories
of different cells of one complexity (and of practice items) never coincide: a story's content
hash decides which focus cell and role may use it, so no cell depends on which others are
generated.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from tracktale.errors import TracktaleError
from tracktale.item import Item
from tracktale.schema.results import Judgement
from tracktale.stimuli import lexicons
from tracktale.stimuli.lexicons import CHARACTER_POOLS, TEMPLATES, Noun
from tracktale.stimuli.narrative.design import (
    ADJECTIVE_UNITS,
    CELLS,
    STRUCTURES,
    build_plan,
    draw_story,
    parse_cell,
    story_key,
)
from tracktale.stimuli.narrative.fillers import render_filler, sample_filler, verify_filler
from tracktale.stimuli.narrative.items import render_item, verify_item
from tracktale.stimuli.narrative.pairs import LURES, PAIR_STRUCTURES, choose_pair
from tracktale.stimuli.narrative.render import PROMPT_LAYOUTS
from tracktale.stimuli.paradigm import Option, Paradigm

HUMAN_CELLS = ("C1.F0:8", "C2.F0:8", "C3.F0:4", "C3.F1:4", "C4.F0:4", "C4.F1:4", "C4.F2:4")
"""The human protocol's 36 main trials: the source paper's seven configurations."""
PRACTICE_CELLS = ("C1.F0", "C2.F0")
"""Practice items alternate between these cells (practice trials are ours, not the paper's)."""
TEMPLATE_STORIES = ("matched", "independent")
"""``matched``: every template tells the same stories; ``independent``: each draws its own."""
ROLES = ("main", "practice")
_MAX_DRAWS = 4000


class GenerationError(TracktaleError):
    """The generator produced an item its own checks reject (a bug, never silently skipped)."""


@dataclass(frozen=True, kw_only=True)
class NarrativeJudgement(Judgement):
    """A response as :meth:`NarrativeParadigm.score_response` judges it.

    Attributes:
        matched: The text that matched the answer (``None``: nothing did).
        answers_named: The distinct container nouns the response names.
        several_answers: It names more than one.
    """

    matched: str | None
    answers_named: int
    several_answers: bool


class NarrativeParadigm(Paradigm):
    """Entity tracking in naturalistic narratives."""

    name = "narrative"
    version = "2"
    description = "objects moved between containers in short stories (complexity C1-C5)"
    # Room for a whole one-sentence answer ("Based on the story, the key is in the blue box");
    # the answer ends at its first full stop or at the end of its first line. At 8 tokens most
    # answers of the default model stopped at "... is in the", before any container.
    max_new_tokens = 32
    stop_sequences = ("\n", ".")
    judgement = NarrativeJudgement
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
            "characters",
            str,
            "Protagonists: 'female' (the six women of the paper's Appendix D, she/her) or "
            "'mixed' (twenty names of both genders, ours).",
            choices=CHARACTER_POOLS,
        ),
        Option(
            "adjective_rate",
            float,
            "Share of story sentences (or containers, see --adjective-unit) with an adjective.",
            minimum=0,
            maximum=1,
        ),
        Option(
            "adjective_unit",
            str,
            "What --adjective-rate counts: 'sentence' (the paper's wording) or 'container'.",
            choices=ADJECTIVE_UNITS,
        ),
        Option(
            "pairs",
            str,
            "Implicit pair: 'chained' (good from A into X, bad from X into Y, as in the paper's "
            "Appendix D) or 'independent' (targets and lure drawn independently, ours).",
            choices=PAIR_STRUCTURES,
        ),
        Option(
            "lure",
            str,
            "Kind of wrong 'from' container in the bad continuation ('any': every kind; the "
            "others force one kind, our option).",
            choices=LURES,
        ),
        Option(
            "minimal_pair",
            bool,
            "Make the two continuations differ only in the 'from' container (ours; needs "
            "--pairs independent).",
        ),
        Option(
            "prompt_layout",
            str,
            "Explicit prompt: 'story-first' (story and question, then Appendix C's instruction "
            "ending in Location:) or 'instructions-first'.",
            choices=PROMPT_LAYOUTS,
        ),
        Option(
            "template_stories",
            str,
            "'matched': the templates tell the same stories with their own nouns (item-by-item "
            "comparisons); 'independent': each template draws its own stories.",
            choices=TEMPLATE_STORIES,
        ),
        Option(
            "object_lists",
            str,
            "Object lists of one's own as TEMPLATE=FILE (noun, a/an, optional kind; "
            "tab-separated, comma-separated entries).",
            multiple=True,
        ),
        Option("fillers", int, "Filler stories with a comprehension question.", minimum=0),
        Option("practice", int, "Practice items (C1/C2, standard template; ours).", minimum=0),
    )
    _common = {
        "characters": "female",
        "adjective_rate": 0.3,
        "adjective_unit": "sentence",
        "pairs": "chained",
        "lure": "any",
        "minimal_pair": False,
        "prompt_layout": "story-first",
        "template_stories": "matched",
        "object_lists": [],
    }
    protocols = {
        "model": {
            "templates": list(TEMPLATES),
            "cells": list(CELLS),
            "per_condition": 50,
            **_common,
            "fillers": 0,
            "practice": 0,
        },
        "human": {
            "templates": ["standard"],
            "cells": list(HUMAN_CELLS),
            "per_condition": 4,
            **_common,
            "fillers": 10,
            "practice": 4,
        },
    }

    def check_config(self, config: Mapping[str, Any]) -> None:
        """Check the cells, the option combinations and any object lists of one's own."""
        _cell_counts(config)
        if config["minimal_pair"] and config["pairs"] != "independent":
            raise TracktaleError(
                "--minimal-pair needs --pairs independent (a chained pair's bad continuation "
                "starts where the good one ends, so the two cannot share a target)"
            )
        lists = object_lists(config)
        if config["template_stories"] == "matched":
            lengths = {template: len(lists[template]) for template in config["templates"]}
            if len(set(lengths.values())) > 1:
                sizes = ", ".join(f"{t} {n}" for t, n in lengths.items())
                raise TracktaleError(
                    f"matched templates need object lists of one length ({sizes}); "
                    "use --template-stories independent"
                )
        for template in config["templates"]:
            needed = max(
                STRUCTURES[parse_cell(cell)[0]].n_objects for cell, _ in _cell_counts(config)
            )
            if len(lists[template]) < needed:
                raise TracktaleError(
                    f"the {template} object list has {len(lists[template])} nouns; "
                    f"the cells need {needed}"
                )

    def expected_count(self, config: Mapping[str, Any]) -> int:
        """Main items for every template, plus practice items and fillers."""
        per_template = sum(count for _, count in _cell_counts(config))
        return per_template * len(config["templates"]) + config["practice"] + config["fillers"]

    def generate(self, config: Mapping[str, Any], seed: int) -> Iterator[Item]:
        """Yield main items (template by template, cell by cell), then practice, then fillers."""
        templates = list(config["templates"])
        main: dict[str, list[Item]] = {template: [] for template in templates}
        for cell, count in _cell_counts(config):
            if config["template_stories"] == "matched":
                for items in self._cell_items(config, seed, "main", templates, cell, count):
                    for template, item in items.items():
                        main[template].append(item)
            else:
                for template in templates:
                    for items in self._cell_items(config, seed, "main", [template], cell, count):
                        main[template].append(items[template])
        for template in templates:
            yield from main[template]
        yield from self._practice(config, seed)
        yield from self._fillers(config, seed)

    def _practice(self, config: Mapping[str, Any], seed: int) -> Iterator[Item]:
        # Practice items alternate C1, C2, C1, ...: one stream per cell, interleaved.
        cells = [PRACTICE_CELLS[i % len(PRACTICE_CELLS)] for i in range(config["practice"])]
        streams = {
            cell: self._cell_items(config, seed, "practice", ["standard"], cell, cells.count(cell))
            for cell in PRACTICE_CELLS
        }
        for cell in cells:
            yield next(streams[cell])["standard"]

    def _fillers(self, config: Mapping[str, Any], seed: int) -> Iterator[Item]:
        rng = random.Random(f"narrative|{seed}|filler")
        pool = lexicons.characters(config["characters"])
        seen: set[str] = set()
        for index in range(config["fillers"]):
            for _ in range(_MAX_DRAWS):
                item = render_filler(sample_filler(rng, index, pool))
                problems = verify_filler(item)
                if problems:
                    raise GenerationError(f"generated filler {item.item_id}: {problems[0]}")
                if item.context not in seen:
                    seen.add(item.context)
                    yield item
                    break
            else:
                raise TracktaleError("cannot draw another distinct filler story; ask for fewer")

    def _cell_items(
        self,
        config: Mapping[str, Any],
        seed: int,
        role: str,
        templates: list[str],
        cell: str,
        count: int,
    ) -> Iterator[dict[str, Item]]:
        """``count`` distinct stories of ``cell``, each rendered for every template given."""
        lists = object_lists(config)
        matched = config["template_stories"] == "matched"
        # One random stream per (role, cell), and per template unless the stories are matched:
        # a cell's items do not depend on which other cells or templates are generated.
        stream = role if matched else f"{role}|{templates[0]}"
        rng = random.Random(f"narrative|{seed}|{stream}|{cell}")
        salt = "" if matched else templates[0]
        level, focus = parse_cell(cell)
        n_focus = STRUCTURES[level].n_objects
        slots, slot = n_focus * len(ROLES), ROLES.index(role) * n_focus + focus
        seen: set[str] = set()
        for _ in range(count):
            story, key = self._distinct_story(
                rng, config, cell, len(lists[templates[0]]), salt, (slots, slot), seen
            )
            plans = {t: build_plan(story, cell, lists[t], key) for t in templates}
            answer = plans[templates[0]][1]
            pair, kind = choose_pair(
                rng,
                plans[templates[0]][0],
                answer,
                cell=cell,
                lure=config["lure"],
                pairs=config["pairs"],
                minimal_pair=config["minimal_pair"],
            )
            items = {}
            for template, (plan, _) in plans.items():
                plan["lure"], plan["continuations"] = kind, pair
                item = render_item(
                    plan,
                    cell=cell,
                    template=template,
                    answer=answer,
                    minimal_pair=config["minimal_pair"],
                    pairs=config["pairs"],
                    prompt_layout=config["prompt_layout"],
                    role=role,
                )
                problems = verify_item(item)
                if problems:
                    raise GenerationError(
                        f"generated {role} {template} {cell} item {item.item_id} is "
                        f"inconsistent: {problems[0]}"
                    )
                items[template] = item
            yield items

    @staticmethod
    def _distinct_story(
        rng: random.Random,
        config: Mapping[str, Any],
        cell: str,
        n_words: int,
        salt: str,
        partition: tuple[int, int],
        seen: set[str],
    ) -> tuple[dict[str, Any], str]:
        slots, slot = partition
        for _ in range(_MAX_DRAWS):
            story = draw_story(
                rng,
                cell,
                n_words,
                characters=config["characters"],
                adjective_rate=config["adjective_rate"],
                adjective_unit=config["adjective_unit"],
            )
            key = story_key(story, salt)
            # The hash assigns every story to one (role, focus) slot of its complexity level.
            if int(key, 16) % slots == slot and key not in seen:
                seen.add(key)
                return story, key
        raise TracktaleError(f"cannot draw another distinct story for cell {cell}; ask for fewer")

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

    def score_response(self, item: Item, response: str) -> NarrativeJudgement:
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
        return NarrativeJudgement(
            correct=found is not None,
            matched=found.group(0) if found else None,
            answers_named=named,
            several_answers=named > 1,
        )


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


def object_lists(config: Mapping[str, Any]) -> dict[str, tuple[Noun, ...]]:
    """Template -> its object nouns: the shipped lists, or the files ``--object-lists`` names.

    Raises:
        TracktaleError: For a malformed entry, an unknown template or an unreadable list.
    """
    lists = {template: lexicons.objects(template) for template in TEMPLATES}
    for entry in config.get("object_lists") or ():
        template, sep, path = entry.partition("=")
        if not sep or not path:
            raise TracktaleError(f"--object-lists: {entry!r} is not TEMPLATE=FILE")
        if template not in TEMPLATES:
            raise TracktaleError(
                f"--object-lists: unknown template {template!r} "
                f"(choose from {', '.join(TEMPLATES)})"
            )
        lists[template] = lexicons.read_object_list(path)
    return lists


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
