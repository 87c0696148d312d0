import math

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
import statsmodels.formula.api as smf

from tracktale.analysis.power.simulate import SimulationParams, human_design, simulate_outcomes
from tracktale.analysis.stats.glm import design_frame, fit_human_glm
from tracktale.errors import TracktaleError


def _simulate(design, n, params, seed):
    return simulate_outcomes(design, n, params, np.random.default_rng(seed)).query("role == 'main'")


def test_clustered_standard_errors_equal_a_direct_statsmodels_fit(human_set):
    trials = _simulate(human_design(human_set), 30, SimulationParams(), 1)
    fit = fit_human_glm(trials)
    frame = trials.copy()
    frame["complexity_c"] = frame["complexity"] - frame["complexity"].mean()
    frame["task_s"] = (frame["task"] == "explicit") - 0.5  # the default: explicit +0.5
    direct = smf.glm(
        "correct ~ complexity_c * task_s", data=frame, family=sm.families.Binomial()
    ).fit(cov_type="cluster", cov_kwds={"groups": pd.factorize(frame["agent"])[0]})
    table = fit.table.set_index("term")
    assert table["b"].to_numpy() == pytest.approx(direct.params.to_numpy(), rel=1e-8)
    assert table["se"].to_numpy() == pytest.approx(direct.bse.to_numpy(), rel=1e-8)
    assert table["p"].to_numpy() == pytest.approx(direct.pvalues.to_numpy(), rel=1e-6)
    naive = smf.glm("correct ~ complexity_c * task_s", data=frame, family=sm.families.Binomial())
    # Clustering matters here: the naive SEs differ, so the equality above is not vacuous.
    assert not np.allclose(naive.fit().bse, direct.bse, rtol=1e-3)
    assert fit.n_clusters == 30 and fit.n_obs == len(trials)


def test_missing_values_are_dropped_before_the_cluster_groups_are_built(human_set):
    trials = _simulate(human_design(human_set), 24, SimulationParams(), 2).reset_index(drop=True)
    holed = trials.astype({"complexity": float}).copy()
    # Holes at the start of some clusters: misaligned groups would shift every later row.
    holed.loc[[0, 1, 40, 41, 42, 300], "complexity"] = math.nan
    fit = fit_human_glm(holed)
    clean = fit_human_glm(holed.dropna(subset=["complexity"]))
    assert fit.n_dropped == 6 and fit.n_obs == len(trials) - 6
    pd.testing.assert_frame_equal(fit.table, clean.table)
    frame, dropped = design_frame(holed)
    assert dropped == 6 and not frame.isna().any().any()


def test_parameter_recovery_in_the_human_design(human_set):
    """The true coefficients lie inside the 95% CIs in most of 20 seeded simulated studies."""
    truth = SimulationParams(
        intercept=1.2,
        complexity=-0.4,
        task=0.3,
        interaction=-0.2,
        participant_sd=0.0,
        item_sd=0.0,
        timeout_rate=0.0,
    )
    design = human_design(human_set)
    targets = {
        "Intercept": truth.intercept,
        "complexity_c": truth.complexity,
        "task_s": truth.task,
        "complexity_c:task_s": truth.interaction,
    }
    covered = dict.fromkeys(targets, 0)
    estimates = {term: [] for term in targets}
    for seed in range(20):
        table = fit_human_glm(_simulate(design, 40, truth, seed)).table.set_index("term")
        for term, value in targets.items():
            low = table.loc[term, "b"] - 1.96 * table.loc[term, "se"]
            high = table.loc[term, "b"] + 1.96 * table.loc[term, "se"]
            covered[term] += low <= value <= high
            estimates[term].append(table.loc[term, "b"])
    # Nominal coverage is 95%: 16 of 20 has probability < 2% of failing by chance.
    assert all(count >= 16 for count in covered.values()), covered
    assert np.mean(estimates["complexity_c"]) == pytest.approx(truth.complexity, abs=0.06)


def test_the_recency_model_adds_the_covariate_and_reports_odds_ratios(human_set):
    trials = _simulate(human_design(human_set), 30, SimulationParams(recency=0.0), 3)
    fit = fit_human_glm(trials, recency="focus")
    row = fit.coefficient("recency_c")
    assert row["or_low"] < row["odds_ratio"] < row["or_high"]
    assert row["odds_ratio"] == pytest.approx(math.exp(row["b"]))
    assert "recency (centred)" in fit.to_text()
    with pytest.raises(TracktaleError, match="no term 'age'"):
        fit.coefficient("age")


def test_one_task_gives_a_model_without_task_terms(human_set):
    trials = _simulate(human_design(human_set), 20, SimulationParams(), 4)
    fit = fit_human_glm(trials[trials["task"] == "implicit"])
    assert list(fit.table["term"]) == ["Intercept", "complexity_c"]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"task_coding": "helmert"}, "unknown task coding 'helmert'"),
        ({"recency": "age"}, "unknown recency covariate 'age'"),
    ],
)
def test_bad_options_are_named(human_set, kwargs, message):
    trials = _simulate(human_design(human_set), 4, SimulationParams(), 5)
    with pytest.raises(TracktaleError, match=message):
        fit_human_glm(trials, **kwargs)


def test_a_table_without_the_design_columns_is_refused():
    with pytest.raises(TracktaleError, match="no column 'complexity'"):
        fit_human_glm(pd.DataFrame({"correct": [1.0], "task": ["explicit"], "agent": ["a"]}))


def test_one_participant_is_a_clear_error_not_a_statsmodels_crash(human_set):
    trials = _simulate(human_design(human_set), 1, SimulationParams(), 2)
    with pytest.raises(TracktaleError, match="at least 2 participants"):
        fit_human_glm(trials)


def _paper_cells(per_cell: int = 2000) -> pd.DataFrame:
    """Trials with exactly the paper's end-point accuracies (section 4.1), 40 participants."""
    rows = []
    for task, level, accuracy in (
        ("explicit", 1, 0.872),
        ("explicit", 4, 0.650),
        ("implicit", 1, 0.890),
        ("implicit", 4, 0.760),
    ):
        correct = round(accuracy * per_cell)
        for index in range(per_cell):
            rows.append(
                {
                    "agent": f"p{index % 40}",
                    "task": task,
                    "complexity": level,
                    "correct": float(index < correct),
                }
            )
    return pd.DataFrame(rows)


def test_the_default_task_coding_reproduces_the_papers_signs():
    # The paper: complexity b = -0.38, complexity x task b = -0.09, with explicit accuracy
    # falling more steeply. Only explicit coded +0.5 gives a negative interaction.
    trials = _paper_cells()
    default = fit_human_glm(trials).table.set_index("term")
    assert default.loc["complexity_c:task_s", "b"] < 0
    assert default.loc["complexity_c", "b"] == pytest.approx(-0.38, abs=0.03)
    assert default.loc["complexity_c:task_s", "b"] == pytest.approx(-0.12, abs=0.03)
    assert default.loc["task_s", "label"] == "task (explicit vs implicit)"
    other = fit_human_glm(trials, task_coding="sum-implicit").table.set_index("term")
    assert other.loc["complexity_c:task_s", "b"] == pytest.approx(
        -default.loc["complexity_c:task_s", "b"]
    )
    assert other.loc["task_s", "label"] == "task (implicit vs explicit)"
    treatment = fit_human_glm(trials, task_coding="treatment")
    # Treatment coding (explicit 0): the complexity term is the explicit slope.
    assert treatment.coefficient("complexity_c")["b"] < default.loc["complexity_c", "b"]
    assert "task coded implicit 1 / explicit 0" in treatment.notes
    assert "task coded explicit +0.5 / implicit -0.5" in fit_human_glm(trials).notes


def test_odds_ratio_intervals_use_the_tests_reference(human_set):
    """A t-tested term's interval uses t's critical value: p < .05 iff the CI excludes 1."""
    from scipy import stats

    trials = _simulate(human_design(human_set), 30, SimulationParams(item_sd=0.5), 6)
    fit = fit_human_glm(trials, clustering="two-way", reference="t")
    assert fit.df < 100
    row = fit.table.set_index("term").loc["complexity_c"]
    critical = stats.t.isf(0.025, fit.df)
    assert np.log(row["or_high"]) - row["b"] == pytest.approx(critical * row["se"])
    for r in fit.table.itertuples():
        assert (r.p < 0.05) == (r.or_low > 1 or r.or_high < 1), r.term
    paper = fit_human_glm(trials)
    r = paper.table.iloc[1]
    assert np.log(r["or_high"]) - r["b"] == pytest.approx(1.959964 * r["se"], rel=1e-5)


def test_holm_adjusts_contrasts_step_down():
    from tracktale.analysis.stats.contrasts import holm

    adjusted = holm([0.01, 0.04, 0.03, float("nan"), 0.5])
    assert adjusted[0] == pytest.approx(0.04)
    assert adjusted[2] == pytest.approx(0.09) and adjusted[1] == pytest.approx(0.09)
    assert np.isnan(adjusted[3]) and adjusted[4] == pytest.approx(0.5)
