import numpy as np
import pytest

from tracktale.analysis.power.simulate import SimulationParams, human_design, simulate_outcomes
from tracktale.analysis.stats.glm import task_coding_note
from tracktale.analysis.stats.lme4 import fit_glmer
from tracktale.analysis.stats.mixed import fit_mixed, mixed_frame
from tracktale.analysis.stats.mixed_analysis import fit_mixed_models
from tracktale.errors import TracktaleError

TRUTH = SimulationParams(participant_sd=0.8, item_sd=0.3, complexity=-0.5)


@pytest.fixture(scope="module")
def trials(human_set):
    rng = np.random.default_rng(11)
    return simulate_outcomes(human_design(human_set), 40, TRUTH, rng).query("role == 'main'")


def test_statsmodels_engine_fits_intercepts_for_participants_and_items(trials):
    fit = fit_mixed(trials, engine="statsmodels")
    fixed = fit.fixed.set_index("term")
    # Complexity is standardised: the per-level effect is b / SD(complexity).
    per_level = fixed.loc["complexity_z", "b"] / mixed_frame(trials, None)["complexity_c"].std()
    assert per_level == pytest.approx(TRUTH.complexity, abs=0.25)
    assert set(fit.random["group"]) == {"agent", "item_id"}
    participant_sd = fit.random.set_index("group").loc["agent", "sd"]
    assert 0.4 < participant_sd < 1.3
    assert fit.n_participants == 40 and fit.n_items == 36


def test_random_slopes_add_a_participant_complexity_component(trials):
    fit = fit_mixed(trials, engine="statsmodels", slopes=True, recency="focus")
    assert "complexity_z" in set(fit.random["term"])
    assert "recency_z" in set(fit.fixed["term"])
    assert "(1 + complexity_z || agent)" in fit.formula


def test_unknown_engine_is_named(trials):
    with pytest.raises(TracktaleError, match="unknown mixed-model engine 'spss'"):
        fit_mixed(trials, engine="spss")


def test_lme4_asked_for_without_r_says_how_to_get_it(trials, monkeypatch):
    monkeypatch.setenv("TRACKTALE_RSCRIPT", "/nonexistent/Rscript")
    with pytest.raises(TracktaleError, match="r-cran-lme4"):
        fit_mixed(trials, engine="lme4")


def test_lme4_bridge_agrees_with_statsmodels(trials, lme4):
    lme4 = fit_mixed(trials, engine="lme4")
    bayes = fit_mixed(trials, engine="statsmodels")
    assert lme4.engine == "lme4" and "glmer" in lme4.notes[0]
    a = lme4.fixed.set_index("term")["b"]
    b = bayes.fixed.set_index("term")["b"]
    assert list(a.index) == list(b.index)
    assert a.to_numpy() == pytest.approx(b.to_numpy(), abs=0.15)
    sds = lme4.random.set_index("group")["sd"]
    assert 0.4 < sds["agent"] < 1.3


def test_lme4_errors_come_back_as_one_line(trials, lme4):
    frame = mixed_frame(trials, None)
    with pytest.raises(TracktaleError, match="glmer failed for .*nosuchcolumn"):
        fit_glmer(frame, "correct ~ nosuchcolumn + (1 | agent)")


def test_task_coding_is_respected(trials):
    frame = mixed_frame(trials, None, "treatment")
    assert set(frame["task_s"]) == {0.0, 1.0}
    fit = fit_mixed(trials, engine="statsmodels", task_coding="treatment")
    assert task_coding_note("treatment") in fit.notes[-1]
    summed = fit_mixed(trials, engine="statsmodels")
    # Under treatment coding the complexity term is the explicit task's slope, not the mean.
    b_treatment = fit.fixed.set_index("term").loc["complexity_z", "b"]
    b_sum = summed.fixed.set_index("term").loc["complexity_z", "b"]
    assert b_treatment != pytest.approx(b_sum, abs=1e-3)


def test_the_variational_fallback_is_marked_approximate(trials):
    analysis = fit_mixed_models(trials, engine="statsmodels")
    assert analysis.approximate and set(analysis.fits) == {"model 1", "model 2"}
    fit = analysis.fits["model 2"]
    assert fit.approximate and fit.fixed["approximate"].all()
    assert "APPROXIMATE" in fit.to_text() and "recency_z" in set(fit.fixed["term"])
    assert analysis.lrt.empty and analysis.comparison["AIC"].isna().all()
    assert set(analysis.icc["grouping"]) == {"agent", "item_id"}


def test_lme4_fits_both_models_with_components_lrts_and_warnings(trials, lme4):
    analysis = fit_mixed_models(trials, engine="lme4", slopes=True, task_coding="treatment")
    assert set(analysis.fits) == {"model 1", "model 2", "model 1, no slopes"}
    model1 = analysis.fits["model 1"]
    components = model1.components
    assert set(components["grouping"]) == {"agent", "item_id"}
    correlation = components[components["with"] != ""]
    assert len(correlation) == 1 and -1 <= correlation["correlation"].iloc[0] <= 1
    assert model1.cov.shape == (4, 4) and model1.scaling["task_coding"] == "treatment"
    assert list(analysis.lrt["test"]) == ["recency", "by-participant complexity slopes"]
    assert (analysis.comparison["AIC"] > 0).all()
    # Warnings (e.g. a singular fit) reach the analysis' list, one line each.
    for name, fit in analysis.fits.items():
        if fit.singular:
            assert any(name in w and "singular" in w for w in analysis.warnings)


def test_glmer_batch_fits_equal_single_fits(trials, lme4):
    import pandas as pd

    from tracktale.analysis.stats.glmer_batch import fit_batch

    frame = mixed_frame(trials, None)
    formula = "correct ~ complexity_z * task_s + (1 | agent) + (1 | item_id)"
    columns = ["correct", "agent", "item_id", "complexity_z", "task_s"]
    half = frame[frame["agent"].isin(sorted(frame["agent"].unique())[:20])]
    data = pd.concat([frame[columns].assign(sim=0), half[columns].assign(sim=1)])
    rows = fit_batch(data, {"m": formula}, workers=2, per_chunk=1)
    single = fit_glmer(frame[columns], formula).fixed.set_index("term")
    batch = rows[rows["sim"] == 0].set_index("term")
    # One R process per chunk against one per fit: they agree to the optimizer's stopping
    # tolerance (measured: estimates 2e-7, p-values 1.6e-6), not to the last digit.
    assert batch["estimate"].to_numpy() == pytest.approx(single["estimate"].to_numpy(), abs=1e-6)
    assert batch["p"].to_numpy() == pytest.approx(single["p"].to_numpy(), abs=1e-5)
    assert set(rows["sim"]) == {0, 1} and rows["error"].isna().all()  # R wrote no errors
