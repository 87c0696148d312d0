"""The equivalence test of recency (TOST) and the primary-test declaration."""

import numpy as np
import pytest

from tracktale.analysis.power.simulate import SimulationParams, human_design, simulate_outcomes
from tracktale.analysis.stats.glm import design_frame, fit_human_glm
from tracktale.analysis.stats.primary import (
    PRIMARY_TESTS,
    RECENCY_INTERVAL_LABELS,
    RECENCY_INTERVALS,
    recency_equivalence,
    recency_permutation_se,
)
from tracktale.errors import TracktaleError


def _study(human_set, item_sd: float, seed: int):
    params = SimulationParams(recency=0.0, item_sd=item_sd)
    trials = simulate_outcomes(human_design(human_set), 200, params, np.random.default_rng(seed))
    trials = trials[trials["role"] == "main"]
    fit = fit_human_glm(trials, recency="focus", clustering="two-way", reference="t")
    frame, _ = design_frame(trials, recency="focus", extra=("item_id",))
    return fit, frame


@pytest.fixture(scope="module")
def recency_fit(human_set):
    return _study(human_set, 0.1, 9)


@pytest.mark.parametrize("interval", RECENCY_INTERVALS)
def test_tost_claims_equivalence_only_when_the_90_percent_interval_is_inside(recency_fit, interval):
    fit, frame = recency_fit
    wide = recency_equivalence(fit, 20.0, interval, frame)
    narrow = recency_equivalence(fit, 0.01, interval, frame)
    assert wide["equivalent"] and wide["p_tost"] < 0.05
    assert not narrow["equivalent"] and narrow["p_tost"] > 0.4
    for result in (wide, narrow):
        inside = -result["bound"] < result["ci90_low"] and result["ci90_high"] < result["bound"]
        assert inside == result["equivalent"]
        assert result["interval"] == RECENCY_INTERVAL_LABELS[interval]
    if interval == "two-way":
        assert wide["df"] == fit.df  # the two-way GLM's t(items - 1), as its own test
    else:
        # Recency varies within two complexity levels only: far fewer df than items.
        assert 2 <= wide["df"] < fit.n_items - 4


def test_points_are_the_logistic_slope_at_the_mean_accuracy(recency_fit):
    fit, frame = recency_fit
    result = recency_equivalence(fit, frame=frame)
    b = fit.table.set_index("term").loc["recency_c", "b"]
    accuracy = fit.result.model.endog.mean()
    assert result["estimate_points"] == pytest.approx(100 * accuracy * (1 - accuracy) * b)
    assert result["interval"] == RECENCY_INTERVAL_LABELS["larger"]  # the default
    permuted = recency_equivalence(fit, 3.0, "permutation", frame)
    two_way = recency_equivalence(fit, 3.0, "two-way")
    assert result["se_points"] == max(permuted["se_points"], two_way["se_points"])
    assert result["df"] == permuted["df"]


def test_the_permutation_variance_is_that_of_the_relabelled_contrast(recency_fit):
    """The closed form against the variance of T over random relabellings within levels."""
    from tracktale.analysis.stats.permutation import item_residuals

    fit, frame = recency_fit
    mu = np.asarray(fit.result.fittedvalues)
    items = item_residuals(frame, mu, "recency_c", "complexity")
    weights = frame.assign(w=mu * (1 - mu)).groupby("item_id", sort=True)["w"].sum()
    rng = np.random.default_rng(3)
    drawn, binomial = np.zeros(20000), 0.0
    for _, level in items.groupby("stratum"):
        centred = (level["value"] - level["value"].mean()).to_numpy()
        shuffled = rng.permuted(np.broadcast_to(centred, (20000, len(centred))), axis=1)
        drawn += shuffled @ level["residual"].to_numpy()
        binomial += float(centred**2 @ weights[level.index])
    se, df = recency_permutation_se(fit, frame)
    model_se = float(np.sqrt(fit.result.normalized_cov_params.loc["recency_c", "recency_c"]))
    varying = [len(level) for _, level in items.groupby("stratum") if level["value"].nunique() > 1]
    informative = sum(varying) - len(varying)
    assert df == informative - 1  # recency, fitted, takes one
    corrected = drawn.var() / binomial * informative / (informative - 1)
    assert se / model_se == pytest.approx(np.sqrt(corrected), rel=0.015)


def test_the_permutation_se_grows_with_the_items_spread(human_set):
    """Items that differ widen the interval beyond the binomial one; the two-way SE lags."""
    ratios = []
    for item_sd in (0.0, 1.0):
        fit, frame = _study(human_set, item_sd, 4)
        se, _ = recency_permutation_se(fit, frame)
        model_se = float(np.sqrt(fit.result.normalized_cov_params.loc["recency_c", "recency_c"]))
        ratios.append(se / model_se)
    assert ratios[0] < 1.6 < 2.0 < ratios[1]


def test_the_permutation_interval_needs_the_frame_and_a_known_interval(recency_fit):
    fit, frame = recency_fit
    for interval in ("larger", "permutation"):
        with pytest.raises(TracktaleError, match="design frame"):
            recency_equivalence(fit, 3.0, interval)
    with pytest.raises(TracktaleError, match="unknown recency interval"):
        recency_equivalence(fit, 3.0, "wald", frame)  # type: ignore[arg-type]
    with pytest.raises(TracktaleError, match="rows"):
        recency_permutation_se(fit, frame.iloc[:-1])


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
