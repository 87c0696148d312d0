"""The human accuracy interval over participants and items (issue 29, second pass)."""

import numpy as np
import pandas as pd
import pytest
from scipy import special

from tracktale.analysis.stats.proportions import (
    CLUSTER_BOOTSTRAP,
    TWO_WAY,
    accuracy_table,
    clustered_accuracy_interval,
    two_way_accuracy_interval,
)


def _crossed(seed: int, people: int = 30, items: int = 10, item_sd: float = 0.8):
    """Every person answers every item once: person SD 0.5, item SD ``item_sd``, logit 1."""
    rng = np.random.default_rng(seed)
    ability = rng.normal(0, 0.5, people)[:, None]
    easiness = rng.normal(0, item_sd, items)[None, :]
    p = special.expit(1.0 + ability + easiness)
    correct = (rng.random((people, items)) < p).astype(float).ravel()
    who = np.repeat([f"p{i}" for i in range(people)], items)
    which = np.tile([f"i{j}" for j in range(items)], people)
    return correct, who, which


def _truth(item_sd: float = 0.8) -> float:
    """Accuracy over people and items: Gauss-Hermite over both random intercepts."""
    nodes, weights = np.polynomial.hermite_e.hermegauss(40)
    weights = weights / weights.sum()
    a, b = np.meshgrid(0.5 * nodes, item_sd * nodes, indexing="ij")
    return float(np.sum(np.outer(weights, weights) * special.expit(1.0 + a + b)))


def test_items_that_differ_widen_the_interval_beyond_the_participant_bootstrap():
    correct, who, which = _crossed(1)
    accuracy, low, high, method = two_way_accuracy_interval(correct, who, which)
    assert method == TWO_WAY and accuracy == pytest.approx(correct.mean())
    assert 0 < low < accuracy < high < 1
    _, b_low, b_high, b_method = clustered_accuracy_interval(correct, who, resamples=999)
    assert b_method == CLUSTER_BOOTSTRAP
    assert high - low > 1.5 * (b_high - b_low)  # the items' spread is what the bootstrap misses


def test_it_covers_an_accuracy_over_people_and_items_where_the_participant_bootstrap_does_not():
    truth, covered = _truth(), {"two-way": 0, "bootstrap": 0}
    for seed in range(60):
        correct, who, which = _crossed(100 + seed)
        _, low, high, _ = two_way_accuracy_interval(correct, who, which)
        covered["two-way"] += low <= truth <= high
        _, low, high, _ = clustered_accuracy_interval(correct, who, resamples=499, seed=seed)
        covered["bootstrap"] += low <= truth <= high
    assert covered["two-way"] >= 54  # about 95% of 60 (seeded: no flakiness)
    assert covered["bootstrap"] <= 45  # participants alone: far from 95% at item SD 0.8


def test_it_falls_back_where_it_cannot_work_and_says_so():
    people = [f"p{i // 5}" for i in range(40)]
    items = [f"i{i % 5}" for i in range(40)]
    all_right = two_way_accuracy_interval([1.0] * 40, people, items)
    assert all_right[:2] == (1.0, pytest.approx(0.9124, abs=1e-4))
    assert all_right[3] == "Wilson (all alike)"
    correct, who, which = _crossed(3, items=2)
    assert two_way_accuracy_interval(correct, who, which)[3] == CLUSTER_BOOTSTRAP
    two_people = two_way_accuracy_interval([1, 0, 1, 1, 0, 1], list("aaabbb"), list("xyzxyz"))
    assert two_people[3] == "Wilson (fewer than 3 participants)"
    nothing = two_way_accuracy_interval([np.nan, np.nan], ["a", "b"], ["x", "y"])
    assert np.isnan(nothing[0]) and nothing[3] == "Wilson"


def test_accuracy_table_with_items_uses_it():
    correct, who, which = _crossed(4)
    trials = pd.DataFrame({"task": "a", "correct": correct, "agent": who, "item_id": which})
    table = accuracy_table(trials, ["task"], cluster="agent", item="item_id")
    assert table.loc[0, "interval"] == TWO_WAY and table.loc[0, "n_clusters"] == 30
    expected = two_way_accuracy_interval(correct, who, which)
    assert (table.loc[0, "ci_low"], table.loc[0, "ci_high"]) == pytest.approx(expected[1:3])
