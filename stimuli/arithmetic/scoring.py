r"""Scoring one model output: the paper's FAA, CAA, PAR, AP and SFB (Section 4.4).

**Extraction.** Every ``<answer>...</answer>`` span is found, tags matched case-insensitively.
An opening tag pairs with the next closing tag unless another opening tag comes first, in which
case the later one wins (so ``<answer><answer>7</answer></answer>`` yields ``7`` once);
a closing tag with no opening tag, and an opening tag never closed, yield nothing.

**Parsing** a span (surrounding whitespace removed) gives a number or nothing:

- decimal literals with optional sign, decimal point and exponent (``-12``, ``0.5``, ``.5``,
  ``3.``, ``1.2e-5``); integer literals are exact integers, the rest binary64 floats;
- thousands separators in the ``1,234,567.5`` pattern, and the minus sign U+2212;
- scientific notation written ``1.2 x 10^5`` with ``x``, ``×``, ``*``, ``·``, ``\times`` or
  ``\cdot``, the exponent optionally in braces or parentheses;
- ``inf``, ``infinity``, ``∞`` (with a sign) and ``nan``, in any case.

Anything else (``FINAL_RESULT``, ``S7``, ``3/4``, ``undefined``, an empty span) is unparseable.
Parseable spans are the answers. The paper scores "the first extracted answer": by default
(``correct``) that is the first ``<answer>`` span whatever it holds, so an echoed
``<answer>FINAL_RESULT</answer>`` before the real answer makes FAA wrong; ``correct_numeric``
takes the first *parseable* span instead (:data:`FIRST_ANSWER_RULES`). CAA, PAR and AP do not
depend on the rule (AP is the position of the first parseable span, as the paper defines it).

**Two references.** Every item holds the paper's executor's answer (``paper_reference``) and
ours (``reference``, IEEE ``inf``/``nan`` where the paper's code skips a step); FAA and CAA are
scored against both (columns without a suffix: the paper's; ``_ieee``: ours).

**Matching** (the paper's r(x) = round(x, 3)): an answer matches the reference when both
rounded to three decimals are equal, compared exactly (an integer with an integer exactly, a
float as the binary64 number it is). ``inf`` matches ``inf`` and ``-inf`` matches ``-inf``
(an answer like ``1e400`` overflows to ``inf`` when parsed and so matches an ``inf``
reference); a ``nan`` answer matches a ``nan`` reference, and nothing else matches ``nan``.

**Metrics** for one output:

- ``correct`` (FAA): the first answer matches; ``correct_any`` (CAA): some answer matches;
- ``parseable`` (PAR): at least one answer;
- ``answer_position`` (AP): 100 * p / L, with p the index of the whitespace-separated token
  in which the first answer's opening tag starts (the number of tokens wholly before it) and L
  the number of tokens in the output (``None`` without an answer). Whitespace tokens stand
  in for the model's tokenizer, which the scorer does not have; :func:`answer_position`
  takes a tokenizer's character offsets where one is available;
- ``generated_steps`` (G): occurrences of ``Step <number>`` (case-sensitive, so
  ``Final Step`` is not one) anywhere in the output, and ``step_following`` (SFB): ``under``,
  ``exact`` or ``over`` as G is below, equal to or above the item's number of steps.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from tracktale.schema.results import Judgement
from tracktale.stimuli.arithmetic.executor import Number, round3

_TAG = re.compile(r"<(/?)answer>", re.IGNORECASE)
# Each digit run can be matched one way only, so a long unparseable span fails in linear time.
_DECIMAL = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")
_INTEGER = re.compile(r"[+-]?\d+")
_GROUPED = re.compile(r"[+-]?\d{1,3}(?:,\d{3})+(?:\.\d*)?")
_TIMES_TEN = re.compile(
    r"([+-]?(?:\d+(?:\.\d*)?|\.\d+))\s*(?:[x×*·]|\\times|\\cdot)\s*10\s*\^\s*"
    r"(?:\{\s*([+-]?\d+)\s*\}|\(\s*([+-]?\d+)\s*\)|([+-]?\d+))"
)
_SPECIAL = re.compile(r"([+-]?)(inf|infinity|∞|nan)", re.IGNORECASE)
_STEP = re.compile(r"\bStep\s+\d+")


@dataclass(frozen=True)
class Span:
    """One ``<answer>`` span: where its opening tag starts, its text and its parsed value."""

    start: int
    text: str
    value: Number | None


def extract_spans(output: str) -> list[Span]:
    """Every ``<answer>...</answer>`` span of ``output``, in order (see the module docstring)."""
    spans = []
    opened: tuple[int, int] | None = None
    for tag in _TAG.finditer(output):
        if not tag[1]:
            opened = (tag.start(), tag.end())
        elif opened is not None:
            text = output[opened[1] : tag.start()]
            spans.append(Span(opened[0], text, parse_number(text)))
            opened = None
    return spans


def parse_number(text: str) -> Number | None:
    """The number a span states, or ``None`` (see the module docstring for the grammar)."""
    text = text.strip().replace("\u2212", "-")
    if _GROUPED.fullmatch(text):
        text = text.replace(",", "")
    if _DECIMAL.fullmatch(text):
        # Python refuses to convert integer strings past 4,300 digits; as a float such a
        # literal is inf, which is what it is in binary64.
        exact = _INTEGER.fullmatch(text) and len(text) < 4000
        return int(text) if exact else float(text)
    scientific = _TIMES_TEN.fullmatch(text)
    if scientific:
        exponent = next(group for group in scientific.groups()[1:] if group is not None)
        return float(f"{scientific[1]}e{exponent}")
    special = _SPECIAL.fullmatch(text)
    if special:
        if special[2].lower() == "nan":
            return math.nan
        return -math.inf if special[1] == "-" else math.inf
    return None


def values_match(answer: Number, reference: Number) -> bool:
    """Whether ``answer`` matches ``reference`` after rounding both to three decimals."""
    if reference != reference:
        return answer != answer
    if answer != answer:
        return False
    return round3(answer) == round3(reference)


def answer_position(
    output: str, start: int, offsets: Sequence[tuple[int, int]] | None = None
) -> float:
    """AP of an answer whose opening tag starts at character ``start``, in percent.

    Args:
        output: The whole generated text.
        start: Character offset of the first answer's opening tag.
        offsets: ``(start, end)`` character offsets of the output's tokens from the model's
            tokenizer; whitespace-separated tokens when ``None``.

    Returns:
        100 * p / L: p is the index of the token in which the tag starts (the number of tokens
        wholly before it), L the number of tokens.
    """
    if offsets is None:
        before = output[:start]
        index = len(before.split())
        if before and not before[-1].isspace():
            index -= 1  # the tag starts inside that token ("is<answer>...")
        total = len(output.split())
    else:
        index = sum(1 for _, token_end in offsets if token_end <= start)
        total = len(offsets)
    return 100.0 * index / total if total else 0.0


def step_following(generated: int, expected: int) -> Literal["under", "exact", "over"]:
    """SFB: ``under``, ``exact`` or ``over`` execution."""
    if generated < expected:
        return "under"
    return "exact" if generated == expected else "over"


REFERENCES = ("paper", "ieee")
"""``paper``: the paper's executor (a step that raises is skipped; see :mod:`.paper_executor`);
``ieee``: ours (division by zero and overflow give IEEE ``inf``/``nan``)."""
FIRST_ANSWER_RULES = ("span", "numeric")
"""``span``: the first extracted ``<answer>`` span, wrong when it is not a number (the paper's
words); ``numeric``: the first span that parses as a number (ours, the earlier default)."""


def faa_column(reference: str = "paper", rule: str = "span") -> str:
    """The result column holding FAA under a reference and a first-answer rule.

    Raises:
        TracktaleError: For an unknown reference or rule.
    """
    _check_choice(reference, rule)
    return "correct" + ("_numeric" if rule == "numeric" else "") + _suffix(reference)


def caa_column(reference: str = "paper") -> str:
    """The result column holding CAA (any answer right) under a reference."""
    _check_choice(reference, "span")
    return "correct_any" + _suffix(reference)


def _suffix(reference: str) -> str:
    return "" if reference == "paper" else f"_{reference}"


def _check_choice(reference: str, rule: str) -> None:
    from tracktale.errors import TracktaleError

    if reference not in REFERENCES:
        raise TracktaleError(f"unknown reference {reference!r} (choose from paper, ieee)")
    if rule not in FIRST_ANSWER_RULES:
        raise TracktaleError(f"unknown first-answer rule {rule!r} (choose from span, numeric)")


@dataclass(frozen=True, kw_only=True)
class ArithmeticJudgement(Judgement):
    """One output as :func:`score_output` judges it (``correct`` is FAA; see the module).

    Attributes:
        correct_any: CAA against the paper's executor's answer.
        correct_numeric: FAA under the first-numeric-span rule.
        correct_ieee: FAA against our IEEE reference (``correct_any_ieee``,
            ``correct_numeric_ieee``: the others against it).
        parseable: PAR: at least one answer.
        answer_position: AP (``None`` without an answer).
        generated_steps: Steps in the output.
        expected_steps: The item's steps.
        step_following: SFB.
        n_spans: Tagged spans.
        n_answers: Parseable spans.
        first_answer: The first span's text, stripped.
        first_numeric_answer: The first parseable span's text, stripped.
        first_answer_rules_differ: The two first-answer rules pick different spans.
    """

    correct_any: bool
    correct_numeric: bool
    correct_ieee: bool
    correct_any_ieee: bool
    correct_numeric_ieee: bool
    parseable: bool
    answer_position: float | None
    generated_steps: int
    expected_steps: int
    step_following: Literal["under", "exact", "over"]
    n_spans: int
    n_answers: int
    first_answer: str | None
    first_numeric_answer: str | None
    first_answer_rules_differ: bool


def score_output(
    output: str,
    reference: Number,
    expected_steps: int,
    *,
    ieee_reference: Number | None = None,
) -> ArithmeticJudgement:
    """The paper's five metrics for one output (see the module docstring), both ways.

    Args:
        output: The generated text (without the prompt).
        reference: The item's paper-executor reference (full precision).
        expected_steps: The item's number of steps.
        ieee_reference: Our IEEE reference; ``None``: the same as ``reference``.

    Returns:
        The :class:`ArithmeticJudgement`: ``correct`` (FAA: the first extracted span matches
        ``reference``), ``correct_any`` (CAA), the same against ``ieee_reference``
        (``correct_ieee``, ``correct_any_ieee``), FAA under the first-*numeric*-span rule
        (``correct_numeric``, ``correct_numeric_ieee``), ``parseable`` (PAR),
        ``answer_position`` (AP, or ``None``), ``generated_steps``, ``expected_steps``,
        ``step_following`` (SFB), ``n_spans`` (all tagged spans), ``n_answers`` (parseable
        ones), ``first_answer`` (the first span's text, stripped, or ``None``),
        ``first_numeric_answer`` (the first parseable span's text) and
        ``first_answer_rules_differ`` (the first span is not a number but a later one is: the
        two rules pick different answers).
    """
    spans = extract_spans(output)
    answers = [span for span in spans if span.value is not None]
    first_span = spans[0] if spans else None
    first = answers[0] if answers else None
    generated = len(_STEP.findall(output))
    ieee = reference if ieee_reference is None else ieee_reference
    answer_values = [span.value for span in answers if span.value is not None]
    return ArithmeticJudgement(
        correct=_matches(first_span, reference),
        correct_any=any(values_match(found, reference) for found in answer_values),
        correct_numeric=_matches(first, reference),
        correct_ieee=_matches(first_span, ieee),
        correct_any_ieee=any(values_match(found, ieee) for found in answer_values),
        correct_numeric_ieee=_matches(first, ieee),
        parseable=first is not None,
        answer_position=None if first is None else answer_position(output, first.start),
        generated_steps=generated,
        expected_steps=expected_steps,
        step_following=step_following(generated, expected_steps),
        n_spans=len(spans),
        n_answers=len(answers),
        first_answer=None if first_span is None else first_span.text.strip(),
        first_numeric_answer=None if first is None else first.text.strip(),
        first_answer_rules_differ=first is not None and first is not first_span,
    )


def _matches(span: Span | None, reference: Number) -> bool:
    return span is not None and span.value is not None and values_match(span.value, reference)
