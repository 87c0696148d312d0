"""Distractor sentences appended to each step (the source paper's Appendix A).

The paper drew one random sentence of the Brown corpus for each step. NLTK downloads that corpus
at run time under a non-commercial licence, so the default source is a sentence bank written for
this project (``lexicons/distractors.txt``); ``brown`` is used only when the user has installed
NLTK and its corpus. Sentences from either source that mention anything of the task (boxes,
keys, doors, opening, obtaining, truth values, digits) are left out, so a distractor can never
carry information about the state.
"""

from __future__ import annotations

import functools
import re

from tracktale.errors import TracktaleError
from tracktale.stimuli.lexicons import read_rows

SOURCES = ("bank", "brown")
BANK_FILE = "distractors.txt"
_TASK_WORDS = re.compile(
    r"\b(box\w*|keys?|door\w*|open\w*|obtain\w*|retriev\w*|quest\w*|steps?|true|false)\b|\d|=",
    re.IGNORECASE,
)
_BROWN_TOKENS = (5, 25)
_BROWN_HINT = "pip install nltk, then python -m nltk.downloader brown"


def mentions_the_task(sentence: str) -> bool:
    """Whether ``sentence`` uses a word of the task (and so may not be a distractor)."""
    return _TASK_WORDS.search(sentence) is not None


@functools.cache
def bank() -> tuple[str, ...]:
    """The project's own distractor sentences.

    Raises:
        TracktaleError: If the file is missing or a sentence mentions the task.
    """
    sentences = tuple(row[0].strip() for row in read_rows(BANK_FILE))
    for sentence in sentences:
        if mentions_the_task(sentence):
            raise TracktaleError(f"{BANK_FILE}: {sentence!r} mentions the task")
    return sentences


def _detokenize(tokens: list[str]) -> str:
    text = " ".join(tokens)
    text = re.sub(r"``\s*|\s*''", '"', text)
    text = re.sub(r"\s+([,.;:!?)]|'s\b|n't\b|'re\b|'ll\b|'d\b|'ve\b|'m\b)", r"\1", text)
    return re.sub(r"\(\s+", "(", text)


@functools.cache
def brown() -> tuple[str, ...]:
    """Sentences of NLTK's Brown corpus (5-25 tokens, ending a sentence, free of task words).

    Raises:
        TracktaleError: If NLTK or its Brown corpus is not installed.
    """
    try:
        from nltk.corpus import brown as corpus
    except ImportError:
        raise TracktaleError(
            f"--distractor-source brown needs NLTK and its Brown corpus ({_BROWN_HINT}; the "
            "corpus is licensed for non-commercial use only)"
        ) from None
    try:
        raw = corpus.sents()
        sentences = []
        for tokens in raw:
            if not _BROWN_TOKENS[0] <= len(tokens) <= _BROWN_TOKENS[1] or tokens[-1] not in ".!?":
                continue
            sentence = _detokenize(list(tokens))
            if not mentions_the_task(sentence):
                sentences.append(sentence)
    except LookupError:
        raise TracktaleError(
            f"NLTK is installed but its Brown corpus is not ({_BROWN_HINT})"
        ) from None
    if not sentences:
        raise TracktaleError("NLTK's Brown corpus gave no usable distractor sentence")
    return tuple(sentences)


def sentences(source: str) -> tuple[str, ...]:
    """The distractor sentences of ``source``.

    Raises:
        TracktaleError: For an unknown source, or a source that is not installed.
    """
    if source == "bank":
        return bank()
    if source == "brown":
        return brown()
    raise TracktaleError(f"unknown distractor source {source!r} (choose from {', '.join(SOURCES)})")
