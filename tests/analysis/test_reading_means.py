"""analysis reading on a table of by-word means (one participant), and the RT-by-surprisal
figure's lowess curve over its binned means."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from tracktale.analysis.reading.analyse import ReadingOptions, analyse_reading
from tracktale.analysis.reading.outputs import binned, rt_figure, smooth, write_outputs
from tracktale.analysis.reading.regression import lmer_formula, random_slopes
from tracktale.analysis.reading.simulate import SIMULATED_MODEL, ReadingDesign, simulate_study
from tracktale.errors import TracktaleError

# Every reader with the same slope: by-word means generalise over words, not over readers, so
# their interval covers these readers' mean slope, which then is the planted one.
DESIGN = ReadingDesign(
    participants=24, items=20, words=12, surprisal_slope=0.05, surprisal_slope_sd=0.0
)
BY_ITEMS = ReadingOptions(engine="statsmodels", folds=5, fold_by="items", permutations=19)


def _by_word_means(reading: pd.DataFrame) -> pd.DataFrame:
    """Every word's geometric mean RT over participants, read by one 'mean-reader'."""
    keys = ["item", "word_index", "word", "log_frequency"]
    means = reading.groupby(keys, as_index=False)["rt_ms"].agg(
        lambda rt: float(np.exp(np.log(rt).mean()))
    )
    return means.assign(participant="mean-reader")


def test_by_word_means_recover_the_planted_slope_with_a_finite_interval(tmp_path):
    reading, words = simulate_study(DESIGN, 3)
    result = analyse_reading(_by_word_means(reading), words, [SIMULATED_MODEL], BY_ITEMS)
    row = result.delta_ll.iloc[0]
    assert np.isfinite([row["slope_ci_low"], row["slope_ci_high"]]).all()
    assert row["slope_ci_low"] <= DESIGN.surprisal_slope <= row["slope_ci_high"]
    assert row["delta_ll_per_word"] > 0 and row["p_permutation"] <= 0.05
    table = binned(result.rows, SIMULATED_MODEL.column)
    assert np.isfinite(table[["ci_low", "ci_high"]].to_numpy()).all()
    assert table["words"].sum() == len(result.rows)  # the interval is over the bin's words
    write_outputs(result, BY_ITEMS, tmp_path)
    assert "one participant, by-word means" in (tmp_path / "summary.md").read_text()


def test_one_participant_cannot_be_held_out():
    reading, words = simulate_study(DESIGN, 3)
    options = replace(BY_ITEMS, fold_by="participants")
    with pytest.raises(TracktaleError, match=r"participants needs at least two.*--fold-by items"):
        analyse_reading(_by_word_means(reading), words, [SIMULATED_MODEL], options)


def test_by_word_means_without_an_effect_are_not_significant():
    reading, words = simulate_study(replace(DESIGN, surprisal_slope=0.0), 4)
    words["surprisal_0"] = np.random.default_rng(0).permutation(words["surprisal_0"])
    result = analyse_reading(_by_word_means(reading), words, [SIMULATED_MODEL], BY_ITEMS)
    assert result.delta_ll["p_permutation"].iloc[0] > 0.05


def test_one_participant_keeps_only_the_item_grouping_in_lmer():
    terms = ["a", "surprisal_0", "surprisal_0_1"]
    slopes = random_slopes(terms, "surprisal", participants=False)
    assert slopes == {"item": ["surprisal_0"]}
    assert lmer_formula(terms, slopes) == (
        "log_rt ~ a + surprisal_0 + surprisal_0_1 + (1 + surprisal_0 || item)"
    )
    slopes = random_slopes(terms, "surprisal-spillover", participants=False)
    assert slopes == {"item": ["surprisal_0", "surprisal_0_1"]}
    for random in ("participant-slope", "intercepts"):
        slopes = random_slopes(terms, random, participants=False)
        assert lmer_formula(terms, slopes) == f"log_rt ~ {' + '.join(terms)} + (1 | item)"


@pytest.mark.parametrize(("slope", "rising"), [(0.15, True), (-0.15, False)])
def test_the_smooth_follows_the_planted_slope(slope, rising):
    reading, words = simulate_study(replace(DESIGN, surprisal_slope=slope), 5)
    rows = reading.merge(words[["item", "word_index", "surprisal_0"]], on=["item", "word_index"])
    curve = smooth(rows, "surprisal_0")
    assert curve["surprisal"].is_monotonic_increasing
    assert len(curve) == 100
    assert curve["surprisal"].iloc[[0, -1]].tolist() == [rows["surprisal_0"].min(),
                                                          rows["surprisal_0"].max()]  # fmt: skip
    low, high = curve["rt_ms"].iloc[0], curve["rt_ms"].iloc[-1]
    assert (high > low) == rising
    # Drawn over the binned means: the curve stays within their range (give or take noise).
    bins = binned(rows, "surprisal_0")
    assert bins["rt_ms"].min() * 0.8 < curve["rt_ms"].median() < bins["rt_ms"].max() * 1.2


def test_the_figure_draws_the_smooth_over_the_binned_means():
    reading, words = simulate_study(DESIGN, 6)
    rows = reading.merge(words[["item", "word_index", "surprisal_0"]], on=["item", "word_index"])
    axes = rt_figure(rows, "surprisal_0", "model").axes[0]
    labels = [text.get_text() for text in axes.get_legend().get_texts()]
    assert labels[0].startswith("lowess") and labels[1].startswith("decile mean")
    curve = next(line for line in axes.get_lines() if line.get_label().startswith("lowess"))
    assert len(curve.get_xdata()) == len(smooth(rows, "surprisal_0"))
