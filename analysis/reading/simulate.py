"""Simulated reading-time studies with a planted surprisal effect (for tests and calibration).

Each item is a sequence of words with a length, a log frequency and a surprisal (surprisal
correlated with both, as in text: rare and long words are less predictable). A participant's log
reading time of a word is

    log RT = mu + a_p + b_i + beta_len * length + (beta_freq + f_p) * log_frequency
             + beta_spill * length of the previous word + (beta_s + s_p) * surprisal + e

with random intercepts for participants (``a_p``) and items (``b_i``), by-participant slopes for
frequency (``f_p``) and surprisal (``s_p``), and normal ``e``: reading times are lognormal. The
by-participant frequency slope and the item intercepts make the data richer than the ΔLL's
regressions, as the null simulations should be.
"""

from __future__ import annotations

import string
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from tracktale.analysis.reading.surprisal import SurprisalColumn

if TYPE_CHECKING:
    import pandas as pd


@dataclass(frozen=True)
class ReadingDesign:
    """A simulated study's size and effects (log RT units; surprisal in nats).

    Attributes:
        participants: People.
        items: Texts.
        words: Words per text.
        surprisal_slope: The planted effect of one nat of surprisal on log RT.
        surprisal_slope_sd: By-participant SD of that slope.
        participant_sd: SD of the participants' intercepts.
        item_sd: SD of the items' intercepts.
        frequency_slope_sd: By-participant SD of the frequency slope.
        residual_sd: SD of the word-level noise.
    """

    participants: int = 24
    items: int = 16
    words: int = 12
    surprisal_slope: float = 0.02
    surprisal_slope_sd: float = 0.01
    participant_sd: float = 0.2
    item_sd: float = 0.05
    frequency_slope_sd: float = 0.01
    residual_sd: float = 0.3


def simulate_words(design: ReadingDesign, rng: np.random.Generator) -> pd.DataFrame:
    """The texts: ``item``, ``word_index``, ``model_word``, ``log_frequency``, ``surprisal_0``."""
    import pandas as pd

    n = design.items * design.words
    length = rng.integers(2, 10, n)
    log_frequency = -4.0 - 0.8 * length + rng.normal(0, 1.5, n)
    surprisal = np.clip(2.0 - 0.6 * (log_frequency + 9.0) + rng.gamma(2.0, 1.5, n), 0.05, None)
    letters = np.array(list(string.ascii_lowercase))
    words = ["".join(rng.choice(letters, size)) for size in length]
    position = np.tile(np.arange(design.words), design.items)
    words = [w + "." if p == design.words - 1 else w for w, p in zip(words, position, strict=True)]
    return pd.DataFrame(
        {
            "item": np.repeat([f"item{i:03d}" for i in range(design.items)], design.words),
            "word_index": position,
            "model_word": words,
            "log_frequency": log_frequency,
            "surprisal_0": surprisal,
        }
    )


def simulate_study(design: ReadingDesign, seed: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """One study: the per-word reading times and the words' model surprisal.

    Returns:
        ``(reading, words)``: a per-word table (:class:`ReadingTimeRow` columns plus
        ``log_frequency``) and the word table :func:`model_words` would read from a store.
    """
    import pandas as pd

    rng = np.random.default_rng(seed)
    words = simulate_words(design, rng)
    n_words, n_people = len(words), design.participants
    person = np.repeat(np.arange(n_people), n_words)
    word = np.tile(np.arange(n_words), n_people)
    item_effect = rng.normal(0, design.item_sd, design.items)
    length = words["model_word"].str.len().to_numpy(float)
    previous = np.r_[np.nan, length[:-1]]
    previous[words["word_index"].to_numpy() == 0] = length.mean()
    slope = design.surprisal_slope + rng.normal(0, design.surprisal_slope_sd, n_people)
    frequency = -0.01 + rng.normal(0, design.frequency_slope_sd, n_people)
    log_rt = (
        5.6
        + rng.normal(0, design.participant_sd, n_people)[person]
        + item_effect[np.repeat(np.arange(design.items), design.words)][word]
        + 0.02 * length[word]
        + frequency[person] * words["log_frequency"].to_numpy()[word]
        + 0.01 * previous[word]
        + slope[person] * words["surprisal_0"].to_numpy()[word]
        + rng.normal(0, design.residual_sd, len(person))
    )
    reading = pd.DataFrame(
        {
            "participant": [f"p{p:03d}" for p in person],
            "item": words["item"].to_numpy()[word],
            "trial": words["item"].str[4:].astype(int).to_numpy()[word],
            "word_index": words["word_index"].to_numpy()[word],
            "word": words["model_word"].to_numpy()[word],
            "rt_ms": np.round(np.exp(log_rt), 1),
            "log_frequency": words["log_frequency"].to_numpy()[word],
        }
    )
    return reading, words.drop(columns="log_frequency")


SIMULATED_MODEL = SurprisalColumn("surprisal_0", "simulated-model", "")
"""The simulated studies' one surprisal column."""
