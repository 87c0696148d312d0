import pytest

from tests.tracktale.test_cli import run
from tracktale.analysis.power import PowerSettings, simulate_power
from tracktale.analysis.simulate import SimulationParams
from tracktale.errors import TracktaleError


def test_power_grows_with_the_effect_and_has_an_interval(human_set):
    settings = PowerSettings(sizes=(16,), simulations=40, seed=1, rules=None)
    null = simulate_power(human_set, SimulationParams(complexity=0.0), settings).iloc[0]
    strong = simulate_power(human_set, SimulationParams(complexity=-0.8), settings).iloc[0]
    assert null["power"] <= 0.2  # about alpha under no effect
    assert strong["power"] >= 0.9
    assert strong["ci_low"] <= strong["power"] <= strong["ci_high"]
    assert strong["mean_estimate"] == pytest.approx(-0.8 * 0.8, abs=0.35)  # attenuated by SDs


def test_exclusions_are_applied_inside_each_simulation(human_set):
    settings = PowerSettings(sizes=(12,), simulations=5, seed=2)
    table = simulate_power(human_set, SimulationParams(guessers=0.5), settings)
    assert table.loc[0, "mean_analysed"] < 12


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        (PowerSettings(term="age"), "unknown term 'age'"),
        (PowerSettings(term="recency_c"), "needs a recency covariate"),
        (PowerSettings(sizes=(1,)), "sizes of 2 or more"),
    ],
)
def test_bad_settings_are_named(human_set, settings, message):
    with pytest.raises(TracktaleError, match=message):
        simulate_power(human_set, SimulationParams(), settings)


def test_power_command_writes_table_and_curve(tmp_path, capsys):
    argv = ["analysis", "power", "--sizes", "6,8", "--simulations", "3", "--out", str(tmp_path)]
    status, out, _ = run(argv, capsys)
    assert status == 0 and "N=   6" in out
    assert (tmp_path / "power.csv").read_text().startswith("participants,")
    assert (tmp_path / "power_curve.svg").stat().st_size > 0
    status, _, err = run(["analysis", "power", "--sizes", "ten"], capsys)
    assert status == 1 and "--sizes: 'ten' is not a list of integers" in err


def test_simulate_command_writes_a_study_export(tmp_path, capsys):
    from tracktale.analysis.data import load_human_trials

    argv = ["analysis", "simulate", "--participants", "4", "--out", str(tmp_path), "--format",
            "parquet"]  # fmt: skip
    status, _, _ = run(argv, capsys)
    assert status == 0
    loaded = load_human_trials(tmp_path)
    assert loaded.trials["participant_id"].nunique() == 4
