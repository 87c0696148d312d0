r"""Parsing a free-text answer into states, and the source paper's State-EM and Step-EM.

Models do not always keep the demonstrated format, so answers are parsed with a tolerant regular
expression, as in the source paper's Appendix D. Their expression (as in the authors' released
code; the paper's typesetting lost its hyphen) was::

    ([a-zA-Z0-9]+)\(([a-zA-Z0-9]+-\d)\)=(True|true|False|false)

Ours (:data:`TRIPLE`, case-insensitive) extracts the same (functor, argument, truth value)
triples and also accepts white space around the parentheses, the hyphen and the sign,
multi-digit indices (their ``\d`` read at most box 9), ``==`` or ``:`` for ``=``, any letter
case in the truth value, and underscores in names. Before matching, the response is stripped
and a leading ``Answer:`` label is dropped; the answer starts at the first triple (so a preamble
such as ``Sure, here are the states.`` and an ``Answer:`` label on the next line are passed
over), and the text is cut where the model starts another round *after* that (a line beginning
``Step-N``, ``Question:``, ``Answer:`` or ``Instructions:``), as base models continuing the
pattern do. Chatter around the answer holds no triple and does not count.

A triple counts for a queried state when its functor and argument name match the item's
vocabulary ignoring case (synthetic words are distinct even ignoring case) and its index exists;
any other triple is an *extra* state. A state given twice with the same value counts once; given
with both values it is a *conflict* and counts as wrong.

- **State-EM** = matched states / queried states (the paper's Equation 1).
- **Step-EM** = 1 when every queried state is predicted correctly and nothing else is predicted
  (no extra or conflicting states: matched = ground truth = predicted, Equation 2), else 0.

Two rules of the authors' released code differ from ours and are options
(:class:`ScoringRules`): their parse keys a state by its argument alone, so a wrong functor on
the right argument (``OBTAINED(BOX-3)=True``) counts as that box's state (``functor="any"``;
ours: ``strict``, an extra state); and an answer with no triple at all or with one state given
both values raises in their parser, so the whole step scores as unparsed: State-EM 0, and the
step left out of the transition analysis (``unparsed="whole-step"``; ours: ``per-state``, each
missing or conflicting state marked on its own, the others scored).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Annotated, Any

from tracktale.schema.results import SAMPLE_MEAN, Judgement

TRIPLE = re.compile(
    r"([A-Za-z0-9_]+)\s*\(\s*([A-Za-z0-9_]+)\s*-\s*(\d+)\s*\)\s*(?:==?|:)\s*(true|false)\b",
    re.IGNORECASE,
)
"""Functor, argument name, argument index, truth value."""
_LABEL = re.compile(r"^\s*answer\s*:\s*", re.IGNORECASE)
_NEXT_ROUND = re.compile(r"\n\s*(?:step\s*-\s*\d+|question\s*:|answer\s*:|instructions\s*:)", re.I)
MISSING, CONFLICT = "?", "!"
FUNCTOR_RULES = ("strict", "any")
UNPARSED_RULES = ("per-state", "whole-step")


@dataclass(frozen=True)
class ScoringRules:
    """Where our scoring and the authors' code differ (see the module docstring).

    Attributes:
        functor: ``strict`` (ours): a triple counts for a state only with that state's functor;
            ``any`` (the authors' code): the argument alone decides.
        unparsed: ``per-state`` (ours): missing and conflicting states are marked one by one;
            ``whole-step`` (the authors' code): no triple, or a conflict, makes the whole answer
            unparsed.
    """

    functor: str = "strict"
    unparsed: str = "per-state"

    def __post_init__(self) -> None:
        from tracktale.errors import TracktaleError

        if self.functor not in FUNCTOR_RULES:
            raise TracktaleError(
                f"boxes functor rule {self.functor!r} is not one of {', '.join(FUNCTOR_RULES)}"
            )
        if self.unparsed not in UNPARSED_RULES:
            raise TracktaleError(
                f"boxes unparsed rule {self.unparsed!r} is not one of {', '.join(UNPARSED_RULES)}"
            )


DEFAULT_RULES = ScoringRules()


@dataclass
class ParsedAnswer:
    """The states found in a response.

    Attributes:
        values: Query position -> predicted truth value, for states given consistently.
        conflicts: Query positions given with both truth values.
        n_extra: Triples that name no queried state (unknown or mismatched names, bad index).
        n_triples: Every triple the expression found.
        whole_step: The answer was set aside whole (the authors' rule; see
            :class:`ScoringRules`).
    """

    values: dict[int, bool] = field(default_factory=dict)
    conflicts: set[int] = field(default_factory=set)
    n_extra: int = 0
    n_triples: int = 0
    whole_step: bool = False
    """The whole answer was set aside as unparsed (``unparsed="whole-step"``)."""

    def predicted(self, n_states: int) -> str:
        """One character per queried state: ``T``, ``F``, ``?`` (missing) or ``!`` (conflict)."""
        return "".join(
            CONFLICT
            if position in self.conflicts
            else MISSING
            if position not in self.values
            else "T"
            if self.values[position]
            else "F"
            for position in range(n_states)
        )


def answer_region(response: str) -> str:
    """The part of a response that holds the answer (see the module docstring)."""
    text = _LABEL.sub("", response.strip(), count=1)
    first = TRIPLE.search(text)
    if first is None:
        return ""
    cut = _NEXT_ROUND.search(text, first.end())
    return text[first.start() : cut.start() if cut else len(text)]


def parse_answer(
    response: Any,
    words: Mapping[str, str],
    n_boxes: int,
    rules: ScoringRules = DEFAULT_RULES,
) -> ParsedAnswer:
    """Extract the queried states from a free-text response; never raises on bad text.

    Args:
        response: The model's (or participant's) answer; anything not a string parses to nothing.
        words: The item's vocabulary (``box_functor``, ``key_functor``, ``box_name``,
            ``key_name``).
        n_boxes: Number of boxes (and keys); query positions are boxes first, then keys.
        rules: The functor and unparsed-answer rules.

    Returns:
        The parsed states.
    """
    parsed = ParsedAnswer()
    if not isinstance(response, str):
        return parsed
    kinds = {
        (words["box_functor"].lower(), words["box_name"].lower()): 0,
        (words["key_functor"].lower(), words["key_name"].lower()): n_boxes,
    }
    if rules.functor == "any":
        kinds = {("", name): offset for (_, name), offset in kinds.items()}
    for functor, name, index, value in TRIPLE.findall(answer_region(response)):
        parsed.n_triples += 1
        offset = kinds.get(("" if rules.functor == "any" else functor.lower(), name.lower()))
        number = int(index)
        if offset is None or number >= n_boxes:
            parsed.n_extra += 1
            continue
        position, truth = offset + number, value.lower() == "true"
        if parsed.values.get(position, truth) != truth:
            parsed.conflicts.add(position)
        parsed.values[position] = truth
    for position in parsed.conflicts:
        parsed.values.pop(position, None)
    if rules.unparsed == "whole-step" and (parsed.conflicts or not parsed.values):
        return ParsedAnswer(n_extra=parsed.n_extra, n_triples=parsed.n_triples, whole_step=True)
    return parsed


@dataclass(frozen=True, kw_only=True)
class BoxesJudgement(Judgement):
    """One boxes answer as :func:`state_scores` judges it (``correct`` is Step-EM).

    Fields marked :data:`~tracktale.schema.results.SAMPLE_MEAN` are averaged over an output's
    samples by the analysis; the others are the first sample's.

    Attributes:
        step_em: Step-EM, 0 or 1.
        state_em: State-EM, the share of queried states matched.
        parsed: Any queried state was found.
        parse_rate: The share of queried states found.
        n_queried: The states asked for.
        n_parsed: The queried states found (conflicts included).
        n_matched: The queried states predicted right.
        n_extra: States given that were not asked for.
        n_conflicts: Queried states given with both values.
        predicted: One character per queried state (:meth:`ParsedAnswer.predicted`).
        unparsed_step: The answer was set aside whole under the authors' rule.
    """

    step_em: Annotated[int, SAMPLE_MEAN]
    state_em: Annotated[float, SAMPLE_MEAN]
    parsed: Annotated[bool, SAMPLE_MEAN]
    parse_rate: Annotated[float, SAMPLE_MEAN]
    n_queried: int
    n_parsed: int
    n_matched: int
    n_extra: int
    n_conflicts: int
    predicted: str
    unparsed_step: bool


def state_scores(expected: Sequence[bool], parsed: ParsedAnswer) -> BoxesJudgement:
    """State-EM, Step-EM, the parse rate and the counts behind them.

    Args:
        expected: The truth value of each queried state, in query order.
        parsed: What :func:`parse_answer` found.

    Returns:
        The :class:`BoxesJudgement`: ``correct`` (Step-EM as a bool), ``step_em``
        (0/1), ``state_em``, ``parsed`` (whether any queried state was found), ``parse_rate``
        (share of queried states found), ``n_queried``, ``n_parsed``, ``n_matched``,
        ``n_extra``, ``n_conflicts``, ``predicted`` (see :meth:`ParsedAnswer.predicted`) and
        ``unparsed_step`` (the answer was set aside whole under the authors' rule).
    """
    n_queried = len(expected)
    found = len(parsed.values) + len(parsed.conflicts)
    matched = sum(parsed.values.get(i) == value for i, value in enumerate(expected))
    exact = matched == n_queried and not parsed.conflicts and parsed.n_extra == 0
    exact = exact and not parsed.whole_step
    return BoxesJudgement(
        correct=exact,
        step_em=int(exact),
        state_em=matched / n_queried if n_queried else 0.0,
        parsed=found > 0,
        parse_rate=found / n_queried if n_queried else 0.0,
        n_queried=n_queried,
        n_parsed=found,
        n_matched=matched,
        n_extra=parsed.n_extra,
        n_conflicts=len(parsed.conflicts),
        predicted=parsed.predicted(n_queried),
        unparsed_step=parsed.whole_step,
    )
