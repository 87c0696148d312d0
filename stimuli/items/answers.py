"""Judging a response against an imported item's accepted answers or forced-choice options.

One rule serves a participant's typed answer, a clicked option and a model's generation:
both sides are *normalised* (Unicode NFC, case folded, runs of whitespace made one space, and
punctuation stripped from both ends: ``" Kat. "`` reads as ``kat``), then compared:

- ``exact`` (the default): the normalised response equals a normalised accepted answer (the
  paradigm compares a response's first non-blank line: a model's generation goes on past it);
- ``contains``: the accepted answer's words occur in the response's words, consecutively
  (words as the item's segmenter splits them, punctuation stripped from each), so
  ``"It is the cat."`` contains ``cat``; for forced choice the response must name the right
  option and no other.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence

from tracktale.stimuli.items.segment import segment


def normalise(text: str) -> str:
    """NFC, case folded, whitespace collapsed, punctuation stripped from both ends."""
    folded = unicodedata.normalize("NFC", unicodedata.normalize("NFC", text).casefold())
    return _strip_punctuation(" ".join(folded.split()))


def _strip_punctuation(text: str) -> str:
    start, end = 0, len(text)
    while start < end and _is_edge(text[start]):
        start += 1
    while end > start and _is_edge(text[end - 1]):
        end -= 1
    return text[start:end]


def _is_edge(char: str) -> bool:
    return char.isspace() or unicodedata.category(char).startswith("P")


def words(text: str, segmenter: str) -> list[str]:
    """The normalised words of ``text`` (empty ones, such as a lone dash, dropped)."""
    normalised = normalise(text)
    found = (_strip_punctuation(normalised[a:b]) for a, b in segment(normalised, segmenter))
    return [word for word in found if word]


def names(response: str, answer: str, *, match: str, segmenter: str) -> bool:
    """Whether ``response`` gives ``answer`` under the rule ``match`` (``exact``/``contains``)."""
    if match == "exact":
        return normalise(response) == normalise(answer)
    wanted = words(answer, segmenter)
    said = words(response, segmenter)
    if not wanted:
        return False
    return any(said[i : i + len(wanted)] == wanted for i in range(len(said) - len(wanted) + 1))


def answers_named(
    response: str, answers: Sequence[str], *, match: str, segmenter: str
) -> list[str]:
    """The answers (in their order) that ``response`` gives."""
    return [
        answer for answer in answers if names(response, answer, match=match, segmenter=segmenter)
    ]
