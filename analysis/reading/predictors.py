"""Word predictors and exclusions of a joined reading-time table.

Predictors are computed per item over every word the models scored, before any exclusion, so
that a word's spillover terms (the previous one and two words) are those of the text as read.
Exclusions follow common practice in surprisal studies (Smith & Levy 2013; Wilcox et al. 2020):
reading times outside fixed bounds, the first and last word of each screen, words carrying
punctuation, Maze errors, and words without a predictor (the first words' spillover, unscored
words). Each row is counted under the first rule that excludes it.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tracktale.errors import TracktaleError

if TYPE_CHECKING:
    import pandas as pd

_PUNCTUATION = re.compile(r"[^\w'’-]")
_LETTERS = re.compile(r"[\w'’-]")
WORD_PREDICTORS = ("length", "log_frequency")
"""Word-level baseline predictors (each with its spillover copies)."""


@dataclass(frozen=True)
class Exclusions:
    """Which reading times to leave out (literature defaults for self-paced reading).

    Attributes:
        min_rt_ms: Faster than this is not reading (100 ms; Wilcox et al. 2020 use 100).
        max_rt_ms: Slower than this is a pause (3000 ms for SPR; 5000 is common for Maze).
        first_last: Leave out the first and last word of each screen (the ``region`` column
            where there is one, else the item).
        punctuation: Leave out words carrying punctuation (wrap-up effects).
        maze_errors: Leave out Maze words answered wrongly (where ``correct`` is given).
    """

    min_rt_ms: float = 100.0
    max_rt_ms: float = 3000.0
    first_last: bool = True
    punctuation: bool = True
    maze_errors: bool = True


def log_frequencies(words: pd.Series, language: str = "en") -> pd.Series:
    """Natural log of each word's frequency from ``wordfreq`` (punctuation stripped).

    Raises:
        TracktaleError: When ``wordfreq`` is not installed.
    """
    try:
        from wordfreq import word_frequency
    except ImportError:
        raise TracktaleError(
            "word frequencies need the wordfreq package (pip install wordfreq), or give a "
            "log_frequency column in the reading-time table"
        ) from None
    cache: dict[str, float] = {}

    def one(word: str) -> float:
        key = _PUNCTUATION.sub("", word).lower()
        if key not in cache:
            cache[key] = math.log(max(word_frequency(key, language), 1e-9))
        return cache[key]

    return words.map(one)


def word_table(
    words: pd.DataFrame, reading: pd.DataFrame, surprisal: list[str], spillover: int
) -> pd.DataFrame:
    """Per item and word: length, log frequency, position, surprisal and their spillover.

    Args:
        words: ``item``, ``word_index``, ``model_word`` and the surprisal columns.
        reading: The reading times (its ``log_frequency`` column is used where present).
        surprisal: The surprisal columns.
        spillover: How many previous words get spillover columns (0-2).
    """
    table = words.sort_values(["item", "word_index"]).reset_index(drop=True)
    table["length"] = table["model_word"].astype(str).map(lambda w: len(_LETTERS.findall(w)))
    if "log_frequency" in reading.columns:
        given = reading.groupby(["item", "word_index"])["log_frequency"].first()
        table = table.join(given, on=["item", "word_index"])
        table["log_frequency"] = table["log_frequency"].astype(float)
    else:
        table["log_frequency"] = log_frequencies(table["model_word"].astype(str))
    table["position"] = table["word_index"].astype(float)
    by_item = table.groupby("item", sort=False)
    for lag in range(1, spillover + 1):
        for name in (*WORD_PREDICTORS, *surprisal):
            table[f"{name}_{lag}"] = by_item[name].shift(lag)
    return table


def exclude(joined: pd.DataFrame, rules: Exclusions, needed: list[str]) -> tuple:
    """Apply the exclusions; returns the kept rows and a count per rule.

    Args:
        joined: Reading times with every predictor.
        rules: What to exclude.
        needed: Predictor columns a row must have.

    Returns:
        ``(kept, counts)``: the rows kept, and a frame ``rule``, ``rows`` (each row under
        the first rule that applies) ending with ``kept``.
    """
    import pandas as pd

    screen = "region" if "region" in joined.columns else "item"
    group = joined.groupby(["participant", "item", screen], sort=False)["word_index"]
    tests = {
        f"RT below {rules.min_rt_ms:g} ms": joined["rt_ms"] < rules.min_rt_ms,
        f"RT above {rules.max_rt_ms:g} ms": joined["rt_ms"] > rules.max_rt_ms,
    }
    if rules.maze_errors and "correct" in joined.columns:
        tests["Maze error"] = joined["correct"].astype("boolean").eq(False).fillna(False)
    if rules.first_last:
        first = joined["word_index"] == group.transform("min")
        tests[f"first or last word of a {screen}"] = first | (
            joined["word_index"] == group.transform("max")
        )
    if rules.punctuation:
        tests["word with punctuation"] = joined["word"].str.contains(_PUNCTUATION)
    tests["missing predictor or surprisal"] = joined[needed].isna().any(axis=1)
    out = pd.Series(False, index=joined.index)
    counts = []
    for rule, hit in tests.items():
        new = hit.to_numpy(bool) & ~out.to_numpy()
        counts.append({"rule": rule, "rows": int(new.sum())})
        out |= new
    kept = joined[~out].reset_index(drop=True)
    if kept.empty:
        raise TracktaleError("every reading time was excluded; loosen the exclusions")
    counts.append({"rule": "kept", "rows": len(kept)})
    counts.insert(0, {"rule": "words read", "rows": len(joined)})
    return kept, pd.DataFrame(counts)
