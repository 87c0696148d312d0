"""Effects in percentage points, averaged over participants and items (issue 29)."""

import numpy as np
import pandas as pd
import pytest
from scipy.special import expit

from tracktale.analysis.stats.marginal_effects import (
    averaged_probability,
    percentage_point_effects,
    random_blocks,
)

TERMS = ["Intercept", "complexity_z", "task_s", "complexity_z:task_s"]
BETA = pd.Series([1.0, -0.5, -0.4, -0.2], index=TERMS)
COV = pd.DataFrame(np.diag([0.01, 0.004, 0.01, 0.004]), index=TERMS, columns=TERMS)
COMPONENTS = pd.DataFrame(
    [
        ("agent", "(Intercept)", "", 1.0, 1.0, np.nan),
        ("agent", "task_s", "", 0.25, 0.5, np.nan),
        ("agent", "(Intercept)", "task_s", np.nan, np.nan, 0.4),
        ("item_id", "(Intercept)", "", 0.36, 0.6, np.nan),
    ],
    columns=["grouping", "term", "with", "variance", "sd", "correlation"],
)


def _effects(components):
    return percentage_point_effects(
        BETA,
        COV,
        components,
        [1, 2, 3, 4],
        complexity_term="complexity_z",
        complexity_value=lambda level: (level - 2.5) / 1.118,
        task_coding="sum",
    )


def test_the_quadrature_equals_a_monte_carlo_average():
    rng = np.random.default_rng(1)
    u = rng.standard_normal(2_000_000)
    for eta, variance in ((1.2, 2.0), (-0.3, 0.5), (0.0, 4.0)):
        expected = expit(eta + np.sqrt(variance) * u).mean()
        assert averaged_probability(np.array([eta]), variance)[0] == pytest.approx(
            expected, abs=1e-3
        )


def test_each_groupings_covariance_is_built_from_sds_and_correlations():
    blocks = dict((tuple(terms), sigma) for terms, sigma in random_blocks(COMPONENTS))
    agent = blocks[("(Intercept)", "task_s")]
    np.testing.assert_allclose(agent, [[1.0, 0.4 * 0.5], [0.4 * 0.5, 0.25]])
    np.testing.assert_allclose(blocks[("(Intercept)",)], [[0.36]])


def test_without_random_effects_the_probabilities_are_the_inverse_logit():
    probabilities, effects = _effects(None)
    explicit_c1 = probabilities.query("task == 'explicit' and complexity == 1").iloc[0]
    eta = 1.0 - 0.5 * (-1.5 / 1.118) - 0.4 * 0.5 - 0.2 * (-1.5 / 1.118) * 0.5
    assert explicit_c1["probability"] == pytest.approx(100 * expit(eta))
    assert explicit_c1["low"] < explicit_c1["probability"] < explicit_c1["high"]
    span = effects.query("effect == 'C1 to C4' and task == 'explicit'").iloc[0]
    c4 = probabilities.query("task == 'explicit' and complexity == 4").iloc[0]["probability"]
    assert span["points"] == pytest.approx(c4 - explicit_c1["probability"])
    assert span["low"] < span["points"] < span["high"] < 0


def test_averaging_over_people_and_items_shrinks_the_effect_towards_zero():
    _, conditional = _effects(None)
    _, averaged = _effects(COMPONENTS)
    for frame in (conditional, averaged):
        assert set(frame["effect"]) >= {"C1 to C4", "per complexity level"}
    pick = "effect == 'C1 to C4' and task == 'explicit'"
    shrunk, typical = averaged.query(pick).iloc[0], conditional.query(pick).iloc[0]
    assert -typical["points"] > -shrunk["points"] > 0
