"""Power by simulation for the boxes and arithmetic human studies."""

import functools
import random

import numpy as np
import pytest

from tests.app.test_cli import run
from tests.conftest import _generated
from tracktale.analysis.power.people import (
    PeoplePowerSettings,
    default_effects,
    list_designs,
    parse_effects,
    simulate_people_power,
    simulate_study,
)
from tracktale.errors import TracktaleError
from tracktale.stimulus_set import write_stimulus_set

NULL_TERM = {"boxes": "steps", "arithmetic": "horizon"}


@functools.cache
def people_set(paradigm):
    return _generated(paradigm, "human", 1)


@pytest.mark.parametrize("paradigm", ["boxes", "arithmetic"])
def test_the_generating_model_is_the_study_s_simulated_people(paradigm):
    """At the default effects a trial's chance is what the study's own simulated person has."""
    from tracktale.experiment.paradigms import arithmetic, boxes, get_human_study
    from tracktale.experiment.simulation.run import SimulatedPerson
    from tracktale.experiment.study.design import LIST_IDS, DesignConfig

    stimulus_set = people_set(paradigm)
    plan = get_human_study(paradigm).build_session(stimulus_set, LIST_IDS[1], 0, DesignConfig())
    items = [stimulus_set.get(t.item_id) for t in plan.trials if t.role == "main"]
    design = list_designs(stimulus_set, paradigm)[1]
    effects = {**default_effects(paradigm), "participant_sd": 0.0, "inattentive": 0.0}
    person = SimulatedPerson("P", 0.0, True, 1.0, (1, 1), 30, "female")
    draws = np.mean(
        [simulate_study([design], paradigm, 1, effects, np.random.default_rng(s))[0]
         for s in range(4000)],
        axis=0,
    ) / design.states  # fmt: skip
    if paradigm == "boxes":
        expected = [1 - boxes.p_state_error(person, i, int(i.condition["n_steps"])) for i in items]
    else:
        expected = [arithmetic.p_correct(person, i) for i in items]
    assert draws == pytest.approx(expected, abs=0.03)
    assert len(set(np.round(expected, 6))) > 2  # the items differ: the check can fail


@pytest.mark.parametrize("paradigm", ["boxes", "arithmetic"])
def test_power_grows_with_the_default_effect_and_stays_low_under_the_null(paradigm):
    stimulus_set = people_set(paradigm)
    term = NULL_TERM[paradigm]
    settings = PeoplePowerSettings(sizes=(16,), simulations=60, seed=2)
    effect = simulate_people_power(stimulus_set, settings).iloc[0]
    null = PeoplePowerSettings(sizes=(16,), simulations=60, seed=2, effects={term: 0.0})
    none = simulate_people_power(stimulus_set, null).iloc[0]
    assert effect["power"] >= 0.4 and none["power"] <= 0.15
    assert effect["mean_estimate"] < 0  # accuracy falls with steps / horizon
    assert abs(none["mean_estimate"]) < abs(effect["mean_estimate"]) / 3
    assert effect["ci_low"] < effect["power"] <= effect["ci_high"] + 1e-12
    assert effect["method"] == "participant-t" and effect["failed"] == 0


@pytest.mark.parametrize("test", ["glm-cluster", "glm-cluster-z"])
def test_the_clustered_glm_alternatives_run_on_both_outcomes(test):
    for outcome in ("state-em", "step-em"):
        settings = PeoplePowerSettings(sizes=(12,), simulations=8, seed=1, test=test,
                                       outcome=outcome)  # fmt: skip
        row = simulate_people_power(people_set("boxes"), settings).iloc[0]
        assert row["method"] == test and row["failed"] < 8


@pytest.mark.parametrize(
    ("paradigm", "settings", "message"),
    [
        ("boxes", PeoplePowerSettings(term="horizon"), "boxes: unknown term 'horizon'"),
        ("arithmetic", PeoplePowerSettings(outcome="step-em"), "unknown outcome 'step-em'"),
        ("arithmetic", PeoplePowerSettings(effects={"steps": 1}), "unknown effect 'steps'"),
        ("boxes", PeoplePowerSettings(test="anova"), "unknown test 'anova'"),
        ("boxes", PeoplePowerSettings(sizes=(1,)), "sizes of 2 or more"),
    ],
)
def test_bad_settings_are_named(paradigm, settings, message):
    with pytest.raises(TracktaleError, match=message):
        simulate_people_power(people_set(paradigm), settings)


def test_effects_are_parsed_and_bad_pairs_named():
    assert parse_effects(["steps=0", " language =0.25"]) == {"steps": 0.0, "language": 0.25}
    for bad in ("steps", "steps=many", "steps=nan"):
        with pytest.raises(TracktaleError, match="expected NAME=NUMBER"):
            parse_effects([bad])


@pytest.mark.parametrize("paradigm", ["boxes", "arithmetic"])
def test_power_command_for_each_paradigm(tmp_path, capsys, paradigm):
    argv = [
        "analysis",
        "power",
        "--paradigm",
        paradigm,
        "--sizes",
        "6,10",
        "--simulations",
        "4",
        "--out",
        str(tmp_path),
        "--seed",
        str(random.Random(paradigm).randrange(99)),
    ]
    status, out, err = run(argv, capsys)  # fmt: skip
    assert status == 0, err
    assert f"term {NULL_TERM[paradigm]}" in out and "N=   6" in out and "N=  10" in out
    table = (tmp_path / "power.csv").read_text().splitlines()
    assert table[0].startswith("participants,") and len(table) == 3
    assert "participant-t" in table[1]
    # The set's own paradigm decides when --paradigm is left out; a mismatch is named.
    folder = tmp_path / "set"
    write_stimulus_set(people_set(paradigm), folder)
    status, out, _ = run(["analysis", "power", "--stimuli", str(folder), "--sizes", "4",
                          "--simulations", "2", "--test", "glm-cluster"], capsys)  # fmt: skip
    assert status == 0 and "test: glm-cluster" in out
    other = "boxes" if paradigm == "arithmetic" else "arithmetic"
    status, _, err = run(["analysis", "power", "--stimuli", str(folder), "--paradigm", other],
                         capsys)  # fmt: skip
    assert status == 1 and f"the --stimuli set is a {paradigm} set" in err
    status, _, err = run(["analysis", "power", "--paradigm", paradigm, "--people-effect",
                          "speed=2"], capsys)  # fmt: skip
    assert status == 1 and "unknown effect 'speed'" in err
