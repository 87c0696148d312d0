"""The toy paradigm's human study: read the sentence start, choose the next word.

It reuses the shared pieces a study with one task is built of
(:mod:`tracktale.experiment.paradigms.single_task`: practice with feedback, then every main
item in a new random order for each participant) and the shared forced-choice screen
(``jsPsychTimedChoice``, what a task not in :attr:`HumanStudy.trial_plugins` is shown with):
the served trial's ``probe`` and ``options``, answered ``left`` or ``right``.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

from tracktale.errors import TracktaleError
from tracktale.experiment.paradigms import HumanStudy
from tracktale.experiment.paradigms.single_task import practice_then_main, served, simulated_request
from tracktale.experiment.simulation.run import lognormal_ms
from tracktale.experiment.study.design import DesignConfig, PlannedTrial, SessionPlan
from tracktale.experiment.study.instructions import session_screens
from tracktale.experiment.study.scoring import SIDES, ScoredResponse
from tracktale.item import Item
from tracktale.stimulus_set import StimulusSet

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


class ToyStudy(HumanStudy):
    """Which word comes next (see the module docstring)."""

    paradigm = "toy"
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

    def check_stimuli(self, stimulus_set: StimulusSet, design: DesignConfig, where: str) -> None:
        """Every item has its pair, and the set enough practice."""
        for item in stimulus_set:
            if item.choice is None:
                raise TracktaleError(f"{where}: item {item.item_id} has no pair to choose from")
        self.build_session(stimulus_set, "L1", 0, design)

    def build_session(
        self, stimulus_set: StimulusSet, list_id: str, session_seed: int, design: DesignConfig
    ) -> SessionPlan:
        """Practice (block 0), then every main item in a random order (block 1)."""
        main = stimulus_set.select(role="main")
        return practice_then_main(stimulus_set, main, TASK, (list_id, session_seed, design))

    def served_content(self, item: Item, planned: PlannedTrial) -> dict[str, Any]:
        """The sentence start, the question and the two verbs (never which is right)."""
        shown = served(item, planned, item.context, {})
        del shown["parameters"]  # the shared choice screen reads probe and options
        return {**shown, "probe": item.question, "options": options(item)}

    def score_trial(
        self, item: Item, planned: PlannedTrial, response: str | None, rule: str
    ) -> ScoredResponse:
        """The verb on the chosen side, right when it agrees (stored as the verb)."""
        if response is None:
            return ScoredResponse(None, False, False)
        if response not in SIDES:
            raise TracktaleError(f"a choice is left or right, got {response!r}")
        chosen = options(item)[SIDES.index(response)]
        correct = chosen == item.answer
        return ScoredResponse(chosen, correct, correct)

    def practice_feedback(
        self, item: Item, planned: PlannedTrial, correct: bool, timed_out: bool
    ) -> dict[str, Any]:
        """The verdict and the agreeing verb."""
        return {"correct": correct, "timed_out": timed_out, "answer": item.answer}

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
