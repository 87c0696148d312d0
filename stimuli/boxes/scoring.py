r"""Parsing a free-text answer into states, and the source paper's State-EM and Step-EM.

Models do not always keep the demonstrated format, so answers are parsed with a tolerant regular
expression, as in the source paper's Appendix D. Their expression (as in the authors' released
code; the paper's typesetting lost its hyphen) was::

    ([a-zA-Z0-9]+)\(([a-zA-Z0-9]+-\d)\)=(True|true|False|false)

Ours (:data:`TRIPLE`, case-insensitive) extracts the same (functor, argument, truth value)
triples and also accepts white space around the parentheses, the hyphen and the sign,
multi-digit indices (their ``\d`` read at most box 9), ``==`` or ``:`` for ``=``, any letter
case in the truth value, and underscores in names. Before matching, the response is stripped,
a leading ``Answer:`` label is dropped, and the text is cut where the model starts another round
(a line beginning ``Step-N``, ``Question:``, ``Answer:`` or ``Instructions:``), as base models
continuing the pattern do.

A triple counts for a queried state when its functor and argument name match the item's
vocabulary ignoring case (synthetic words are distinct even ignoring case) and its index exists;
any other triple is an *extra* state. A state given twice with the same value counts once; given
with both values it is a *conflict* and counts as wrong.

- **State-EM** = matched states / queried states (the paper's Equation 1).
- **Step-EM** = 1 when every queried state is predicted correctly and nothing else is predicted
  (no extra or conflicting states: matched = ground truth = predicted, Equation 2), else 0.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

TRIPLE = re.compile(
    r"([A-Za-z0-9_]+)\s*\(\s*([A-Za-z0-9_]+)\s*-\s*(\d+)\s*\)\s*(?:==?|:)\s*(true|false)\b",
    re.IGNORECASE,
)
"""Functor, argument name, argument index, truth value."""
_LABEL = re.compile(r"^\s*answer\s*:\s*", re.IGNORECASE)
_NEXT_ROUND = re.compile(r"\n\s*(?:step\s*-\s*\d+|question\s*:|answer\s*:|instructions\s*:)", re.I)
MISSING, CONFLICT = "?", "!"


@dataclass
class ParsedAnswer:
    """The states found in a response.

    Attributes:
        values: Query position -> predicted truth value, for states given consistently.
        conflicts: Query positions given with both truth values.
        n_extra: Triples that name no queried state (unknown or mismatched names, bad index).
        n_triples: Every triple the expression found.
    """

    values: dict[int, bool] = field(default_factory=dict)
    conflicts: set[int] = field(default_factory=set)
    n_extra: int = 0
    n_triples: int = 0

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
    cut = _NEXT_ROUND.search(text)
    return text[: cut.start()] if cut else text


def parse_answer(response: Any, words: Mapping[str, str], n_boxes: int) -> ParsedAnswer:
    """Extract the queried states from a free-text response; never raises on bad text.

    Args:
        response: The model's (or participant's) answer; anything not a string parses to nothing.
        words: The item's vocabulary (``box_functor``, ``key_functor``, ``box_name``,
            ``key_name``).
        n_boxes: Number of boxes (and keys); query positions are boxes first, then keys.

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
    for functor, name, index, value in TRIPLE.findall(answer_region(response)):
        parsed.n_triples += 1
        offset = kinds.get((functor.lower(), name.lower()))
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
    return parsed


def state_scores(expected: Sequence[bool], parsed: ParsedAnswer) -> dict[str, Any]:
    """State-EM, Step-EM, the parse rate and the counts behind them.

    Args:
        expected: The truth value of each queried state, in query order.
        parsed: What :func:`parse_answer` found.

    Returns:
        ``correct`` (Step-EM as a bool), ``step_em`` (0/1), ``state_em``, ``parsed`` (whether
        any queried state was found), ``parse_rate`` (share of queried states found),
        ``n_queried``, ``n_parsed``, ``n_matched``, ``n_extra``, ``n_conflicts`` and
        ``predicted`` (see :meth:`ParsedAnswer.predicted`).
    """
    n_queried = len(expected)
    found = len(parsed.values) + len(parsed.conflicts)
    matched = sum(parsed.values.get(i) == value for i, value in enumerate(expected))
    exact = matched == n_queried and not parsed.conflicts and parsed.n_extra == 0
    return {
        "correct": exact,
        "step_em": int(exact),
        "state_em": matched / n_queried if n_queried else 0.0,
        "parsed": found > 0,
        "parse_rate": found / n_queried if n_queried else 0.0,
        "n_queried": n_queried,
        "n_parsed": found,
        "n_matched": matched,
        "n_extra": parsed.n_extra,
        "n_conflicts": len(parsed.conflicts),
        "predicted": parsed.predicted(n_queried),
    }
