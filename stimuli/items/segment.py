"""Word segmentation, pluggable per language: text -> the character spans of its words.

A segmenter is a function from a text to its words' ``(start, end)`` character spans, in order
and without overlap. Two are built in: ``whitespace`` (every maximal run of non-space
characters is a word, punctuation staying with its word, as a self-paced reading display shows
it; the default for every language) and ``characters`` (every non-space character is a word:
the default for Chinese and Japanese, which do not separate words by spaces). A language with a
segmenter of its own (a dictionary-based one for Thai, say) registers it with
:func:`register_segmenter`, naming the languages it is the default for; a design names one
with ``segmenter:``. The spans are stored with each item (``truth.segments``), so the sequence
task's per-word surprisal and the human study's reading regions need no segmenter later; a
table's region column replaces them with the researcher's own regions.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from tracktale.errors import TracktaleError

Span = tuple[int, int]
Segmenter = Callable[[str], list[Span]]

_SEGMENTERS: dict[str, Segmenter] = {}
_LANGUAGE_DEFAULTS: dict[str, str] = {}
DEFAULT_SEGMENTER = "whitespace"


def register_segmenter(name: str, segmenter: Segmenter, languages: Iterable[str] = ()) -> None:
    """Register ``segmenter`` as ``name``, the default for ``languages`` (primary subtags)."""
    _SEGMENTERS[name] = segmenter
    for language in languages:
        _LANGUAGE_DEFAULTS[language.lower()] = name


def segmenter_names() -> tuple[str, ...]:
    """The registered segmenters' names, in registration order."""
    return tuple(_SEGMENTERS)


def default_segmenter(language: str) -> str:
    """The segmenter a language uses unless the design names one (by its primary subtag)."""
    return _LANGUAGE_DEFAULTS.get(language.split("-")[0].lower(), DEFAULT_SEGMENTER)


def get_segmenter(name: str) -> Segmenter:
    """The segmenter registered as ``name``.

    Raises:
        TracktaleError: For a name nothing registered.
    """
    try:
        return _SEGMENTERS[name]
    except KeyError:
        raise TracktaleError(
            f"no word segmenter {name!r} (registered: {', '.join(_SEGMENTERS)})"
        ) from None


def segment(text: str, name: str) -> list[Span]:
    """The word spans of ``text`` under the segmenter ``name``, checked.

    Raises:
        TracktaleError: For an unknown segmenter, or spans out of order or out of the text.
    """
    spans = [(int(start), int(end)) for start, end in get_segmenter(name)(text)]
    previous = 0
    for start, end in spans:
        if not previous <= start < end <= len(text):
            raise TracktaleError(f"segmenter {name!r} gave the span {start}-{end} out of order")
        previous = end
    return spans


def whitespace(text: str) -> list[Span]:
    """Maximal runs of non-space characters."""
    return [match.span() for match in re.finditer(r"\S+", text)]


def characters(text: str) -> list[Span]:
    """Every non-space character on its own."""
    return [(index, index + 1) for index, char in enumerate(text) if not char.isspace()]


register_segmenter("whitespace", whitespace)
register_segmenter("characters", characters, languages=("zh", "ja", "yue"))
