import numpy as np
import pytest

from tests.conftest import require
from tracktale.analysis.lme4 import fit_glmer, lme4_available
from tracktale.analysis.mixed import fit_mixed, mixed_frame
from tracktale.analysis.simulate import SimulationParams, human_design, simulate_outcomes
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


def test_lme4_bridge_agrees_with_statsmodels(trials):
    require(lme4_available(), "R with lme4 is not installed (Debian: r-base-core r-cran-lme4)")
    lme4 = fit_mixed(trials, engine="lme4")
    bayes = fit_mixed(trials, engine="statsmodels")
    assert lme4.engine == "lme4" and "glmer" in lme4.notes[0]
    a = lme4.fixed.set_index("term")["b"]
    b = bayes.fixed.set_index("term")["b"]
    assert list(a.index) == list(b.index)
    assert a.to_numpy() == pytest.approx(b.to_numpy(), abs=0.15)
    sds = lme4.random.set_index("group")["sd"]
    assert 0.4 < sds["agent"] < 1.3


def test_lme4_errors_come_back_as_one_line(trials):
    require(lme4_available(), "R with lme4 is not installed (Debian: r-base-core r-cran-lme4)")
    frame = mixed_frame(trials, None)
    with pytest.raises(TracktaleError, match="glmer failed for .*nosuchcolumn"):
        fit_glmer(frame, "correct ~ nosuchcolumn + (1 | agent)")
