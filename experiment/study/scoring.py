"""What a trial shows and how its response is scored: shared by every front end.

The browser study and the lab mode present a planned trial with :func:`present_trial` and
score what the participant did with :func:`score_trial`. Texts come from the item as the
stimulus set stores them; typed answers are scored by the item's paradigm
(``score_response``) under one of :data:`TYPED_RULES`, choices by the planned side of the good
option. The answer never leaves the server except as practice feedback, after the answer
(:func:`practice_feedback`); the browser is served :func:`served_content`, which has none.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tracktale.errors import TracktaleError
from tracktale.experiment.study.design import PlannedTrial
from tracktale.item import Item
from tracktale.stimuli.registry import get_paradigm

IMPLICIT_QUESTION = "Which sentence continues the story?"
"""The prompt above the two continuations of an implicit trial."""
SIDES = ("left", "right")
MAX_TYPED_LENGTH = 200
TYPED_RULES = ("one-answer", "contains")
"""How a typed answer is scored in the human study:

- ``one-answer`` (our default for people; the paper does not say how it scored typed human
  answers): the paradigm's judgement, and incorrect when the response names more than one
  candidate answer (``several_answers``), so that ``box bag basket drawer`` is not correct.
- ``contains``: the paradigm's judgement alone (for narrative items the paper's rule for model
  outputs: the response contains the target word).

Both judgements are stored (``correct`` and ``correct_paper_rule``) whichever is chosen."""


@dataclass(frozen=True)
class ScoredResponse:
    """A response as stored: the text (typed, or the chosen option's text) and correctness.

    Attributes:
        response: The typed text, or the chosen option's text; ``None`` after a timeout.
        correct: By the study's rule.
        correct_paper_rule: By the paradigm's own ``score_response`` (for choices: the same).
        flags: Names from :data:`tracktale.trial.TRIAL_FLAGS` the scoring raised.
    """

    response: str | None
    correct: bool
    correct_paper_rule: bool | None = None
    flags: tuple[str, ...] = ()


def options(item: Item, planned: PlannedTrial) -> tuple[str, str]:
    """The two option texts as they appear left and right (exactly as the item stores them).

    Raises:
        TracktaleError: If the trial is not a two-alternative trial or the item has no choice.
    """
    if planned.good_side not in SIDES or item.choice is None:
        raise TracktaleError(f"trial {planned.trial_index} is not a two-alternative trial")
    good, bad = item.choice.good, item.choice.bad
    return (good, bad) if planned.good_side == "left" else (bad, good)


def present_trial(item: Item, planned: PlannedTrial) -> dict[str, Any]:
    """What the participant is shown for a planned trial (no answer, except in practice).

    Returns:
        ``index``, ``block``, ``task``, ``role``, ``item_id``, ``story``, ``probe`` and, for
        two-alternative trials, ``options`` (left, right; leading spaces removed for display);
        practice trials add ``feedback`` (``answer`` or ``good_side``) for the feedback screen.
    """
    if item.item_id != planned.item_id:
        raise TracktaleError(f"trial {planned.trial_index} plans item {planned.item_id}")
    shown: dict[str, Any] = {
        "index": planned.trial_index,
        "block": planned.block,
        "task": planned.task,
        "role": planned.role,
        "item_id": item.item_id,
        "story": item.context,
    }
    if planned.task == "explicit":
        if not item.question:
            raise TracktaleError(f"item {item.item_id} has no explicit question")
        shown["probe"] = item.question
    else:
        if planned.task == "comprehension":
            question = item.choice.question if item.choice else None
            if not question:
                raise TracktaleError(f"filler {item.item_id} has no comprehension question")
        else:
            question = IMPLICIT_QUESTION
        shown["probe"] = question
        shown["options"] = [text.strip() for text in options(item, planned)]
    if planned.role == "practice":
        shown["feedback"] = (
            {"answer": item.answer}
            if planned.task == "explicit"
            else {"good_side": planned.good_side}
        )
    return shown


def served_content(item: Item, planned: PlannedTrial) -> dict[str, Any]:
    """What the browser is sent when a trial starts: :func:`present_trial` without feedback."""
    shown = present_trial(item, planned)
    shown.pop("feedback", None)
    return shown


def score_trial(
    item: Item, planned: PlannedTrial, response: str | None, rule: str = "one-answer"
) -> ScoredResponse:
    """Score a response to a planned trial.

    Args:
        item: The item shown.
        planned: The planned trial (its task and good side).
        response: Typed text for explicit trials, ``"left"``/``"right"`` for two-alternative
            trials, ``None`` after a timeout (always incorrect).
        rule: One of :data:`TYPED_RULES` (typed answers only).

    Returns:
        The stored response (typed text, or the chosen option's text), its correctness by
        the rule and by the paradigm's own judgement, and the flags scoring raised.

    Raises:
        TracktaleError: If a two-alternative response is not a side, or the rule is unknown.
    """
    if rule not in TYPED_RULES:
        raise TracktaleError(f"unknown typed-answer rule {rule!r} (choose from {TYPED_RULES})")
    if response is None:
        return ScoredResponse(None, False, False)
    if planned.task == "explicit":
        text = response.strip()[:MAX_TYPED_LENGTH]
        judged = get_paradigm(item.paradigm).score_response(item, text)
        paper = judged.correct
        # A paradigm whose judgement counts the answers named (the narrative one) flags several.
        several = bool(getattr(judged, "several_answers", False))
        correct = paper and not (several and rule == "one-answer")
        return ScoredResponse(text, correct, paper, ("several_answers",) if several else ())
    if response not in SIDES:
        raise TracktaleError(f"a choice must be 'left' or 'right', got {response!r}")
    chosen = options(item, planned)[SIDES.index(response)]
    correct = response == planned.good_side
    return ScoredResponse(chosen, correct, correct)


def practice_feedback(item: Item, planned: PlannedTrial, correct: bool, timed_out: bool) -> dict:
    """The verdict a practice trial's feedback screen shows, by the server's scoring."""
    if planned.task == "explicit":
        return {"correct": correct, "timed_out": timed_out, "answer": item.answer}
    return {"correct": correct, "timed_out": timed_out, "good_side": planned.good_side}
