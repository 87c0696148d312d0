"""Word surprisal from token log-probabilities: naive (summed tokens) and corrected.

Words are the text's whitespace-separated strings (punctuation stays with its word, as in a
self-paced reading display), or the spans a paradigm gives (its items' own words or regions:
:meth:`tracktale.stimuli.paradigm.Paradigm.word_spans`). A token belongs to the word that holds
its first non-space character; the text between one token's start and the next token's start
counts as the token's span, so a token's leading space never moves it to the previous word, and
a token that merges the end of one word with the start of the next counts for the word it
starts in.

**Naive**: a word's surprisal is the sum of its tokens' surprisals (``-log P``, in nats).

**Corrected** (the default; Pimentel & Meister 2024, "How to compute the probability of a
word"; Oh & Schuler 2024): with tokens that carry the space before a word, the tokens of ``w``
do not say that ``w`` ends where it ends (`` dog`` is also the start of `` dogs``), and the
context's last word is only known to have ended once the next token begins with a space. So

    log P(w | context) = log P(tokens of w | context)
                         + log P(next token ends w | context, w)
                         - log P(next token ends the previous word | context)

where a token "ends the word before it" when it begins with whitespace or ends the text
(:mod:`tracktale.models.word_boundaries`). The first word of a text scored after a document
start has nothing to divide by: the start of a document is a word boundary. Over a text the
factors telescope: the corrected surprisals sum to the naive ones minus the log-probability
that the text ends where it ends, and a region's corrected surprisal is the sum of its words'.

Each word records how it was computed (:data:`WordMethod`): ``corrected``; ``naive`` (asked
for); ``naive_boundary_in_token`` (a word boundary falls inside a token, e.g. one token for
a period and newlines, or a span cut before punctuation: the end-of-word factor cannot be read
off whole tokens, so the naive sum stands); ``naive_no_distribution`` (the backend gives no
next-token distribution: API endpoints); ``unscored`` (a token of the word has no score, as
the first word of a text without a start token, or the word holds no token of its own, its
characters all in a token that began in the previous word; its surprisal is ``None``, never
silently dropped).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from tracktale.models.word_boundaries import WordProbability
from tracktale.scorer import TokenScores

WordMethod = Literal[
    "corrected", "naive", "naive_boundary_in_token", "naive_no_distribution", "unscored"
]
"""How one word's surprisal was computed (see the module doc)."""


@dataclass(frozen=True)
class WordSurprisal:
    """One word's naive surprisal.

    Attributes:
        word: The word as it appears in the text.
        start: Its character offset.
        surprisal: Sum of its tokens' ``-log P`` in nats; ``None`` if a token was not scored.
        n_tokens: How many scored tokens it spans.
    """

    word: str
    start: int
    surprisal: float | None
    n_tokens: int


@dataclass(frozen=True)
class WordScore:
    """One word's surprisal by the method asked for, beside the naive sum.

    Attributes:
        word: The word as it appears in the text.
        start: Its character offset.
        surprisal: ``-log P(word | context)`` in nats by ``method``; ``None`` if unscored.
        naive: The sum of its tokens' ``-log P``; ``None`` if unscored.
        n_tokens: How many scored tokens it spans.
        method: How ``surprisal`` was computed.
    """

    word: str
    start: int
    surprisal: float | None
    naive: float | None
    n_tokens: int
    method: WordMethod


@dataclass(frozen=True)
class _Word:
    text: str
    start: int
    first: int  # index of its first scored token
    stop: int  # one past its last scored token
    unscored: bool  # it starts before the first scored token, or has no token


def align_to_words(
    text: str,
    offsets: Sequence[int],
    logprobs: Sequence[float],
    spans: Sequence[tuple[int, int]] | None = None,
) -> list[WordSurprisal]:
    """Sum token surprisals into the words of ``text`` (naive word surprisal).

    Args:
        text: The scored text.
        offsets: Character offset of each scored token's start (ascending).
        logprobs: Each scored token's log-probability.
        spans: The words' ``(start, end)`` character spans, in order (``None``: every run of
            non-space characters). A token in the gap between two words counts for the next.

    Returns:
        One entry per word, in order.

    Raises:
        ValueError: If offsets and log-probabilities differ in length.
    """
    if len(offsets) != len(logprobs):
        raise ValueError("need one offset per scored token")
    return [
        WordSurprisal(
            word.text,
            word.start,
            None if word.unscored else -math.fsum(logprobs[word.first : word.stop]),
            word.stop - word.first,
        )
        for word in _assign(text, offsets, spans)
    ]


def word_scores(
    text: str,
    scores: TokenScores,
    spans: Sequence[tuple[int, int]] | None = None,
    probability: WordProbability = "corrected",
) -> list[WordScore]:
    """Each word's surprisal by ``probability``, with the naive sum beside it.

    Args:
        text: The scored text.
        scores: Its token scores (with ``word_ends`` and ``word_starts`` for ``corrected``).
        spans: The words' spans, as for :func:`align_to_words`.
        probability: ``corrected`` or ``naive``.

    Raises:
        ValueError: If the scores' offsets, word ends or word starts do not fit its tokens.
    """
    offsets, logprobs = scores.offsets, scores.logprobs
    if len(offsets) != len(logprobs):
        raise ValueError("need one offset per scored token")
    ends = scores.word_ends
    if ends and (len(ends) != len(logprobs) + 1 or len(scores.word_starts) != len(logprobs)):
        raise ValueError("need a word end per scored token and one after the last")
    # The text's own first token is scored (after a start token): a document boundary.
    opens = bool(offsets) and offsets[0] == 0
    result = []
    for word in _assign(text, offsets, spans):
        naive = None if word.unscored else -math.fsum(logprobs[word.first : word.stop])
        method = _method(word, scores, probability, opens)
        value = naive
        if method == "corrected" and naive is not None:
            before = 0.0 if word.first == 0 and opens else ends[word.first]
            value = naive - ends[word.stop] + before
        result.append(
            WordScore(word.text, word.start, value, naive, word.stop - word.first, method)
        )
    return result


def _method(
    word: _Word, scores: TokenScores, probability: WordProbability, opens: bool
) -> WordMethod:
    if word.unscored:
        return "unscored"
    if probability == "naive":
        return "naive"
    if not scores.word_ends:
        return "naive_no_distribution"
    starts = scores.word_starts
    starts_clean = (word.first == 0 and opens) or starts[word.first]
    ends_clean = word.stop == len(starts) or starts[word.stop]
    return "corrected" if starts_clean and ends_clean else "naive_boundary_in_token"


def _assign(
    text: str, offsets: Sequence[int], spans: Sequence[tuple[int, int]] | None
) -> list[_Word]:
    """The words with the range of scored tokens each holds (see the module doc)."""
    if spans is None:
        words = [(match.start(), match.end(), match.group()) for match in re.finditer(r"\S+", text)]
    else:
        words = [(start, end, text[start:end]) for start, end in spans]
    owner: list[int | None] = []
    token_ends = [*offsets[1:], len(text)]
    for start, end in zip(offsets, token_ends, strict=True):
        span = text[start:end]
        stripped = len(span) - len(span.lstrip())
        owner.append(_word_at(words, start + stripped if stripped < len(span) else start))
    first_scored = offsets[0] if offsets else len(text)
    assigned = []
    for index, (start, _, word) in enumerate(words):
        held = [position for position, holder in enumerate(owner) if holder == index]
        first, stop = (held[0], held[-1] + 1) if held else (0, 0)
        assigned.append(_Word(word, start, first, stop, start < first_scored or not held))
    return assigned


def _word_at(words: list[tuple[int, int, str]], position: int) -> int | None:
    # The word holding ``position``, or the next one when it falls on whitespace.
    for index, (_, end, _) in enumerate(words):
        if position < end:
            return index
    return None


def spillover(values: Sequence[float | None], lag: int) -> list[float | None]:
    """Each word's predecessor's value ``lag`` words back (``None`` for the first ``lag``)."""
    return [values[index - lag] if index >= lag else None for index in range(len(values))]
