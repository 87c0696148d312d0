"""A seeded guard of the null-calibration benchmark (benchmarks/bench_null_calibration.py).

60 null studies of the human design with item SD 0.5: the paper's participant-clustered GLM
rejects the complexity null in about a quarter of them, the two-way clustered GLM in about 6%.
The bounds sit in the far tails of those binomials (P < 0.01), so a change in the simulator's
random streams does not make the test fail, while a regression of the two-way estimator to
participant clustering (an expected 15 of 60) is caught. The report's recency test, items
permuted within complexity levels, and its complexity test, items' complexity permuted across
all items, are exact by construction: an expected 3 of 60 each; the median of 60 uniform p
lies in [0.3, 0.7] but with P < 0.003, so a test that never rejects (p all 1) is caught too.
"""

from tracktale.analysis.power.calibration import (
    GLM_VARIANTS,
    NullScenario,
    glm_calibration,
    rejection_table,
)


def test_the_two_way_glm_holds_the_complexity_null_where_the_papers_does_not(human_set):
    scenario = NullScenario(participants=48, item_sd=0.5, seed=7)
    pvalues = glm_calibration(human_set, scenario, simulations=60)
    assert len(pvalues) == 60 * (len(GLM_VARIANTS) * 4 + 2) and pvalues["p"].notna().all()
    table = rejection_table(pvalues).set_index(["method", "reference", "test"])
    assert table.loc[("glm", "normal", "complexity"), "rejected"] >= 8
    assert table.loc[("glm-2way", "t", "complexity"), "rejected"] <= 9
    assert table.loc[("glm-2way", "t, floored", "complexity"), "rejected"] <= 9
    assert table.loc[("glm", "normal", "recency"), "rejected"] >= 8
    assert table.loc[("permutation", "permutation", "recency"), "rejected"] <= 9
    assert table.loc[("item-level", "t, HC3", "complexity"), "rejected"] <= 9
    complexity = pvalues[(pvalues["method"] == "item-level") & (pvalues["test"] == "complexity")]
    assert 0.3 <= complexity["p"].median() <= 0.7
    row = table.loc[("glm-2way", "t", "complexity")]
    assert row["ci_low"] <= row["rate"] <= row["ci_high"] and row["simulations"] == 60


def test_a_power_scenario_carries_its_recency_effect_and_leaves_the_null_streams_alone(human_set):
    import numpy as np

    from tracktale.analysis.data.exclusions import ExclusionRules, apply_exclusions
    from tracktale.analysis.power.calibration import null_studies
    from tracktale.analysis.power.simulate import human_design, simulate_outcomes

    null = NullScenario(participants=48, item_sd=0.2, seed=3)
    effect = NullScenario(participants=48, item_sd=0.2, seed=3, recency=-1.0)
    assert null.params().recency == 0.0 and effect.params().recency == -1.0
    # The null's random streams are keyed as before the recency field existed.
    rng = np.random.default_rng([3, 48, 200, 0])
    trials = simulate_outcomes(human_design(human_set), 48, null.params(), rng)
    trials["source"] = "simulated"
    expected = apply_exclusions(trials, None, ExclusionRules()).trials
    _, first = next(null_studies(human_set, null, range(1)))
    assert first.equals(expected)
    pvalues = glm_calibration(human_set, effect, simulations=4)
    recency = pvalues[(pvalues["test"] == "recency") & (pvalues["method"] == "permutation")]
    assert (recency["p"] < 0.05).all()


def test_failed_fits_are_counted_apart_not_as_non_rejections():
    import pandas as pd

    p = [0.01, 0.01, 0.5, 0.5] + [float("nan")] * 4
    pvalues = pd.DataFrame({"method": "glmer", "reference": "normal", "test": "task", "p": p})
    row = rejection_table(pvalues).iloc[0]
    assert row["studies"] == 8 and row["simulations"] == 4 and row["failed"] == 4
    assert row["rate"] == 0.5 and row["ci_low"] < 0.5 < row["ci_high"]


def test_the_null_benchmarks_draw_from_a_richer_truth_than_intercepts():
    from tracktale.analysis.power.calibration import INTERCEPTS_ONLY

    params = NullScenario(participants=48, item_sd=0.5).params()
    assert (params.participant_task_sd, params.item_task_sd) == (0.5, 0.4)
    assert (params.participant_complexity_sd, params.guessers) == (0.15, 0.1)
    assert params.item_sd_ratio > 1 and params.task == 0 and params.complexity == 0
    plain = NullScenario(participants=48, item_sd=0.5, **INTERCEPTS_ONLY).params()
    assert plain.participant_task_sd == 0 and plain.guessers == 0 and plain.item_sd_ratio == 1
