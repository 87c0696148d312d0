"""The narrative entity-tracking study (the source paper's procedure, our list design).

Everything here is the study as it was before paradigms were pluggable: the Latin-square
lists of :mod:`..design`, the trial content and scoring of :mod:`..scoring`, the
instructions of :mod:`..instructions` and the simulated readers of :mod:`..simulate`.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

from tracktale.errors import TracktaleError
from tracktale.experiment.paradigms import HumanStudy
from tracktale.experiment.study import scoring
from tracktale.experiment.study.design import DesignConfig, PlannedTrial, SessionPlan
from tracktale.experiment.study.design import build_session as latin_square_session
from tracktale.experiment.study.instructions import instructions, word_by_word_welcome
from tracktale.item import Item
from tracktale.stimulus_set import StimulusSet


class NarrativeStudy(HumanStudy):
    """Short stories, an explicit (typed) and an implicit (two-choice) block, fillers."""

    paradigm = "narrative"
    study_id = "narrative-entity-tracking"
    title = "Reading short stories"
    timing = {"reading_ms": 40_000, "response_ms": 15_000, "feedback_ms": 2_500}
    paper_timing = {"reading_ms": 40_000, "response_ms": 15_000}
    lab = True

    def check_stimuli(self, stimulus_set: StimulusSet, design: DesignConfig, where: str) -> None:
        """Main items, explicit and implicit forms, filler questions, enough practice."""
        for item in stimulus_set:
            if item.role in ("main", "practice") and (not item.question or item.choice is None):
                raise TracktaleError(
                    f"{where}: item {item.item_id} lacks an explicit or implicit form"
                )
            if item.role == "filler" and (item.choice is None or not item.choice.question):
                raise TracktaleError(
                    f"{where}: filler {item.item_id} has no comprehension question"
                )
        self.build_session(stimulus_set, "L1", 0, design)  # raises if it cannot be built

    def build_session(
        self, stimulus_set: StimulusSet, list_id: str, session_seed: int, design: DesignConfig
    ) -> SessionPlan:
        """The Latin square of :func:`tracktale.experiment.study.design.build_session`."""
        return latin_square_session(stimulus_set, list_id, session_seed, design)

    def served_content(self, item: Item, planned: PlannedTrial) -> dict[str, Any]:
        """Story, probe and (two-alternative trials) the options."""
        return scoring.served_content(item, planned)

    def score_trial(
        self, item: Item, planned: PlannedTrial, response: str | None, rule: str
    ) -> scoring.ScoredResponse:
        """Typed answers by the paradigm's rule, choices by the planned side."""
        return scoring.score_trial(item, planned, response, rule)

    def practice_feedback(
        self, item: Item, planned: PlannedTrial, correct: bool, timed_out: bool
    ) -> dict[str, Any]:
        """The answer word, or the side of the good continuation."""
        return scoring.practice_feedback(item, planned, correct, timed_out)

    def instructions(self, reading_ms: int, response_ms: int, source: str) -> dict[str, Any]:
        """The texts of :func:`tracktale.experiment.study.instructions.instructions`."""
        return instructions(reading_ms, response_ms, source=source)

    def word_by_word_instructions(
        self, screens: dict[str, Any], reading_ms: int, mode: str, redo: bool
    ) -> dict[str, Any]:
        """The welcome screen says how the stories are read: dashes and SPACE, or the Maze."""
        return {
            **screens,
            "welcome": word_by_word_welcome(screens["welcome"], reading_ms, mode, redo),
        }

    def behave(
        self,
        rng: random.Random,
        person: Any,
        item: Item,
        shown: Mapping[str, Any],
        timing: Mapping[str, int],
    ) -> dict[str, Any]:
        """The simulated readers of :func:`tracktale.experiment.simulation.run.behave`."""
        from tracktale.experiment.simulation.run import behave

        return behave(rng, person, item, dict(shown), dict(timing))


STUDY = NarrativeStudy()
