"""Answers people type, scored by the same code as the models' outputs.

A participant types a number into a box; a model writes ``<answer>...</answer>``. Both are
judged by :func:`~.scoring.score_output`, so FAA, CAA and PAR of people and models come from
one definition: :func:`parse_typed_answer` reads what a person typed into a number (or finds
none), and :func:`score_typed_answer` hands the number to the model scorer as the single
tagged answer of an output. What a person types, beyond the model grammar of
:func:`~.scoring.parse_number`:

- surrounding whitespace of any kind, and a final full stop (``42.`` is 42 either way);
- thousands separators: ``1,234``, ``1 234`` (space, no-break or thin space), ``1'234``;
- a decimal comma where the comma cannot be a thousands separator (``2,5`` is 2.5; ``2,500``
  is 2500, as an English-language study reads it), marked ``decimal_comma``;
- minus signs typed as U+2212 or an en dash;
- ``inf``, ``infinity``, ``∞`` with a sign; ``undefined``, ``nan``, ``not a number`` mean NaN
  (the value our IEEE executor gives where a procedure's result is undefined).

Anything else (``abc``, ``12 apples``, ``3/4``, a blank) is *unparseable*: no number, scored
incorrect and flagged, never an exception.
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from tracktale.stimuli.arithmetic.executor import Number, execute_context, format_value
from tracktale.stimuli.arithmetic.scoring import parse_number, values_match

STATUSES = ("number", "decimal_comma", "infinite", "undefined", "unparseable", "blank")
"""How a typed answer was read (``TypedAnswer.status``)."""
MAX_TYPED_CHARS = 200
"""Longer answers are not numbers a person typed; they are unparseable without parsing."""

_GROUP_SEPARATORS = re.compile(r"(?<=\d)[ \u00a0\u2009\u202f'](?=\d{3}(?:\D|$))")
_SPACED_GROUPS = re.compile(r"[+-]?\d{1,3}(?:[ \u00a0\u2009\u202f']\d{3})+(?:\.\d*)?")
_DECIMAL_COMMA = re.compile(r"([+-]?\d+),(\d{1,2}|\d{4,})")
_UNDEFINED = {"undefined", "nan", "not a number", "+nan", "-nan"}
_MINUS = str.maketrans({"\u2212": "-", "\u2013": "-"})


@dataclass(frozen=True)
class TypedAnswer:
    """A typed answer as read.

    Attributes:
        text: What was typed, as given.
        value: The number it states, or ``None`` (unparseable or blank).
        status: One of :data:`STATUSES`.
    """

    text: str
    value: Number | None
    status: str

    @property
    def canonical(self) -> str | None:
        """The value as the model scorer reads it (``42``, ``2.5``, ``inf``, ``nan``)."""
        return None if self.value is None else format_value(self.value)


def parse_typed_answer(text: Any) -> TypedAnswer:
    """Read a typed answer (see the module docstring); never raises."""
    if not isinstance(text, str):
        return TypedAnswer("" if text is None else repr(text), None, "unparseable")
    cleaned = text.strip().translate(_MINUS)
    if not cleaned:
        return TypedAnswer(text, None, "blank")
    if len(cleaned) > MAX_TYPED_CHARS:
        return TypedAnswer(text, None, "unparseable")
    lowered = " ".join(cleaned.lower().split())
    if lowered.endswith(".") and not lowered[-2:-1].isdigit():
        lowered = lowered[:-1].rstrip()  # "undefined." ("42." is a number as it is)
    if lowered in _UNDEFINED:
        return TypedAnswer(text, math.nan, "undefined")
    if _SPACED_GROUPS.fullmatch(lowered):
        lowered = _GROUP_SEPARATORS.sub("", lowered)
    status = "number"
    comma = _DECIMAL_COMMA.fullmatch(lowered)
    if comma:
        lowered, status = f"{comma[1]}.{comma[2]}", "decimal_comma"
    try:
        value = parse_number(lowered)
    except (ValueError, OverflowError):  # pragma: no cover - parse_number's grammar refuses these
        value = None
    if value is None:
        return TypedAnswer(text, None, "unparseable")
    if value != value:
        return TypedAnswer(text, value, "undefined")
    if math.isinf(value):
        return TypedAnswer(text, value, "infinite")
    return TypedAnswer(text, value, status)


def score_typed_answer(scorer: Any, item: Any, text: Any) -> dict[str, Any]:
    """Score a typed answer with the paradigm's model scorer.

    Args:
        scorer: The arithmetic paradigm (its ``score_response`` scores model outputs).
        item: The item answered.
        text: What the participant typed.

    Returns:
        The model scorer's FAA/CAA/PAR columns (``correct``, ``correct_any``,
        ``correct_ieee``, ``parseable``, ...) for an output whose one tagged answer is the
        typed number, plus ``typed_answer`` (as typed), ``parsed_answer`` (the number read, or
        ``None``), ``answer_status`` and ``unparseable``. The columns about a generated trace
        (answer position, generated steps, step following) are ``None``: a typed answer has
        no trace.
    """
    typed = parse_typed_answer(text)
    output = "" if typed.canonical is None else f"<answer>{typed.canonical}</answer>"
    scores = dataclasses.asdict(scorer.score_response(item, output))
    for trace_column in ("answer_position", "generated_steps", "step_following"):
        scores[trace_column] = None
    return {
        **scores,
        "typed_answer": typed.text,
        "parsed_answer": typed.canonical,
        "answer_status": typed.status,
        "unparseable": typed.value is None,
    }


def score_intermediates(context: str, typed: Mapping[str, Any]) -> dict[str, Any]:
    """Score probed intermediate values (``{"S3": "11", ...}``) against the procedure's own.

    The reference is our executor's value of each variable (for addition and subtraction of
    integers, the only operations of the human protocol, both executors agree).

    Returns:
        ``intermediate_correct`` (variable -> bool, for the variables given),
        ``intermediate_accuracy`` (their mean, ``None`` when none was given) and
        ``first_wrong_variable`` (the earliest wrong or unparseable one, or ``None``).
    """
    values = execute_context(context).values
    judged: dict[str, bool] = {}
    for name in sorted(typed, key=_variable_index):
        index = _variable_index(name)
        if not 1 <= index <= len(values):
            continue
        answer = parse_typed_answer(typed[name]).value
        judged[name] = answer is not None and values_match(answer, values[index - 1])
    wrong = [name for name, right in judged.items() if not right]
    return {
        "intermediate_correct": judged,
        "intermediate_accuracy": sum(judged.values()) / len(judged) if judged else None,
        "first_wrong_variable": wrong[0] if wrong else None,
    }


def _variable_index(name: str) -> int:
    match = re.fullmatch(r"S([1-9]\d{0,4})", name) if isinstance(name, str) else None
    return int(match[1]) if match else 0
