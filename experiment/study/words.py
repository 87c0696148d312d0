"""The words of a text read word by word (self-paced reading, Maze), as stored.

A paradigm's human study cuts its texts (:meth:`HumanStudy.reading_units
<tracktale.experiment.paradigms.HumanStudy.reading_units>`): words split on white space, each
in a region (by default its sentence; an imported table's region column gives its own, read a
region a key press).

They come with their trial's answer (``words`` in its body, validated by
:func:`.validation.validate_words`); this module checks them against each other and against
the story the trial served, and makes their records, which carry the trial's facts (who,
which trial, which item, when the server received it) beside what the page measured.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from tracktale.errors import TracktaleError
from tracktale.experiment.study.errors import InconsistentRequest
from tracktale.item import Item
from tracktale.schema import WordRecord
from tracktale.stimulus_set import StimulusSet
from tracktale.trial import TrialRecord

__all__ = [
    "ReadingUnits",
    "check_reading_mode",
    "check_words",
    "reading_content",
    "sentence_units",
    "story_regions",
    "story_words",
    "word_records",
]

_MAZE_ONLY = ("choice", "correct", "distractor")


def story_words(item: Item) -> list[str]:
    """The words of ``item``'s story as a word-by-word trial shows them (split on white space)."""
    return item.context.split()


def story_regions(words: Sequence[str]) -> list[int]:
    """Each word's region: its sentence, counted from 0.

    A word ending in ``.``, ``!`` or ``?`` (before any closing quote or bracket) ends one.
    """
    regions, region = [], 0
    for word in words:
        regions.append(region)
        if word.rstrip("\"'”’)]").endswith((".", "!", "?")):
            region += 1
    return regions


@dataclass(frozen=True)
class ReadingUnits:
    """How a word-by-word trial cuts a text (:meth:`HumanStudy.reading_units`).

    Attributes:
        words: The text's words, split on white space (:func:`story_words`).
        regions: Each word's region, counted from 0 (the same length as ``words``).
        step: ``word``: one word a key press (the regions only label the words);
            ``region``: one region a press (self-paced reading; the Maze goes word by word).
    """

    words: list[str]
    regions: list[int]
    step: Literal["word", "region"] = "word"


def sentence_units(item: Item) -> ReadingUnits:
    """The text read word by word, its sentences as the regions (every paradigm's default)."""
    words = story_words(item)
    return ReadingUnits(words, story_regions(words))


def reading_content(
    item: Item, units: ReadingUnits, mode: str, seed: int, redo: bool = False
) -> dict[str, Any]:
    """What a word-by-word trial adds to the served content.

    ``reading_mode``, ``words``, ``regions``, ``step`` (``region``: self-paced reading shows a
    region a press) and, for Maze, ``distractors`` (one per word, from ``item.meta``),
    ``seed``, the seed of the sides the real words take, and ``redo`` (a wrong choice waits for
    the right one).
    """
    content: dict[str, Any] = {
        "reading_mode": mode,
        "words": list(units.words),
        "regions": list(units.regions),
        "step": units.step if mode == "self_paced" else "word",
    }
    if mode == "maze":
        content["distractors"] = list(item.meta["distractors"])
        content["seed"] = seed
        content["redo"] = redo
    return content


def check_reading_mode(
    stimuli: StimulusSet, mode: str, units: Callable[[Item], ReadingUnits] = sentence_units
) -> None:
    """Refuse a word-by-word study whose texts cannot be cut, or whose Maze lacks distractors.

    Args:
        stimuli: The study's set.
        mode: The study's ``reading_mode``.
        units: How the study cuts a text (:meth:`HumanStudy.reading_units`); it raises
            ``TracktaleError`` for a text it cannot cut.

    Raises:
        TracktaleError: Naming the first item without ``meta.distractors`` (a list of one
            non-blank word per word of its text), or the first text that cannot be cut.
    """
    if mode == "whole":
        return
    for item in stimuli:
        words = units(item).words
        if mode != "maze":
            continue
        given = item.meta.get("distractors")
        if (
            not isinstance(given, list | tuple)
            or len(given) != len(words)
            or not all(isinstance(word, str) and word.strip() for word in given)
        ):
            raise TracktaleError(
                f"reading_mode maze needs distractors: item {item.item_id} has no "
                f"meta.distractors with one word for each of its {len(words)} words "
                "(make them with tracktale stimuli maze-distractors and maze-apply)"
            )


def check_words(
    words: Sequence[Mapping[str, Any]], mode: str, shown: Sequence[str], redo: bool = False
) -> None:
    """Refuse words that contradict the study's reading mode, each other or the story served.

    Args:
        words: The validated words of one answer.
        mode: The study's ``reading_mode``.
        shown: The story's words (:func:`story_words`).
        redo: The study's ``maze_redo``.

    Raises:
        InconsistentRequest: If the study shows whole stories, a word's mode is not the study's, a
            Maze word lacks its choice, correctness or distractor (or a self-paced word has
            one), a Maze word's ``errors`` contradicts ``redo`` (or, without it, a wrong
            choice is not the last word), or a word is not the story's word at its position.
    """
    if mode == "whole":
        raise InconsistentRequest("this study shows whole stories: its trials have no words")
    for index, word in enumerate(words):
        if word["mode"] != mode:
            raise InconsistentRequest(f"words[{index}]: this study's reading mode is {mode}")
        maze = mode == "maze"
        present = [name for name in _MAZE_ONLY if word.get(name) is not None]
        if maze and len(present) < len(_MAZE_ONLY):
            missing = next(name for name in _MAZE_ONLY if name not in present)
            raise InconsistentRequest(f"words[{index}]: a Maze word needs {missing!r}")
        if not maze and (present or word.get("errors") is not None):
            raise InconsistentRequest(f"words[{index}]: a self-paced word has Maze fields")
        if maze:
            _check_maze_word(index, word, redo, last=index == len(words) - 1)
        if not _matches(word, shown):
            raise InconsistentRequest(f"words[{index}]: not the story's word at its position")


def _check_maze_word(index: int, word: Mapping[str, Any], redo: bool, last: bool) -> None:
    if (word.get("errors") is not None) != redo:
        wanted = "counts its errors" if redo else "has no errors count"
        raise InconsistentRequest(f"words[{index}]: a Maze word {wanted} in this study")
    if not redo and not word["correct"] and not last:
        raise InconsistentRequest(f"words[{index}]: a wrong choice ends the Maze without redo")


def _matches(word: Mapping[str, Any], shown: Sequence[str]) -> bool:
    start = word["word_index"]
    if start >= len(shown):
        return False
    # A region is sent as its words joined by single spaces, from its first word's position.
    parts = str(word["word"]).split(" ")
    return list(shown[start : start + len(parts)]) == parts


def word_records(
    trial: TrialRecord, words: Sequence[Mapping[str, Any]], received_at: str
) -> list[WordRecord]:
    """The records of the words of ``trial`` (as stored), in the order sent."""
    facts = {
        "client_trial_id": trial.client_trial_id,
        "participant_id": trial.participant_id,
        "study_id": trial.study_id,
        "source": trial.source,
        "item_id": trial.item_id,
        "trial_index": trial.trial_index,
        "received_at": received_at,
    }
    return [WordRecord(**{**dict(word), **facts}) for word in words]
