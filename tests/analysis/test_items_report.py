"""The items report's pieces: the participant bootstrap, the factor coding, the model engines."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from tracktale.analysis.items.accuracy import participant_bootstrap
from tracktale.analysis.items.data import Factor
from tracktale.analysis.items.mixed import fit, fixed_formula, model_frame, term_label


def test_the_participant_bootstrap_resamples_people_not_trials():
    rng = np.random.default_rng(1)
    # Ten people who are all right or all wrong: trials within a person move together, so the
    # interval is as wide as ten coin flips, not a hundred.
    correct = np.array([10.0] * 5 + [0.0] * 5)
    trials = np.full(10, 10.0)
    low, high = participant_bootstrap(correct, trials, rng)
    assert low < 0.25 and high > 0.75
    mixed = np.full(10, 5.0)  # everyone half right: no between-person spread at all
    assert participant_bootstrap(mixed, trials, rng) == (0.5, 0.5)
    assert all(np.isnan(participant_bootstrap(np.array([1.0]), np.array([2.0]), rng)))


def _people(rng, n_people=12, effect=-1.0):
    rows = []
    for person in range(n_people):
        for item in range(12):
            level = ["a", "b", "c"][(item + person) % 3]
            p = 1 / (1 + np.exp(-(1.0 + (effect if level == "c" else 0.0))))
            rows.append(
                {
                    "agent": f"P{person}",
                    "item_id": f"i{item}",
                    "size": level,
                    "correct": float(rng.random() < p),
                }
            )
    return pd.DataFrame(rows)


def test_simple_coding_names_each_level_against_the_first():
    people = _people(np.random.default_rng(2))
    factor = Factor("size", "size", ("a", "b", "c"))
    frame, labels, dropped = model_frame(people, [factor], {})
    assert labels == {"f0_1": "size: b vs a", "f0_2": "size: c vs a"}
    assert not dropped
    assert np.allclose(frame.loc[people["size"] == "b", "f0_1"], 2 / 3)
    assert np.allclose(frame.loc[people["size"] != "b", "f0_1"], -1 / 3)
    assert frame[list(labels)].sum().abs().max() < 1e-9  # balanced: centred columns
    assert fixed_formula([factor], labels) == "correct ~ (f0_1 + f0_2)"
    assert term_label("f0_1:f0_2", labels) == "size: b vs a × size: c vs a"


def test_without_lme4_the_model_is_a_glm_clustered_by_participant_and_item(monkeypatch):
    from tracktale.analysis.stats import lme4

    monkeypatch.setattr(lme4, "lme4_available", lambda: False)
    people = _people(np.random.default_rng(3), n_people=40, effect=-1.5)
    factor = Factor("size", "size", ("a", "b", "c"))
    frame, labels, _ = model_frame(people, [factor], {})
    table, engine = fit(frame, fixed_formula([factor], labels), labels)
    assert "clustered by participant and item" in engine
    assert list(table["term"]) == ["(Intercept)", "size: b vs a", "size: c vs a"]
    c_vs_a = table.set_index("term").loc["size: c vs a"]
    assert c_vs_a["estimate"] < -0.5 and c_vs_a["p"] < 0.05


def test_a_factor_with_one_level_in_the_data_is_left_out():
    people = _people(np.random.default_rng(4))
    people["size"] = "a"
    frame, labels, dropped = model_frame(people, [Factor("size", "size", ("a", "b"))], {})
    assert labels == {} and dropped == ["size (one level in the data)"]


@pytest.mark.slow
def test_glmer_fits_the_declared_fixed_effects_where_r_has_lme4():
    from tracktale.analysis.stats.lme4 import lme4_available

    if not lme4_available():
        pytest.skip("R with lme4 is not installed")
    people = _people(np.random.default_rng(5), n_people=30, effect=-1.5)
    factor = Factor("size", "size", ("a", "b", "c"))
    frame, labels, _ = model_frame(people, [factor], {})
    table, engine = fit(frame, fixed_formula([factor], labels), labels)
    assert engine.startswith("glmer")
    assert list(table["term"]) == ["(Intercept)", "size: b vs a", "size: c vs a"]
