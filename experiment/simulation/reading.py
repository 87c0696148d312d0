"""Simulated participants reading a story word by word (self-paced reading, Maze).

A study with a ``reading_mode`` serves each story's ``words`` (:mod:`..study.words`); a
simulated participant answers with a time per word, as the page's plugins record it: longer
for longer words, scaled by the person's speed, log-normal around its median. In the Maze a
first choice is wrong one time in 50, which ends the trial's reading (the plugin's default),
or with the study's ``maze_redo`` is followed by the right one.
Where the served trial reads a region a press (``step: region``), a region's time is its
words' times added, and its record is the region's words from its first.
The words then replace the whole-story reading time of the trial's body.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping
from typing import Any

__all__ = ["add_words"]

SPR_BASE_MS = 280.0
"""Median time on a word of no letters, self-paced (moving-window SPR runs 300-400 ms a word)."""
MAZE_BASE_MS = 650.0
"""Median time on a Maze pair of no letters (Maze runs 800-1000 ms a word)."""
MS_PER_LETTER = 15.0
WORD_SIGMA = 0.3
MAZE_ERROR_RATE = 0.02


def _word_ms(rng: random.Random, base: float, word: str, speed: float) -> float:
    median = (base + MS_PER_LETTER * len(word)) * speed
    return round(median * math.exp(rng.gauss(0.0, WORD_SIGMA)), 1)


def _steps(shown: Mapping[str, Any]) -> list[list[int]]:
    """The word indices of each key press: one word, or (``step: region``) a region's words."""
    steps: list[list[int]] = []
    regions = shown["regions"]
    for index in range(len(shown["words"])):
        if shown.get("step") == "region" and steps and regions[steps[-1][0]] == regions[index]:
            steps[-1].append(index)
        else:
            steps.append([index])
    return steps


def add_words(
    rng: random.Random,
    speed: float,
    shown: Mapping[str, Any],
    body: dict[str, Any],
    reading_limit_ms: int,
) -> dict[str, Any]:
    """``body`` with the words of ``shown`` read word by word, and its reading time theirs.

    Args:
        rng: The participant's random numbers.
        speed: The person's speed factor (1: typical; larger: slower).
        shown: The served trial, with ``reading_mode``, ``words``, ``regions`` (and, in the
            Maze, ``distractors`` and ``seed``).
        body: The trial's answer as the whole-story simulation made it.
        reading_limit_ms: The study's reading time limit: words past it are not reached.

    Returns:
        A new body with ``words`` (left out when not even the first word was read in time),
        ``reading_time_ms`` and ``reading_timed_out``.
    """
    maze = shown["reading_mode"] == "maze"
    words, total, timed_out = [], 0.0, False
    for indices in _steps(shown):
        index = indices[0]
        base = MAZE_BASE_MS if maze else SPR_BASE_MS
        rt = round(sum(_word_ms(rng, base, shown["words"][i], speed) for i in indices), 1)
        if total + rt >= reading_limit_ms:
            timed_out = True
            break
        total += rt
        record: dict[str, Any] = {
            "word_index": index,
            "region": shown["regions"][index],
            "word": " ".join(shown["words"][i] for i in indices),
            "mode": shown["reading_mode"],
            "rt_ms": rt,
        }
        if maze:
            correct = rng.random() >= MAZE_ERROR_RATE
            # The side is the page's to draw; a simulated person records left or right alike.
            side = "left" if rng.random() < 0.5 else "right"
            record.update(choice=side, correct=correct, distractor=shown["distractors"][index])
            if shown.get("redo"):
                record["errors"] = 0 if correct else 1
            words.append(record)
            if not correct and not shown.get("redo"):
                break
        else:
            words.append(record)
    result = {**body, "reading_timed_out": timed_out}
    result["reading_time_ms"] = float(reading_limit_ms) if timed_out else round(total, 1)
    if words:
        result["words"] = words
    return result
