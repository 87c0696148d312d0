"""The recency test by item permutation (tracktale.analysis.stats.permutation)."""

from __future__ import annotations

import itertools
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from tracktale.analysis.narrative.human_inference import (
    MODELS_COMPLEXITY_NOTE,
    HumanInference,
    _complexity_permutation,
    _recency_permutation,
    _with_permutation_p,
    permutation_sentence,
)
from tracktale.analysis.power.calibration import NullScenario, null_studies
from tracktale.analysis.power.simulate import SimulationParams, human_design, simulate_outcomes
from tracktale.analysis.stats.permutation import (
    complexity_test_of_trials,
    recency_test_of_trials,
    stratified_permutation_p,
)
from tracktale.errors import TracktaleError


def test_the_permutation_p_matches_full_enumeration_of_a_small_design():
    values = np.array([0.0, 0.0, 1.0, 1.0, 0.0, 1.0, 2.0])
    residuals = np.array([-1.2, 0.3, 0.9, 1.4, -0.5, 0.1, 0.7])
    strata = np.array([3, 3, 3, 3, 4, 4, 4])
    observed, p = stratified_permutation_p(values, residuals, strata, permutations=20000, seed=1)
    # Every relabelling within the strata, enumerated: the exact p the Monte Carlo estimates.
    centred = values.copy()
    for level in (3, 4):
        centred[strata == level] -= centred[strata == level].mean()
    assert observed == pytest.approx(centred @ residuals)
    exact = []
    for first in set(itertools.permutations(centred[:4])):
        for second in set(itertools.permutations(centred[4:])):
            exact.append(abs(np.dot([*first, *second], residuals)) >= abs(observed) - 1e-12)
    assert p == pytest.approx(np.mean(exact), abs=0.01)


def test_no_variation_within_any_stratum_gives_no_p():
    values = np.array([0.0, 0.0, 1.0, 1.0])
    observed, p = stratified_permutation_p(values, np.ones(4), np.array([1, 1, 2, 2]), 99)
    assert observed == 0.0 and np.isnan(p)


def _study(recency: float, seed: int, complexity: float = -0.4) -> pd.DataFrame:
    from tests.conftest import _generated

    design = human_design(_generated("narrative", "human", 1))
    params = SimulationParams(complexity=complexity, recency=recency, item_sd=0.2, guessers=0.0)
    trials = simulate_outcomes(design, 96, params, np.random.default_rng(seed))
    trials["source"] = "simulated"
    return trials[trials["role"] == "main"]


def test_a_real_recency_effect_is_found_and_its_sign_kept():
    test = recency_test_of_trials(_study(recency=-1.0, seed=3), permutations=1999)
    assert test.p < 0.01 and test.statistic < 0
    assert test.informative_items == 20 and test.items == 36
    assert test.strata == 4 and test.informative_strata == 2
    assert test.p >= 1 / 2000


def test_null_p_values_spread_over_the_unit_interval(human_set):
    """30 null studies at item SD 0.5: no p piles up near 0 (the Wald tests' failure)."""
    scenario = NullScenario(participants=48, item_sd=0.5, seed=11)
    ps = [recency_test_of_trials(a, permutations=999).p for _, a in null_studies(
        human_set, scenario, range(30))]  # fmt: skip
    assert sum(p < 0.05 for p in ps) <= 5  # expected 1.5; P(>= 6) < 0.005
    assert 0.3 < float(np.median(ps)) < 0.7


def test_a_recency_value_that_varies_within_an_item_is_refused():
    trials = _study(recency=0.0, seed=1)
    first = trials["item_id"].iloc[0]
    rows = trials.index[trials["item_id"] == first]
    trials.loc[rows[0], "focus"] = trials.loc[rows[0], "focus"] + 1
    with pytest.raises(TracktaleError, match="focus varies within item"):
        recency_test_of_trials(trials, permutations=99)


def _options(permutations: int) -> SimpleNamespace:
    return SimpleNamespace(recency="focus", task_coding="sum", permutations=permutations)


def test_the_report_skips_the_permutation_test_when_asked_for_zero_relabellings():
    out = HumanInference(method="glm-2way")
    _recency_permutation(_study(recency=0.0, seed=2), _options(0), out)
    assert "recency_permutation" not in out.fits and out.warnings == []


def test_the_report_warns_and_goes_on_when_recency_is_not_an_item_property():
    trials = _study(recency=0.0, seed=1)
    first = trials["item_id"].iloc[0]
    rows = trials.index[trials["item_id"] == first]
    trials.loc[rows[0], "focus"] = trials.loc[rows[0], "focus"] + 1
    out = HumanInference(method="glm-2way")
    _recency_permutation(trials, _options(99), out)
    assert "recency_permutation" not in out.fits
    assert out.warnings == [
        f"the recency permutation test was not run: focus varies within item {first}: the "
        "item permutation test needs it to be a property of the item"
    ]


def test_a_recency_constant_within_every_complexity_gives_no_p_and_a_warning():
    trials = _study(recency=0.0, seed=1)
    trials["focus"] = trials["complexity"]
    out = HumanInference(method="glm-2way")
    _recency_permutation(trials, _options(99), out)
    test = out.fits["recency_permutation"]
    assert np.isnan(test.p) and test.informative_items == 0
    assert out.warnings == ["recency (focus) does not vary within any complexity"]
    table = pd.DataFrame({"term": ["complexity_c", "recency_c"], "p": [0.5, 0.2]})
    assert _with_permutation_p(table, out)["p_permutation"].isna().all()


def test_a_model_1_that_cannot_be_fitted_is_one_clear_error(monkeypatch):
    from tracktale.analysis.stats import glm

    def fails(*_args, **_kwargs):
        raise ValueError("singular design matrix")

    monkeypatch.setattr(glm, "fit_clustered_logit", fails)
    with pytest.raises(TracktaleError, match="^model 1 for the recency permutation test: singular"):
        recency_test_of_trials(_study(recency=0.0, seed=1), permutations=99)


def test_only_the_recency_rows_get_the_permutation_p():
    out = HumanInference(method="glm-2way")
    _recency_permutation(_study(recency=0.0, seed=4), _options(199), out)
    table = pd.DataFrame({"term": ["Intercept", "complexity_c", "recency_c"], "p": [0.1] * 3})
    with_p = _with_permutation_p(table, out)
    assert with_p["p_permutation"].iloc[:2].isna().all()
    assert with_p["p_permutation"].iloc[2] == out.fits["recency_permutation"].p
    assert "p_permutation" not in _with_permutation_p(table.iloc[:2], out)


def test_a_real_complexity_effect_is_found_and_its_sign_kept():
    test = complexity_test_of_trials(
        _study(recency=0.0, seed=3, complexity=-0.4), permutations=1999
    )
    assert test.p < 0.01 and test.statistic < 0
    assert test.items == 36 and test.strata == 1 and test.informative_items == 36
    assert test.test == "complexity" and test.row()["test"] == "complexity"
    rising = complexity_test_of_trials(
        _study(recency=0.0, seed=3, complexity=0.4), permutations=999
    )
    assert rising.statistic > 0 and rising.p < 0.01


def test_complexity_null_p_values_spread_over_the_unit_interval(human_set):
    """30 null studies at item SD 0.5 and N 48, the design where the models over-reject."""
    scenario = NullScenario(participants=48, item_sd=0.5, seed=12)
    ps = [complexity_test_of_trials(a, permutations=999).p for _, a in null_studies(
        human_set, scenario, range(30))]  # fmt: skip
    assert sum(p < 0.05 for p in ps) <= 5  # expected 1.5; P(>= 6) < 0.005
    assert 0.3 < float(np.median(ps)) < 0.7


def test_a_constant_complexity_gives_no_p_and_a_warning():
    trials = _study(recency=0.0, seed=1).assign(complexity=2)
    out = HumanInference(method="glm-2way")
    _complexity_permutation(trials, _options(99), out)
    test = out.fits["complexity_permutation"]
    assert np.isnan(test.p) and test.informative_items == 0
    assert out.warnings == ["complexity does not vary between items: no complexity test"]


def test_a_complexity_that_varies_within_an_item_is_a_warning_not_a_test():
    trials = _study(recency=0.0, seed=1)
    first = trials["item_id"].iloc[0]
    trials.loc[trials.index[trials["item_id"] == first][0], "complexity"] += 1
    out = HumanInference(method="glm-2way")
    _complexity_permutation(trials, _options(99), out)
    assert "complexity_permutation" not in out.fits
    assert out.warnings == [
        f"the complexity permutation test was not run: complexity varies within item {first}: "
        "the item permutation test needs it to be a property of the item"
    ]


def test_a_task_only_model_that_cannot_be_fitted_is_one_clear_error(monkeypatch):
    from tracktale.analysis.stats import glm

    def fails(*_args, **_kwargs):
        raise ValueError("singular design matrix")

    monkeypatch.setattr(glm, "fit_clustered_logit", fails)
    with pytest.raises(TracktaleError, match="^the task-only model for the complexity perm"):
        complexity_test_of_trials(_study(recency=0.0, seed=1), permutations=99, statistic="score")


def test_one_task_gives_an_intercept_only_null_model():
    trials = _study(recency=0.0, seed=5, complexity=-0.6)
    test = complexity_test_of_trials(trials[trials["task"] == "explicit"], permutations=999)
    assert test.p < 0.05 and test.statistic < 0


def test_only_model_1s_complexity_main_effect_gets_the_complexity_permutation_p():
    out = HumanInference(method="glm-2way")
    _complexity_permutation(_study(recency=0.0, seed=4), _options(199), out)
    _recency_permutation(_study(recency=0.0, seed=4), _options(199), out)
    terms = ["Intercept", "complexity_c", "task_s", "complexity_c:task_s", "recency_c"]
    table = pd.DataFrame({"model": ["model 1"] * 4 + ["model 2"], "term": terms, "p": [0.1] * 5})
    with_p = _with_permutation_p(table, out)["p_permutation"].tolist()
    assert with_p[1] == out.fits["complexity_permutation"].p
    assert with_p[4] == out.fits["recency_permutation"].p
    assert np.isnan([with_p[0], with_p[2], with_p[3]]).all()
    model2 = table.assign(model="model 2").iloc[:4]
    assert "p_permutation" not in _with_permutation_p(model2, out)


def test_zero_relabellings_leave_out_the_permutations_but_not_the_complexity_t_test():
    """``--permutations 0`` drops the permutation tests; the default complexity test draws none."""
    out = HumanInference(method="glm-2way")
    trials = _study(recency=0.0, seed=2)
    _complexity_permutation(trials, _options(0), out)
    _recency_permutation(trials, _options(0), out)
    test = out.fits["complexity_permutation"]
    assert test.permutations == 0 and 0 < test.p <= 1
    assert "recency_permutation" not in out.fits
    permuted = SimpleNamespace(**vars(_options(0)), complexity_statistic="logit-two-way")
    out = HumanInference(method="glm-2way")
    _complexity_permutation(trials, permuted, out)
    assert "complexity_permutation" not in out.fits


@pytest.mark.parametrize("permutations", [0, 999])
def test_both_complexity_sentences_end_with_the_benchmarked_rate_of_the_models_p(permutations):
    test = SimpleNamespace(
        test="complexity", permutations=permutations, items=36, p=0.2,
        method="item permutation across all items (score at the task-only model)",
    )  # fmt: skip
    sentence = permutation_sentence(test)
    assert sentence.endswith(MODELS_COMPLEXITY_NOTE) and "6.6-9%" in sentence
    assert ("t(34)" in sentence) == (permutations == 0)
