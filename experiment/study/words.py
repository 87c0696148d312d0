"""The words of a story read word by word (self-paced reading, Maze), as stored.

They come with their trial's answer (``words`` in its body, validated by
:func:`.validation.validate_words`); this module checks them against each other and against
the story the trial served, and makes their records, which carry the trial's facts (who,
which trial, which item, when the server received it) beside what the page measured.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from tracktale.errors import TracktaleError
from tracktale.experiment.study.errors import InconsistentRequest
from tracktale.item import Item
from tracktale.schema import WordRecord
from tracktale.stimulus_set import StimulusSet
from tracktale.trial import TrialRecord

__all__ = [
    "check_reading_mode",
    "check_words",
    "reading_content",
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


def reading_content(item: Item, mode: str, seed: int, redo: bool = False) -> dict[str, Any]:
    """What a word-by-word trial adds to the served content.

    ``reading_mode``, ``words``, ``regions`` and, for Maze, ``distractors`` (one per word,
    from ``item.meta``), ``seed``, the seed of the sides the real words take, and ``redo``
    (a wrong choice waits for the right one).
    """
    words = story_words(item)
    content: dict[str, Any] = {
        "reading_mode": mode,
        "words": words,
        "regions": story_regions(words),
    }
    if mode == "maze":
        content["distractors"] = list(item.meta["distractors"])
        content["seed"] = seed
        content["redo"] = redo
    return content


def check_reading_mode(stimuli: StimulusSet, mode: str) -> None:
    """Refuse a Maze study whose items lack their distractors (G-maze needs them given).

    Raises:
        TracktaleError: Naming the first item without ``meta.distractors`` (a list of one
            non-blank word per word of its story).
    """
    if mode != "maze":
        return
    for item in stimuli:
        given = item.meta.get("distractors")
        words = story_words(item)
        if (
            not isinstance(given, list | tuple)
            or len(given) != len(words)
            or not all(isinstance(word, str) and word.strip() for word in given)
        ):
            raise TracktaleError(
                f"reading_mode maze needs distractors: item {item.item_id} has no "
                f"meta.distractors with one word for each of its {len(words)} words"
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
