import pytest

from tests.app.test_cli import run
from tests.conftest import require
from tracktale.analysis.power.design import PowerSettings, simulate_power
from tracktale.analysis.power.simulate import SimulationParams
from tracktale.analysis.stats.inference import METHOD_LABELS
from tracktale.analysis.stats.lme4 import lme4_available
from tracktale.errors import TracktaleError


def test_power_grows_with_the_effect_and_has_an_interval(human_set):
    settings = PowerSettings(sizes=(16,), simulations=40, seed=1, rules=None, method="glm")
    null = simulate_power(human_set, SimulationParams(complexity=0.0), settings).iloc[0]
    strong = simulate_power(human_set, SimulationParams(complexity=-0.8), settings).iloc[0]
    assert null["power"] <= 0.2  # about alpha under no effect
    assert strong["power"] >= 0.9
    assert strong["ci_low"] <= strong["power"] <= strong["ci_high"]
    assert strong["mean_estimate"] == pytest.approx(-0.8 * 0.8, abs=0.35)  # attenuated by SDs


def test_exclusions_are_applied_inside_each_simulation(human_set):
    settings = PowerSettings(sizes=(12,), simulations=5, seed=2, method="glm-2way")
    table = simulate_power(human_set, SimulationParams(guessers=0.5), settings)
    assert table.loc[0, "mean_analysed"] < 12


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        (PowerSettings(term="age"), "unknown term 'age'"),
        (PowerSettings(term="recency_c"), "needs a recency covariate"),
        (PowerSettings(sizes=(1,)), "sizes of 2 or more"),
        (PowerSettings(method="lmer"), "unknown inference method 'lmer'"),
    ],
)
def test_bad_settings_are_named(human_set, settings, message):
    with pytest.raises(TracktaleError, match=message):
        simulate_power(human_set, SimulationParams(), settings)


def test_power_by_the_two_way_glm_is_lower_than_by_the_papers_glm(human_set):
    # Complexity varies between items: counting their variation (two-way clustering) gives
    # less "power" than the paper's participant clustering, whose level is too high.
    params = SimulationParams(complexity=-0.15, item_sd=0.5)
    tables = {
        method: simulate_power(
            human_set, params, PowerSettings(sizes=(24,), simulations=30, seed=3, method=method)
        ).iloc[0]
        for method in ("glm", "glm-2way")
    }
    assert tables["glm-2way"]["significant"] < tables["glm"]["significant"]
    assert tables["glm"]["method"] == "glm" and tables["glm-2way"]["method"] == "glm-2way"


def test_power_by_glmer_runs_in_parallel_r_processes(human_set, lme4):
    estimates, progress = [], []
    settings = PowerSettings(sizes=(10, 14), simulations=2, seed=4, method="glmer", workers=2)
    table = simulate_power(
        human_set,
        SimulationParams(complexity=-0.8),
        settings,
        progress=lambda done, total: progress.append((done, total)),
        on_estimate=estimates.append,
    )
    assert list(table["method"]) == ["glmer", "glmer"] and table["failed"].sum() == 0
    # The estimate comes before the rest is fitted; progress reaches every study.
    assert len(estimates) == 1 and estimates[0].total_seconds > 0
    assert progress[-1] == (4, 4)
    # Estimates are per complexity level, like the GLM's (about the true -0.8).
    assert table["mean_estimate"].mean() == pytest.approx(-0.8, abs=0.5)


@pytest.mark.parametrize("method", ["glm", "glm-2way", pytest.param("glmer", marks=pytest.mark.r)])
def test_power_command_runs_with_each_method(tmp_path, capsys, method):
    if method == "glmer":
        require(lme4_available(), "R with lme4 is not installed (Debian: r-base-core r-cran-lme4)")
    argv = ["analysis", "power", "--sizes", "8", "--simulations", "2", "--method", method]
    status, out, _ = run(argv, capsys)
    assert status == 0 and "N=   8" in out and METHOD_LABELS[method] in out
    if method == "glmer":
        assert "s per study" in out and "min for 2 studies" in out


def test_power_command_writes_table_and_curve(tmp_path, capsys):
    argv = ["analysis", "power", "--sizes", "6,8", "--simulations", "3", "--out", str(tmp_path)]
    argv += ["--method", "glm"]
    status, out, _ = run(argv, capsys)
    assert status == 0 and "N=   6" in out
    assert (tmp_path / "power.csv").read_text().startswith("participants,")
    assert (tmp_path / "power_curve.svg").stat().st_size > 0
    status, _, err = run(["analysis", "power", "--sizes", "ten"], capsys)
    assert status == 1 and "--sizes: 'ten' is not a list of integers" in err


def test_simulate_command_writes_a_study_export(tmp_path, capsys):
    from tracktale.analysis.data.load import load_human_trials

    argv = ["analysis", "simulate", "--participants", "4", "--out", str(tmp_path), "--format",
            "parquet"]  # fmt: skip
    status, _, _ = run(argv, capsys)
    assert status == 0
    loaded = load_human_trials(tmp_path)
    assert loaded.trials["participant_id"].nunique() == 4


def test_recency_power_counts_the_permutation_test_under_the_reports_methods(
    human_set, monkeypatch
):
    """The report tests recency by item permutation, so its power is that test's power."""
    from tracktale.analysis.power import design as power

    seen = []
    original = power._permutation_p

    def spy(trials, settings, method, p):
        seen.append((method, p, original(trials, settings, method, p)))
        return seen[-1][2]

    monkeypatch.setattr(power, "_permutation_p", spy)
    params = SimulationParams(recency=-0.6, item_sd=0.5, guessers=0.0)
    counted = {}
    for method in ("glm-2way", "glm"):
        settings = PowerSettings(
            sizes=[48], simulations=4, term="recency_c", recency="focus", seed=5,
            method=method, permutations=199,
        )  # fmt: skip
        counted[method] = simulate_power(human_set, params, settings)["significant"].iloc[0]
    two_way, paper = seen[:4], seen[4:]
    assert all(m == "glm-2way" and wald != p and 1 / 200 <= p <= 1 for m, wald, p in two_way)
    assert counted["glm-2way"] == sum(p < 0.05 for _, _, p in two_way)
    # The paper's GLM keeps its own (participant-clustered z) p.
    assert all(m == "glm" and wald == p for m, wald, p in paper)


def test_complexity_power_counts_the_permutation_test_in_model_1_only(human_set, monkeypatch):
    """The report's complexity permutation p is on model 1's row: model 2 keeps the Wald p."""
    from tracktale.analysis.power import design as power

    seen = []
    original = power._permutation_p

    def spy(trials, settings, method, p):
        seen.append((settings.recency, p, original(trials, settings, method, p)))
        return seen[-1][2]

    monkeypatch.setattr(power, "_permutation_p", spy)
    params = SimulationParams(complexity=-0.3, item_sd=0.5, guessers=0.0)
    for recency in (None, "focus"):
        settings = PowerSettings(
            sizes=[24], simulations=3, term="complexity_c", recency=recency, seed=2,
            method="glm-2way", permutations=199,
        )  # fmt: skip
        simulate_power(human_set, params, settings)
    model1, model2 = seen[:3], seen[3:]
    assert all(wald != p and 1 / 200 <= p <= 1 for _, wald, p in model1)
    assert all(wald == p for _, wald, p in model2)


def test_only_significant_results_in_the_predicted_direction_count_as_power():
    from types import SimpleNamespace

    from tracktale.analysis.power.design import _predicted_direction, _summary

    settings = SimpleNamespace(alpha=0.05, simulations=5)
    outcomes = [(-0.4, 0.01, 40.0), (0.5, 0.001, 40.0), (-0.1, 0.3, 40.0), None, (-0.2, 0.04, 40)]
    row = _summary(48, outcomes, settings, "glm-2way", direction=-1)
    assert row["significant"] == 2 and row["wrong_sign"] == 1 and row["failed"] == 1
    assert row["power"] == pytest.approx(0.4)
    assert _summary(48, outcomes, settings, "glm-2way", direction=0)["significant"] == 3
    assert _predicted_direction(SimulationParams(complexity=-0.3), "complexity_c") == -1
    assert _predicted_direction(SimulationParams(recency=0.0), "recency_c") == 0


def test_the_sizes_that_reach_80_and_90_percent_power_are_read_off_the_table():
    import pandas as pd

    from tracktale.analysis.power.design import sizes_for_power

    table = pd.DataFrame({"participants": [24, 48, 96], "power": [0.5, 0.85, 0.88]})
    assert sizes_for_power(table) == {0.8: 48, 0.9: None}


def test_auto_fits_the_model_behind_the_reports_primary_test_of_the_term(monkeypatch):
    import tracktale.analysis.stats.lme4 as lme4
    from tracktale.analysis.power.cli import _method

    monkeypatch.setattr(lme4, "lme4_available", lambda: True)
    for term in ("complexity_c", "complexity_c:task_s", "recency_c"):
        assert _method("auto", term) == "glm-2way"
    assert _method("auto", "task_s") == "glmer"  # no primary test: the report's lead
    assert _method("glmer", "complexity_c:task_s") == "glmer"  # asked for, kept
