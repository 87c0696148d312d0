"""The toy paradigm's items: a sentence start, and the verb that agrees with it or not."""

from __future__ import annotations

import random
from collections.abc import Iterator, Mapping
from typing import Any

from tracktale.item import ChoicePair, Item
from tracktale.schema.results import Judgement
from tracktale.stimuli.paradigm import Option, Paradigm

NOUNS = ("key", "box", "letter", "painting", "lamp", "chair")
"""Subjects (their plural adds -s or -es)."""
ATTRACTORS = ("cabinet", "garden", "window", "table")
NUMBERS = ("singular", "plural")
VERBS = {"singular": " is", "plural": " are"}
QUESTION = "Which word comes next?"
PRACTICE = 2
"""Practice items: one of each number."""


def plural(noun: str) -> str:
    """The noun's plural."""
    return noun + ("es" if noun.endswith("x") else "s")


class ToyParadigm(Paradigm):
    """Subject-verb agreement pairs (see the package docstring)."""

    name = "toy"
    version = "1"
    description = "Toy: choose the verb that agrees with the subject."
    options = (Option("per_number", int, "Main items of each number.", minimum=1, maximum=20),)
    protocols = {"human": {"per_number": 4}}

    def expected_count(self, config: Mapping[str, Any]) -> int:
        """Two practice items, then ``per_number`` main items of each number."""
        return PRACTICE + 2 * int(config["per_number"])

    def generate(self, config: Mapping[str, Any], seed: int) -> Iterator[Item]:
        """Practice items first, then the main items of each number; no sentence twice."""
        rng = random.Random(f"toy|{seed}")
        pairs = [(noun, attractor) for noun in NOUNS for attractor in ATTRACTORS]
        drawn = {
            number: rng.sample(pairs, PRACTICE // 2 + int(config["per_number"]))
            for number in NUMBERS
        }
        for index in range(PRACTICE):
            number = NUMBERS[index % 2]
            yield self._item(drawn[number].pop(), number, "practice")
        for number in NUMBERS:
            for pair in drawn[number]:
                yield self._item(pair, number, "main")

    def _item(self, pair: tuple[str, str], number: str, role: str) -> Item:
        noun, attractor = pair
        subject = noun if number == "singular" else plural(noun)
        # The attractor takes the other number, so the nearest noun is the wrong cue.
        near = plural(attractor) if number == "singular" else attractor
        prefix = f"The {subject} by the {near}"
        other = NUMBERS[1 - NUMBERS.index(number)]
        good, bad = VERBS[number], VERBS[other]
        return Item.create(
            paradigm=self.name,
            role=role,
            condition={"number": number},
            context=prefix,
            question=QUESTION,
            answer=good.strip(),
            choice=ChoicePair(prefix=prefix, good=good, bad=bad),
            truth={"number": number, "good": good, "bad": bad},
            meta={"noun": noun, "attractor": attractor},
        )

    def verify(self, item: Item) -> list[str]:
        """The good verb is the one of the subject's number."""
        good = VERBS[str(item.condition["number"])]
        if item.choice is None or item.choice.good != good:
            return [f"item {item.item_id}: the good continuation is not {good!r}"]
        return []

    def design_cell(self, item: Item) -> str:
        """``role/number``."""
        return f"{item.role}/{item.condition['number']}"

    def score_response(self, item: Item, response: str) -> Judgement:
        """Right when the response is the agreeing verb (the base judgement: nothing more)."""
        return Judgement(correct=response.strip() == item.answer)


PARADIGM = ToyParadigm()
