"""The arithmetic analysis: scored rows, bootstrap intervals, Tables 2-3, figures and files."""

import functools

import numpy as np
import pandas as pd
import pytest

from tracktale.analysis.arithmetic import (
    POOLED,
    accuracy_table,
    bootstrap_interval,
    factor_table,
    generation_change,
    horizon_table,
    rate_interval,
    scored_rows,
)
from tracktale.analysis.arithmetic.figures import plot_faa_by_horizon
from tracktale.analysis.report.tables import to_latex
from tracktale.errors import TracktaleError
from tracktale.stimuli.registry import get_paradigm

DATASETS = ["int_1-10_add_lb1", "int_1-10_mul_lb1", "float_1-10_mixed_lb1", "float_1-10_mixed_lb4"]


@functools.cache
def stimulus_set():
    return get_paradigm("arithmetic").generate_set(
        "model", 1, {"datasets": DATASETS, "horizons": [5, 25, 95], "per_horizon": 10}
    )


def trace(item, steps):
    return "\n".join(f"Step {n}: S{n + 2} = ..." for n in range(1, steps + 1))


def results():
    """Model 'good' answers every item right after a full trace, except multiplication at
    95 steps, where it stops early with a wrong answer and corrects itself; model 'silent'
    writes nothing parseable; other tasks and unknown items must be ignored."""
    rows = []
    for item in stimulus_set():
        horizon = item.condition["horizon"]
        if item.condition["operation"] == "mul" and horizon == 95:
            output = (
                trace(item, 40) + "\n<answer>1</answer> no: <answer>" + item.answer + "</answer>"
            )
        else:
            output = trace(item, horizon) + f"\n<answer>{item.answer}</answer>"
        rows.append(("org/good", None, item.item_id, "explicit", output))
        rows.append(("org/silent", "step1000", item.item_id, "explicit", "I am not sure."))
        rows.append(("org/good", None, item.item_id, "implicit", None))
    rows.append(("org/good", None, "0000000000000000", "explicit", "<answer>1</answer>"))
    return pd.DataFrame(rows, columns=["model_id", "revision", "item_id", "task", "output"])


def test_scored_rows_join_conditions_and_rescore_from_output():
    rows = scored_rows(results(), stimulus_set())
    assert len(rows) == 2 * len(stimulus_set())
    assert set(rows["model"]) == {"org/good", "org/silent@step1000"}
    good = rows[rows["model"] == "org/good"]
    wrong = good[(good["operation"] == "mul") & (good["horizon"] == 95)]
    assert not wrong["correct"].any() and wrong["correct_any"].all()
    assert good.drop(wrong.index)["correct"].all()
    assert (wrong["step_following"] == "under").all()


def test_given_score_columns_are_used_as_they_are():
    rows = scored_rows(results(), stimulus_set())
    rows["correct"] = False
    again = scored_rows(rows.drop(columns=["model", "dataset", "horizon"]), stimulus_set())
    assert not again["correct"].any()


def test_rows_with_empty_scores_are_rescored_not_read_as_true():
    rows = scored_rows(results(), stimulus_set())
    rows["correct"] = rows["correct"].astype(object)
    rows.loc[rows["model"] == "org/silent@step1000", "correct"] = None
    again = scored_rows(rows.drop(columns=["model", "dataset", "horizon"]), stimulus_set())
    assert not again[again["model"] == "org/silent@step1000"]["correct"].any()


def test_missing_columns_and_foreign_rows_are_errors():
    with pytest.raises(TracktaleError, match="no column 'task'"):
        scored_rows(results().drop(columns=["task"]), stimulus_set())
    with pytest.raises(TracktaleError, match="no explicit-task result"):
        scored_rows(results().assign(task="implicit"), stimulus_set())
    with pytest.raises(TracktaleError, match="neither the score columns nor 'output'"):
        scored_rows(results().drop(columns=["output"]), stimulus_set())


def test_bootstrap_interval_covers_the_rate_and_shrinks_with_n():
    low, high = bootstrap_interval(60, 100)
    assert low < 0.6 < high and 0.08 < high - low < 0.22
    wide = high - low
    low, high = bootstrap_interval(6000, 10000)
    assert low < 0.6 < high and high - low < wide / 5
    # The binomial shortcut matches resampling the 0/1 outcomes themselves.
    rng = np.random.default_rng(1)
    outcomes = np.repeat([1, 0], [60, 40])
    resampled = rng.choice(outcomes, size=(4000, 100)).mean(axis=1)
    assert np.quantile(resampled, [0.025, 0.975]) == pytest.approx(
        bootstrap_interval(60, 100), abs=0.02
    )
    assert bootstrap_interval(0, 0) != bootstrap_interval(0, 0)  # nan for no items
    # The paper's bootstrap collapses when every item is right: that is why it is not the default.
    assert bootstrap_interval(10, 10) == (1.0, 1.0)


def test_the_default_interval_does_not_collapse_at_every_item_right():
    low, high = rate_interval(20, 20)
    assert high == 1.0 and low == pytest.approx(0.8389, abs=1e-4)  # Wilson at 20/20
    low, high = rate_interval(0, 20)
    assert low == 0.0 and high == pytest.approx(0.1611, abs=1e-4)
    # Away from the edges Wilson and the bootstrap agree.
    assert rate_interval(60, 100) == pytest.approx(
        rate_interval(60, 100, interval="bootstrap"), abs=0.02
    )
    with pytest.raises(TracktaleError, match="unknown interval 'bca'"):
        rate_interval(1, 2, interval="bca")


def test_accuracy_table_is_table_3():
    table = accuracy_table(scored_rows(results(), stimulus_set()))
    assert list(table["model"]) == ["org/silent@step1000", "org/good"]  # sorted by FAA
    good = table.iloc[1]
    n = len(stimulus_set())
    wrong = 10  # multiplication at 95 steps
    assert good["faa"] == pytest.approx(100 * (n - wrong) / n)
    assert good["caa"] == 100 and good["faa_caa_gap"] == pytest.approx(100 * wrong / n)
    assert good["ci_low"] < good["faa"] < good["ci_high"]
    assert good["half_width"] == pytest.approx((good["ci_high"] - good["ci_low"]) / 2)
    silent = table.iloc[0]
    assert silent["faa"] == silent["caa"] == silent["par"] == 0


def test_horizon_table_and_factor_table():
    rows = scored_rows(results(), stimulus_set())
    by_horizon = horizon_table(rows)
    good = by_horizon[by_horizon["model"] == "org/good"].set_index("horizon")
    assert good.loc[5, "faa"] == 100 and good.loc[95, "faa"] == 75
    assert good.loc[95, "faa_caa_gap"] == 25
    factors = factor_table(rows)
    pooled = factors[(factors["model"] == POOLED)]
    # Operation compares look-back-1 datasets only; look-back the mixed ones only.
    operation = pooled[pooled["factor"] == "operation"].set_index("level")
    assert set(operation.index) == {"add", "mul", "mixed"}
    assert operation.loc["add", "n"] == 2 * 30 and operation.loc["mul", "faa"] == pytest.approx(
        100 / 3
    )
    lookback = pooled[pooled["factor"] == "lookback"].set_index("level")
    assert set(lookback.index) == {"1", "4"} and lookback.loc["4", "n"] == 60
    data_type = pooled[pooled["factor"] == "data_type"].set_index("level")
    assert set(data_type.index) == {"int", "float"}
    assert set(factor_table(rows, by_horizon=True)["horizon"]) == {5, 25, 95}


def test_generation_change_is_table_2():
    table = generation_change(scored_rows(results(), stimulus_set())).set_index("model")
    good = table.loc["org/good"]
    assert (good["short"], good["long"]) == (5, 95)
    assert good["par_diff"] == 0
    assert good["exact_short"] == 100 and good["exact_long"] == 75
    assert good["exact_diff"] == 25 and good["under_diff"] == -25 and good["over_diff"] == 0
    silent = table.loc["org/silent@step1000"]
    assert silent["par_short"] == 0 and silent["under_short"] == 100


def test_latex_escapes_and_formats():
    table = pd.DataFrame({"model": ["a_b & c%"], "faa": [12.3456], "gap": [float("nan")]})
    tex = to_latex(table, "FAA", "faa", digits=2)
    assert r"a\_b \& c\%" in tex and "12.35" in tex and "12.346" not in tex
    assert r"\begin{tabular}{lrr}" in tex and r"\bottomrule" in tex


def test_same_data_same_files(tmp_path):
    table = horizon_table(scored_rows(results(), stimulus_set()), n_boot=100)
    first = plot_faa_by_horizon(table, tmp_path / "first")
    second = plot_faa_by_horizon(table, tmp_path / "second")
    for one, other in zip(first.paths.values(), second.paths.values(), strict=True):
        if one.suffix != ".png":  # no timestamps or random ids in PDF and SVG
            assert one.read_bytes() == other.read_bytes(), one.name
