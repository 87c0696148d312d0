"""The equivalence test of recency (TOST) and the primary-test declaration."""

import numpy as np
import pytest

from tracktale.analysis.power.simulate import SimulationParams, human_design, simulate_outcomes
from tracktale.analysis.stats.glm import fit_human_glm
from tracktale.analysis.stats.primary import PRIMARY_TESTS, recency_equivalence


@pytest.fixture(scope="module")
def recency_fit(human_set):
    params = SimulationParams(recency=0.0, item_sd=0.1)
    trials = simulate_outcomes(human_design(human_set), 200, params, np.random.default_rng(9))
    trials = trials[trials["role"] == "main"]
    return fit_human_glm(trials, recency="focus", clustering="two-way", reference="t")


def test_tost_claims_equivalence_only_when_the_90_percent_interval_is_inside(recency_fit):
    wide = recency_equivalence(recency_fit, bound_points=20.0)
    narrow = recency_equivalence(recency_fit, bound_points=0.01)
    assert wide["equivalent"] and wide["p_tost"] < 0.05
    assert not narrow["equivalent"] and narrow["p_tost"] > 0.4
    for result in (wide, narrow):
        inside = -result["bound"] < result["ci90_low"] and result["ci90_high"] < result["bound"]
        assert inside == result["equivalent"]
        assert result["df"] < 100  # the two-way GLM's t(items - 1), as its own test


def test_points_are_the_logistic_slope_at_the_mean_accuracy(recency_fit):
    result = recency_equivalence(recency_fit)
    b = recency_fit.table.set_index("term").loc["recency_c", "b"]
    accuracy = recency_fit.result.model.endog.mean()
    assert result["estimate_points"] == pytest.approx(100 * accuracy * (1 - accuracy) * b)


def test_three_hypotheses_have_one_declared_primary_test_each():
    assert list(PRIMARY_TESTS) == ["complexity", "interaction", "recency"]


def _fit(b: float, p: float):
    from types import SimpleNamespace

    import pandas as pd

    table = pd.DataFrame(
        {"term": ["complexity_c", "task_s", "complexity_c:task_s"], "b": b, "p": [p, p, p]}
    )
    return SimpleNamespace(table=table, fixed=table)


def test_the_interaction_primary_is_the_two_way_glm_even_where_glmer_leads():
    from types import SimpleNamespace

    import pandas as pd

    from tracktale.analysis.stats.primary import primary_tables

    mixed = SimpleNamespace(
        fits={"model 1": _fit(0.3, 0.01)}, ladders=True, random="maximal",
        lrt=pd.DataFrame(columns=["test", "p"]),
    )  # fmt: skip
    fits = {"glm2way_complexity": _fit(0.2, 0.2), "glm_complexity": _fit(0.1, 0.3), "mixed": mixed}
    primary, robustness = primary_tables(fits, "glmer")
    row = primary.set_index("hypothesis").loc["interaction"]
    assert row["test"] == "GLM, two-way clustered" and row["p"] == 0.2
    assert "glmer (maximal, ladder)" in set(robustness["test"])
    primary, _ = primary_tables(fits, "glmer", interaction_test="lead")
    row = primary.set_index("hypothesis").loc["interaction"]
    assert row["test"] == "glmer (maximal, ladder)" and row["p"] == 0.01
    assert row["declared"] == "the leading model's interaction term"
