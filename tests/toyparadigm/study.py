"""The toy paradigm's human study: read the sentence start, choose the next word.

It is a :class:`~tracktale.experiment.paradigms.single_task.SingleTaskStudy`, the shared shape
of a study with one task (practice with feedback, then every main item in a new random order
for each participant, the stimuli checked by building the lists, an unanswered trial wrong),
and uses the shared forced-choice screen
(``jsPsychTimedChoice``, what a task not in :attr:`HumanStudy.trial_plugins` is shown with):
the served trial's ``probe`` and ``options``, answered ``left`` or ``right``.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

from tracktale.errors import TracktaleError
from tracktale.experiment.paradigms.single_task import SingleTaskStudy, served, simulated_request
from tracktale.experiment.simulation.run import lognormal_ms
from tracktale.experiment.study.design import PlannedTrial
from tracktale.experiment.study.instructions import session_screens
from tracktale.experiment.study.scoring import SIDES, ScoredResponse
from tracktale.item import Item

TASK = "implicit"
"""A choice between two continuations (a trial task of the shared schema)."""
ACCURACY = {"singular": 0.9, "plural": 0.75}
"""A simulated attentive person's chance of the agreeing verb, by the subject's number."""


def options(item: Item) -> list[str]:
    """The two verbs, left to right: the good one's side follows the item's id (no bias)."""
    if item.choice is None:
        raise TracktaleError(f"item {item.item_id} has no pair of continuations")
    pair = [item.choice.good.strip(), item.choice.bad.strip()]
    return pair if int(item.item_id[-1], 16) % 2 == 0 else pair[::-1]


class ToyStudy(SingleTaskStudy):
    """Which word comes next (see the module docstring)."""

    paradigm = "toy"
    task = TASK
    study_id = "toy-agreement"
    title = "Which word comes next?"
    timing = {"reading_ms": 20_000, "response_ms": 10_000, "feedback_ms": 2_000}
    duration_minutes = 5
    trial_noun = "Sentence"
    documents = {
        "consent": "general_consent",
        "information": "general_information",
        "debrief": "general_debrief",
    }

    def item_problem(self, item: Item) -> str | None:
        """An item without its pair of verbs."""
        return "has no pair to choose from" if item.choice is None else None

    def served_content(self, item: Item, planned: PlannedTrial) -> dict[str, Any]:
        """The sentence start, the question and the two verbs (never which is right)."""
        shown = served(item, planned, item.context, {})
        del shown["parameters"]  # the shared choice screen reads probe and options
        return {**shown, "probe": item.question, "options": options(item)}

    def score_answer(self, item: Item, response: str) -> ScoredResponse:
        """The verb on the chosen side, right when it agrees (stored as the verb)."""
        if response not in SIDES:
            raise TracktaleError(f"a choice is left or right, got {response!r}")
        chosen = options(item)[SIDES.index(response)]
        correct = chosen == item.answer
        return ScoredResponse(chosen, correct, correct)

    def instructions(self, reading_ms: int, response_ms: int, source: str) -> dict[str, Any]:
        """The toy's three screens, and the screens every study shares."""
        return {
            "welcome": [
                "You will read the start of a sentence, then choose the word that comes next.",
            ],
            TASK: [
                f"You have {response_ms // 1000} seconds to choose: press F for the left word, "
                "J for the right one, or click it.",
            ],
            "main_start": ["The practice is over; there is no feedback from here on."],
            **session_screens(),
        }

    def behave(
        self,
        rng: random.Random,
        person: Any,
        item: Item,
        shown: Mapping[str, Any],
        timing: Mapping[str, int],
    ) -> dict[str, Any]:
        """A simulated person: right more often with a singular subject; guessing when careless."""
        reading = lognormal_ms(rng, 1500 * person.speed, 0.3)
        response_ms = lognormal_ms(rng, 1200 * person.speed, 0.3)
        chance = ACCURACY[str(item.condition["number"])] if person.attentive else 0.5
        right = rng.random() < chance
        good = shown["options"].index(item.answer)
        side = SIDES[good if right else 1 - good]
        return simulated_request(rng, person, shown, timing, (side, reading, response_ms))


STUDY = ToyStudy()
