"""The random effects from the design, and the declared ladder (lme4 where R has it)."""

import numpy as np
import pytest

from tests.conftest import require
from tracktale.analysis.power.simulate import SimulationParams, human_design, simulate_outcomes
from tracktale.analysis.stats.lme4 import lme4_available
from tracktale.analysis.stats.mixed import fixed_formula, mixed_frame
from tracktale.analysis.stats.random_structure import (
    check_random,
    design_slopes,
    fit_ladders,
    fixed_terms,
    maximal_slopes,
    random_part,
)
from tracktale.errors import TracktaleError


@pytest.fixture(scope="module")
def frame(human_set):
    params = SimulationParams(participant_sd=0.6, item_sd=0.3, timeout_rate=0.0)
    trials = simulate_outcomes(human_design(human_set), 32, params, np.random.default_rng(3))
    return mixed_frame(trials[trials["role"] == "main"], "focus")


def test_the_narrative_studys_maximal_structure_follows_what_varies_within_what(frame):
    model1 = maximal_slopes(frame, fixed_terms(fixed_formula(False, True)))
    # Task varies within items (each story is explicit for some people); complexity does not.
    assert model1 == {
        "agent": ["complexity_z", "task_s", "complexity_z:task_s"],
        "item_id": ["task_s"],
    }
    model2 = maximal_slopes(frame, fixed_terms(fixed_formula(True, True)))
    assert model2["agent"][-1] == "recency_z" and model2["item_id"] == ["task_s"]
    assert random_part(model1) == (
        "(1 + complexity_z + task_s + complexity_z:task_s | agent) + (1 + task_s | item_id)"
    )
    assert random_part({"agent": ["task_s"], "item_id": []}, correlated=False) == (
        "(1 + task_s || agent) + (1 | item_id)"
    )


def test_a_declared_design_gives_the_same_rule():
    within = {"movement": (True, True), "distance": (True, False), "group": (False, False)}
    terms = ["movement", "distance", "movement:distance", "group"]
    assert design_slopes(within, terms) == {
        "agent": ["movement", "distance", "movement:distance"],
        "item_id": ["movement"],
    }
    with pytest.raises(TracktaleError, match="no factor 'age'"):
        design_slopes(within, ["age"])


def test_random_choices_are_checked():
    assert check_random("maximal") == "maximal"
    assert check_random(" (1 | agent) + (1 | item_id) ") == "(1 | agent) + (1 | item_id)"
    with pytest.raises(TracktaleError, match="--random 'slopes'"):
        check_random("slopes")


def test_the_ladder_drops_a_slope_with_no_variance_and_says_why(frame):
    require(lme4_available(), "R with lme4 is not installed (Debian: r-base-core r-cran-lme4)")
    # The truth has no task slopes: the maximal fit with a correlated task slope by item is
    # singular, and the ladder must end at a fit that is neither singular nor failing.
    fixed = {"model 1": "correct ~ complexity_z * task_s"}
    slopes = {"model 1": {"agent": [], "item_id": ["task_s"]}}
    ladder = fit_ladders(frame, fixed, slopes)["model 1"]
    steps = ladder.steps
    assert steps["action"].iloc[0] == "maximal"
    assert steps["formula"].iloc[0].endswith("(1 | agent) + (1 + task_s | item_id)")
    last = steps.iloc[-1]
    assert not last["singular"] and last["converged"] and ladder.formula == last["formula"]
    if len(steps) > 1:
        assert steps["reason"].iloc[1].startswith(("singular", "did not converge"))
    assert set(ladder.optimizers["optimizer"]) == {"Nelder_Mead", "nloptwrap"}
    assert (ladder.optimizers["max_abs_diff_fixed"] < 0.05).all()
    assert "complexity_z:task_s" in set(ladder.fit.fixed["term"])
    assert "fitted:" in ladder.to_text()
