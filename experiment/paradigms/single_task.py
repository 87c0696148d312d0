"""What the human studies with one trial task share (arithmetic procedures, boxes grids).

Their sessions have one shape: a practice block (block 0), then the list's main trials in a
random order (block 1), all of one task; every trial is served with the same head fields
before its paradigm's own; and a simulated participant's request carries the same times,
screen and attention counts around the paradigm's answer. :class:`SingleTaskStudy` declares
that shape once, so that a new paradigm's study with one task writes only what is its own.
"""

from __future__ import annotations

import abc
import random
from collections.abc import Mapping
from typing import Any, ClassVar

from tracktale.errors import TracktaleError
from tracktale.experiment.paradigms import HumanStudy
from tracktale.experiment.study.design import DesignConfig, PlannedTrial, SessionPlan
from tracktale.experiment.study.scoring import ScoredResponse
from tracktale.item import Item
from tracktale.stimulus_set import StimulusSet


def practice_then_main(
    stimulus_set: StimulusSet,
    main: list[Item],
    task: str,
    plan: tuple[str, int, DesignConfig],
    *,
    stream: str = "",
    missing_hint: str = "",
) -> SessionPlan:
    """Practice block (block 0), then ``main`` in a random order (block 1), every trial ``task``.

    Args:
        stimulus_set: The set whose practice items come first, in the set's order.
        main: The list's main items (shuffled in place).
        task: The one trial task.
        plan: The list id, the participant's session seed and the design.
        stream: Appended to the shuffle's seed string (the paradigm's own order stream).
        missing_hint: Appended to the error when the set has too few practice items.

    Raises:
        TracktaleError: If the set has fewer practice items than the design asks for.
    """
    list_id, session_seed, design = plan
    practice = stimulus_set.select(role="practice")
    if len(practice) < design.practice_per_format:
        raise TracktaleError(
            f"the design needs {design.practice_per_format} practice items; "
            f"the stimulus set has {len(practice)}{missing_hint}"
        )
    random.Random(f"session|{design.seed}|{session_seed}{stream}").shuffle(main)
    order = [(item, 0) for item in practice[: design.practice_per_format]]
    order += [(item, 1) for item in main]
    trials = tuple(
        PlannedTrial(index, item.item_id, item.role, task, block, None)
        for index, (item, block) in enumerate(order)
    )
    return SessionPlan(list_id, design.seed, session_seed, (task, task), trials)


def served(
    item: Item, planned: PlannedTrial, story: str, parameters: Mapping[str, Any]
) -> dict[str, Any]:
    """A served trial: its place in the session, the text to read and the plugin's parameters.

    Raises:
        TracktaleError: If ``item`` is not the planned trial's item.
    """
    if item.item_id != planned.item_id:
        raise TracktaleError(f"trial {planned.trial_index} plans item {planned.item_id}")
    return {
        "index": planned.trial_index,
        "block": planned.block,
        "task": planned.task,
        "role": planned.role,
        "item_id": item.item_id,
        "story": story,
        "parameters": dict(parameters),
    }


def simulated_request(
    rng: random.Random,
    person: Any,
    shown: Mapping[str, Any],
    timing: Mapping[str, int],
    answer: tuple[Any, float, float],
) -> dict[str, Any]:
    """A simulated participant's trial request around the paradigm's answer.

    Args:
        rng: The participant's stream (two draws: a blur, a hidden page).
        person: The simulated person (its ``screen``).
        shown: The served trial.
        timing: The study's time limits.
        answer: The response (``None`` after a timeout), the reading time and the response
            time drawn, in ms.
    """
    response, reading_ms, response_ms = answer
    timed_out = response_ms >= timing["response_ms"]
    return {
        "trial_index": shown["index"],
        "item_id": shown["item_id"],
        "task": shown["task"],
        "response": None if timed_out else response,
        "timed_out": timed_out,
        "reading_time_ms": min(reading_ms, float(timing["reading_ms"])),
        "reading_timed_out": reading_ms >= timing["reading_ms"],
        "response_time_ms": None if timed_out else response_ms,
        "screen_width": person.screen[0],
        "screen_height": person.screen[1],
        "blur_count": int(rng.random() < 0.03),
        "hidden_count": int(rng.random() < 0.02),
    }


class SingleTaskStudy(HumanStudy):
    """A human study of one trial task: practice with feedback, then the main trials.

    Its sessions are :func:`practice_then_main` over :meth:`main_items`; its stimuli are
    checked item by item (:meth:`item_problem`) and by building every list; an unanswered
    trial is wrong and an answer is judged by :meth:`score_answer`; practice feedback gives
    the verdict and the item's answer. What remains to a paradigm is what the participant
    sees and does: :meth:`served_content`, :meth:`score_answer`, :meth:`instructions` and
    :meth:`behave`.
    """

    task: ClassVar[str]
    """The one trial task (``implicit``, ``explicit``, or the paradigm's own)."""
    order_stream: ClassVar[str] = ""
    """Appended to the main trials' shuffle seed (:func:`practice_then_main`'s ``stream``)."""
    missing_practice_hint: ClassVar[str] = ""
    """Appended to the error of a set with too few practice items."""

    def main_items(
        self, stimulus_set: StimulusSet, list_id: str, design: DesignConfig
    ) -> list[Item]:
        """The main items of list ``list_id`` (by default every main item, on every list)."""
        return stimulus_set.select(role="main")

    def item_problem(self, item: Item) -> str | None:
        """What makes ``item`` unfit for the study (``None``: nothing)."""
        return None

    def check_stimuli(self, stimulus_set: StimulusSet, design: DesignConfig, where: str) -> None:
        """Every item fit for the study (:meth:`item_problem`), every list buildable."""
        for item in stimulus_set:
            problem = self.item_problem(item)
            if problem is not None:
                raise TracktaleError(f"{where}: item {item.item_id} {problem}")
        for list_id in self.list_ids(stimulus_set):
            self.build_session(stimulus_set, list_id, 0, design)

    def build_session(
        self, stimulus_set: StimulusSet, list_id: str, session_seed: int, design: DesignConfig
    ) -> SessionPlan:
        """Practice (block 0), then the list's main items in a random order (block 1)."""
        return practice_then_main(
            stimulus_set,
            self.main_items(stimulus_set, list_id, design),
            self.task,
            (list_id, session_seed, design),
            stream=self.order_stream,
            missing_hint=self.missing_practice_hint,
        )

    def score_trial(
        self, item: Item, planned: PlannedTrial, response: str | None, rule: str
    ) -> ScoredResponse:
        """An unanswered trial is wrong; an answer is judged by :meth:`score_answer`."""
        if response is None:
            return ScoredResponse(None, False, False)
        return self.score_answer(item, response)

    @abc.abstractmethod
    def score_answer(self, item: Item, response: str) -> ScoredResponse:
        """The stored response and its judgement (by the paradigm's ``score_response``, say)."""

    def practice_feedback(
        self, item: Item, planned: PlannedTrial, correct: bool, timed_out: bool
    ) -> dict[str, Any]:
        """The verdict and the item's answer."""
        return {"correct": correct, "timed_out": timed_out, "answer": item.answer}
