import math

import pandas as pd
import pytest

from tracktale.analysis.data.catalog import (
    describe_model,
    parse_size,
    training_step,
    training_tokens,
)
from tracktale.analysis.stats.proportions import (
    accuracy_table,
    clustered_accuracy_interval,
    mean_interval,
    wilson_interval,
)


def test_wilson_interval_matches_known_values():
    # Reference values from the closed form (e.g. Newcombe 1998, table I: 0/10 and 81/263).
    low, high = wilson_interval(0, 10)
    assert low == 0 and high == pytest.approx(0.2775, abs=1e-4)
    low, high = wilson_interval(81, 263)
    assert (low, high) == pytest.approx((0.2553, 0.3662), abs=1e-4)
    assert all(math.isnan(v) for v in wilson_interval(0, 0))


def test_accuracy_table_groups_and_skips_missing_values():
    trials = pd.DataFrame(
        {"task": ["a", "a", "a", "b", "b"], "correct": [1.0, 0.0, 1.0, 1.0, math.nan]}
    )
    table = accuracy_table(trials, ["task"]).set_index("task")
    assert table.loc["a", "n"] == 3 and table.loc["a", "accuracy"] == pytest.approx(2 / 3)
    assert table.loc["b", "n"] == 1 and table.loc["b", "ci_high"] == 1.0
    assert mean_interval([0.5, 0.7])[0] == pytest.approx(0.6)


@pytest.mark.parametrize(
    ("model_id", "family", "size", "instruct", "label"),
    [
        ("EleutherAI/pythia-1.4b", "Pythia", 1.4e9, False, "Pythia 1.4B"),
        ("allenai/OLMo-2-1124-13B-Instruct", "OLMo 2", 13e9, True, "OLMo 2 13B Instruct"),
        ("Qwen/Qwen2.5-72B-Instruct", "other", 72e9, True, "Qwen2.5-72B-Instruct"),
        ("EleutherAI/pythia-410m-deduped", "Pythia", 410e6, False, "Pythia 410M"),
        ("someone/tiny-gpt", "other", math.nan, False, "tiny-gpt"),
    ],
)
def test_models_are_described_from_the_catalog_or_their_name(
    model_id, family, size, instruct, label
):
    description = describe_model(model_id)
    assert description.family == family
    assert description.instruct is instruct
    assert description.label == label
    if math.isnan(size):
        assert math.isnan(description.nominal_parameters)
    else:
        assert description.nominal_parameters == pytest.approx(size)


def test_training_steps_and_tokens_come_from_revision_names():
    assert training_step("step1000") == 1000
    assert training_step("stage1-step140000-tokens294B") == 140000
    assert training_tokens("stage1-step140000-tokens294B") == pytest.approx(2.94e11)
    assert math.isnan(training_step("main")) and math.isnan(training_step(None))
    assert math.isnan(parse_size("big"))


def test_wilson_comes_from_statsmodels_and_does_not_collapse():
    from statsmodels.stats.proportion import proportion_confint

    assert wilson_interval(20, 20) == pytest.approx(proportion_confint(20, 20, method="wilson"))
    assert wilson_interval(20, 20)[0] == pytest.approx(0.8389, abs=1e-4)


@pytest.mark.parametrize("n", [1, 3, 7, 12, 33, 550])
def test_none_or_all_correct_bounds_the_interval_at_exactly_0_or_1(n):
    from tracktale.analysis.report.tables import format_cell, to_latex

    # Wilson's 0/3 came out as 5.55e-17, printed "5.55e-17" in the report's tables.
    assert wilson_interval(0, n)[0] == 0.0 and wilson_interval(n, n)[1] == 1.0
    table = pd.DataFrame(
        {"accuracy": [0.0, 1.0], "ci_low": [wilson_interval(0, n)[0], wilson_interval(n, n)[0]]}
    )
    printed = [format_cell(value) for value in table["ci_low"]] + [to_latex(table, "t", "t")]
    assert not any("e-" in text for text in printed), printed
    assert format_cell(wilson_interval(0, n)[0]) == "0.000"


def _clustered(seed: int, people: int = 40, trials: int = 18, spread: float = 1.0):
    import numpy as np

    rng = np.random.default_rng(seed)
    ability = rng.normal(1.2, spread, people)
    p = 1 / (1 + np.exp(-ability))
    correct = (rng.random((people, trials)) < p[:, None]).astype(float).ravel()
    return correct, np.repeat([f"p{i}" for i in range(people)], trials)


def test_clustered_interval_resamples_participants_and_is_wider_than_pooled_wilson():
    correct, who = _clustered(1)
    accuracy, low, high, method = clustered_accuracy_interval(correct, who)
    assert method == "participant bootstrap (BCa)"
    assert accuracy == pytest.approx(correct.mean())
    wilson_low, wilson_high = wilson_interval(correct.sum(), len(correct))
    assert high - low > 1.2 * (wilson_high - wilson_low)  # people differ: trials are clustered
    assert clustered_accuracy_interval(correct, who) == (accuracy, low, high, method)  # seeded


def test_clustered_interval_coverage_beats_pooled_wilson():
    # 60 studies of 30 people with clearly different abilities; the true pooled accuracy
    # is the expectation over people. Wilson over pooled trials covers too rarely.
    import numpy as np
    from scipy import integrate, special

    truth = integrate.quad(
        lambda a: special.expit(a) * np.exp(-((a - 1.2) ** 2) / 2) / np.sqrt(2 * np.pi),
        -10, 12,
    )[0]  # fmt: skip
    covered = {"bootstrap": 0, "wilson": 0}
    for seed in range(60):
        correct, who = _clustered(100 + seed, people=30)
        _, low, high, _ = clustered_accuracy_interval(correct, who, resamples=999)
        covered["bootstrap"] += low <= truth <= high
        w_low, w_high = wilson_interval(correct.sum(), len(correct))
        covered["wilson"] += w_low <= truth <= w_high
    assert covered["bootstrap"] >= 51  # about 95% of 60 (seeded: no flakiness)
    assert covered["wilson"] < covered["bootstrap"]


def test_clustered_interval_falls_back_where_the_bootstrap_cannot_work():
    everyone_right = clustered_accuracy_interval([1.0] * 40, [i // 4 for i in range(40)])
    assert everyone_right[:2] == (1.0, pytest.approx(0.9124, abs=1e-4))
    assert everyone_right[3] == "Wilson (no variation between them)"
    two_people = clustered_accuracy_interval([1, 0, 1, 1], ["a", "a", "b", "b"])
    assert two_people[3] == "Wilson (fewer than 3 participants)"


def test_accuracy_table_with_clusters_names_its_interval():
    correct, who = _clustered(2, people=12)
    trials = pd.DataFrame({"task": "a", "correct": correct, "agent": who})
    table = accuracy_table(trials, ["task"], cluster="agent")
    assert table.loc[0, "n_clusters"] == 12 and table.loc[0, "interval"].startswith("participant")
    assert table.loc[0, "ci_low"] < table.loc[0, "accuracy"] < table.loc[0, "ci_high"]
