"""Word lists the paradigms draw from, shipped as small tab-separated files.

Each file documents itself in ``#`` comment lines. The pseudoword list was chosen by Wuggy from
the standard objects (see :mod:`tracktale.stimuli.pseudowords`) and is committed, so generating
stimuli never needs Wuggy or its lexicon. An object list of one's own (same format) is read with
:func:`read_object_list`.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from tracktale.errors import TracktaleError

TEMPLATES = ("standard", "pseudoword", "improbable")
"""The object templates of the narrative paradigm."""
CHARACTER_POOLS = ("female", "mixed")
"""``female``: the six women of the source paper's Appendix D (she/her); ``mixed``: those and
fourteen names of our own, six of them women and eight men (he/his)."""

_OBJECT_FILES = {
    "standard": "objects_standard.tsv",
    "pseudoword": "objects_pseudoword.tsv",
    "improbable": "objects_improbable.tsv",
}


@dataclass(frozen=True, slots=True)
class Noun:
    """A noun with its indefinite article and, where the list has one, its kind or source."""

    word: str
    article: str
    kind: str | None = None

    @property
    def indefinite(self) -> str:
        """``"a book"``, ``"an idea"``."""
        return f"{self.article} {self.word}"


@dataclass(frozen=True, slots=True)
class Character:
    """A story's protagonist and the pronouns the sentences use."""

    name: str
    pronoun: str

    @property
    def subject(self) -> str:
        """Capitalised subject pronoun (sentence-initial)."""
        return self.pronoun.capitalize()

    @property
    def possessive(self) -> str:
        """Possessive determiner."""
        return {"she": "her", "he": "his"}[self.pronoun]


def read_rows(filename: str) -> list[list[str]]:
    """The tab-separated rows of a lexicon file, without comments and blank lines."""
    try:
        text = resources.files(__package__).joinpath(filename).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise TracktaleError(f"lexicon file {filename} is missing from the installation") from None
    return [
        line.split("\t") for line in text.splitlines() if line.strip() and not line.startswith("#")
    ]


@functools.cache
def objects(template: str) -> tuple[Noun, ...]:
    """The object nouns of a template.

    Raises:
        TracktaleError: For an unknown template.
    """
    if template not in _OBJECT_FILES:
        raise TracktaleError(f"unknown template {template!r} (choose from {', '.join(TEMPLATES)})")
    return _nouns(read_rows(_OBJECT_FILES[template]), _OBJECT_FILES[template])


def read_object_list(path: str | Path) -> tuple[Noun, ...]:
    """An object list of one's own: ``noun<TAB>article[<TAB>kind]`` lines, ``#`` comments.

    Raises:
        TracktaleError: For a missing file, a malformed row, a repeated noun or an empty list.
    """
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as error:
        raise TracktaleError(f"cannot read the object list {path}: {error.strerror}") from None
    rows = [
        line.split("\t") for line in text.splitlines() if line.strip() and not line.startswith("#")
    ]
    nouns = _nouns(rows, str(path))
    if not nouns:
        raise TracktaleError(f"the object list {path} holds no nouns")
    return nouns


def _nouns(rows: list[list[str]], where: str) -> tuple[Noun, ...]:
    nouns = []
    for row in rows:
        if len(row) not in (2, 3) or row[1] not in ("a", "an") or not row[0].strip():
            raise TracktaleError(f"malformed row in {where}: {row!r} (noun, a/an, optional kind)")
        nouns.append(Noun(row[0], row[1], row[2] if len(row) == 3 else None))
    words = [noun.word for noun in nouns]
    repeated = sorted({word for word in words if words.count(word) > 1})
    if repeated:
        raise TracktaleError(f"{where} lists the noun {repeated[0]!r} twice")
    return tuple(nouns)


@functools.cache
def containers() -> tuple[str, ...]:
    """Container nouns."""
    return tuple(row[0] for row in read_rows("containers.txt"))


@functools.cache
def adjectives() -> tuple[str, ...]:
    """Descriptive adjectives for containers."""
    return tuple(row[0] for row in read_rows("adjectives.txt"))


@functools.cache
def characters(pool: str = "female") -> tuple[Character, ...]:
    """Protagonists with their pronouns, from one of :data:`CHARACTER_POOLS`.

    Raises:
        TracktaleError: For an unknown pool.
    """
    if pool not in CHARACTER_POOLS:
        raise TracktaleError(
            f"unknown character pool {pool!r} (choose from {', '.join(CHARACTER_POOLS)})"
        )
    rows = read_rows("names.tsv")
    return tuple(
        Character(name, pronoun)
        for name, pronoun, source in rows
        if pool == "mixed" or source == "appendix-d"
    )


@functools.cache
def pause_actions() -> tuple[str, ...]:
    """Story-final filler actions, with ``{Pronoun}`` and ``{possessive}`` placeholders."""
    return tuple(row[0] for row in read_rows("pause_actions.txt"))
