"""Token surprisal aligned to words, for reading-time style analyses.

Words are the text's whitespace-separated strings (punctuation stays with its word, as in a
self-paced reading display), or the spans a paradigm gives (its items' own words or regions:
:meth:`tracktale.stimuli.paradigm.Paradigm.word_spans`). A token belongs to the word that holds
its first non-space character; the text between one token's start and the next token's start
counts as the token's span, so a token's leading space never moves it to the previous word, and
a token that merges the end of one word with the start of the next counts for the word it
starts in. A word's surprisal is the sum of its tokens' surprisals (``-log P``, in nats). A word
that contains a token without a score (the text's first token when there is no BOS) gets
``None``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class WordSurprisal:
    """One word's surprisal.

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


def align_to_words(
    text: str,
    offsets: Sequence[int],
    logprobs: Sequence[float],
    spans: Sequence[tuple[int, int]] | None = None,
) -> list[WordSurprisal]:
    """Sum token surprisals into the words of ``text``.

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
    if spans is None:
        words = [(match.start(), match.end(), match.group()) for match in re.finditer(r"\S+", text)]
    else:
        words = [(start, end, text[start:end]) for start, end in spans]
    sums = [0.0] * len(words)
    counts = [0] * len(words)
    first_scored = offsets[0] if offsets else len(text)
    ends = [*offsets[1:], len(text)]
    for start, end, logprob in zip(offsets, ends, logprobs, strict=True):
        span = text[start:end]
        stripped = len(span) - len(span.lstrip())
        word = _word_at(words, start + stripped if stripped < len(span) else start)
        if word is not None:
            sums[word] -= logprob
            counts[word] += 1
    return [
        WordSurprisal(
            word=word,
            start=start,
            surprisal=None if start < first_scored or counts[i] == 0 else sums[i],
            n_tokens=counts[i],
        )
        for i, (start, _, word) in enumerate(words)
    ]


def _word_at(words: list[tuple[int, int, str]], position: int) -> int | None:
    # The word holding ``position``, or the next one when it falls on whitespace.
    for index, (_, end, _) in enumerate(words):
        if position < end:
            return index
    return None
