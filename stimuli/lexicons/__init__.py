"""Word lists the paradigms draw from, shipped as small tab-separated files.

Each file documents itself in ``#`` comment lines. The pseudoword list was chosen by Wuggy from
the standard objects (see :mod:`tracktale.stimuli.pseudowords`) and is committed, so generating
stimuli never needs Wuggy or its lexicon.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from importlib import resources

from tracktale.errors import TracktaleError

TEMPLATES = ("standard", "pseudoword", "improbable")
"""The object templates of the narrative paradigm."""

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
    nouns = []
    for row in read_rows(_OBJECT_FILES[template]):
        if len(row) not in (2, 3) or row[1] not in ("a", "an"):
            raise TracktaleError(f"malformed row in {_OBJECT_FILES[template]}: {row!r}")
        nouns.append(Noun(row[0], row[1], row[2] if len(row) == 3 else None))
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
def characters() -> tuple[Character, ...]:
    """Protagonists with their pronouns."""
    return tuple(Character(name, pronoun) for name, pronoun in read_rows("names.tsv"))


@functools.cache
def pause_actions() -> tuple[str, ...]:
    """Story-final filler actions, with ``{Pronoun}`` and ``{possessive}`` placeholders."""
    return tuple(row[0] for row in read_rows("pause_actions.txt"))
