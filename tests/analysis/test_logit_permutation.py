"""The complexity test's default statistic: the empirical-logit slope over its two-way SE."""

import numpy as np
import pandas as pd
import pytest
from scipy.special import expit

from tracktale.analysis.stats.logit_permutation import item_parts, studentized_slopes
from tracktale.analysis.stats.permutation import (
    COMPLEXITY_LOGIT_METHOD,
    COMPLEXITY_METHOD,
    COMPLEXITY_T_METHOD,
    complexity_test_of_trials,
)
from tracktale.errors import TracktaleError


def _slopes_study(seed: int, people: int = 100, slope_sd: float = 2.0) -> pd.DataFrame:
    """12 items (C1-C4, 3 each), every person on every item; no complexity effect on average,
    but each person has their own complexity slope (SD ``slope_sd`` log-odds per level)."""
    rng = np.random.default_rng(seed)
    slope = rng.normal(0, slope_sd, people)[:, None]
    complexity = 1 + np.arange(12) // 3
    correct = (rng.random((people, 12)) < expit(1.0 + slope * (complexity - 2.5))).astype(float)
    person, item = (index.ravel() for index in np.indices(correct.shape))
    return pd.DataFrame(
        {
            "agent": person,
            "item_id": item,
            "complexity": complexity[item],
            "task": np.where((person + item) % 2, "explicit", "implicit"),
            "correct": correct.ravel(),
        }
    )


def test_participants_own_slopes_fool_the_score_but_not_the_default():
    """The score sees the sample's mean slope as an item effect; no item relabelling can tell.

    30 null studies (the population's mean slope is 0): the score rejects 9 (expected 1.5),
    the studentized empirical-logit slope, whose SE counts the participants' slopes, 0.
    """
    rejected = {"score": 0, "permuted": 0, "default": 0}
    for seed in range(30):
        study = _slopes_study(seed)
        score = complexity_test_of_trials(study, permutations=499, statistic="score")
        permuted = complexity_test_of_trials(study, permutations=499, statistic="logit-two-way")
        default = complexity_test_of_trials(study, permutations=499)
        rejected["score"] += score.p < 0.05
        rejected["permuted"] += permuted.p < 0.05
        rejected["default"] += default.p < 0.05
    assert rejected["score"] >= 6, rejected
    assert rejected["permuted"] <= 3 and rejected["default"] <= 3, rejected
    assert permuted.method == COMPLEXITY_LOGIT_METHOD and permuted.items == 12
    assert default.method == COMPLEXITY_T_METHOD and default.permutations == 0


def test_the_studentized_slope_is_the_slope_over_its_se_when_people_do_not_differ():
    # With the person part set to zero, b / SE is the OLS slope over its HC2 SE, by hand.
    logit = np.array([2.0, 1.5, 1.8, 1.0, 1.2, 0.4])
    centred = np.array([-1.0, -1.0, 0.0, 0.0, 1.0, 1.0])
    t = studentized_slopes(centred[None, :], logit, np.zeros((1, 6)), np.zeros(6))
    y = logit - logit.mean()
    b = centred @ y / (centred @ centred)
    e = y - b * centred
    h = centred**2 / (centred @ centred) + 1 / 6
    se = np.sqrt(np.sum(centred**2 * e**2 / (1 - h))) / (centred @ centred)
    assert t[0] == pytest.approx(b / se)
    hc3 = studentized_slopes(centred[None, :], logit, np.zeros((1, 6)), np.zeros(6), hc=3)
    se3 = np.sqrt(np.sum(centred**2 * e**2 / (1 - h) ** 2)) / (centred @ centred)
    assert hc3[0] == pytest.approx(b / se3) and abs(hc3[0]) < abs(t[0])


def test_the_default_refers_the_hc3_slope_to_t_with_items_minus_2_df():
    from scipy import stats

    study = _slopes_study(3, people=30, slope_sd=0.3)
    complexity, logit, cells, squares = item_parts(study)
    centred = complexity - complexity.mean()
    t = studentized_slopes(centred[None, :], logit, cells, squares, hc=3)[0]
    test = complexity_test_of_trials(study)
    assert test.statistic == pytest.approx(t)
    assert test.p == pytest.approx(2 * stats.t.sf(abs(t), 10))


def test_item_parts_are_per_item_and_refuse_a_complexity_that_varies_within_an_item():
    study = _slopes_study(1, people=10)
    complexity, logit, cells, squares = item_parts(study)
    assert list(complexity) == [1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4]
    k = study.groupby("item_id")["correct"].sum().to_numpy()
    assert logit == pytest.approx(np.log((k + 0.5) / (10 - k + 0.5)))
    assert cells.shape == (10, 12) and squares.shape == (12,)
    study.loc[0, "complexity"] = 4
    with pytest.raises(TracktaleError, match="^complexity varies within item 0"):
        item_parts(study)


def test_an_unknown_statistic_is_one_clear_error():
    with pytest.raises(TracktaleError, match="^unknown complexity statistic 'mean'"):
        complexity_test_of_trials(_slopes_study(1, people=10), statistic="mean")


@pytest.mark.parametrize(
    ("statistic", "method"),
    [
        ("logit-hc3-t", COMPLEXITY_T_METHOD),
        ("logit-two-way", COMPLEXITY_LOGIT_METHOD),
        ("score", COMPLEXITY_METHOD),
    ],
)
def test_the_report_runs_the_statistic_it_is_given(statistic, method):
    from types import SimpleNamespace

    from tracktale.analysis.narrative.human_inference import (
        HumanInference,
        _complexity_permutation,
        permutation_sentence,
    )

    options = SimpleNamespace(task_coding="sum", permutations=99, complexity_statistic=statistic)
    out = HumanInference(method="glm-2way")
    _complexity_permutation(_slopes_study(2, people=20), options, out)
    test = out.fits["complexity_permutation"]
    assert test.method == method
    sentence = permutation_sentence(test)
    if statistic == "logit-hc3-t":
        assert "against t(10)" in sentence and "relabelling" not in sentence
    else:
        assert method.split("(")[1].rstrip(")") in sentence
