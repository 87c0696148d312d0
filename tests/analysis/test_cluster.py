"""Cluster-robust covariance: one-way equals statsmodels, two-way adds the items' variation."""

import numpy as np
import pandas as pd
import pytest

from tracktale.analysis.power.simulate import SimulationParams, human_design, simulate_outcomes
from tracktale.analysis.stats.cluster import clustered_inference, multiway_cluster_cov
from tracktale.analysis.stats.glm import design_frame, fit_clustered_logit, fit_human_glm, glm_terms
from tracktale.errors import TracktaleError


@pytest.fixture(scope="module")
def fitted(human_set):
    params = SimulationParams(item_sd=0.6)
    rng = np.random.default_rng(3)
    trials = simulate_outcomes(human_design(human_set), 24, params, rng).query("role == 'main'")
    frame, _ = design_frame(trials, recency="focus", extra=("item_id",))
    return frame, fit_clustered_logit(frame, glm_terms(True)), trials


def test_one_way_is_statsmodels_participant_clustered_hc1(fitted):
    frame, result, _ = fitted
    one = clustered_inference(result, frame, ["agent"])
    assert one.se.to_numpy() == pytest.approx(result.bse.to_numpy(), rel=1e-5)
    assert one.clusters == {"agent": 24}


def test_a_dimension_of_singletons_adds_nothing(fitted):
    # With every trial its own "item", the item and intersection terms cancel exactly.
    frame, result, _ = fitted
    singletons = frame.assign(trial=np.arange(len(frame)))
    two = clustered_inference(result, singletons, ["agent", "trial"])
    one = clustered_inference(result, frame, ["agent"])
    assert two.cov.to_numpy() == pytest.approx(one.cov.to_numpy(), rel=1e-10)


def test_two_way_counts_the_items_in_between_item_terms(fitted):
    _, _, trials = fitted
    paper = fit_human_glm(trials, recency="focus").table.set_index("term")
    two = fit_human_glm(trials, recency="focus", clustering="two-way")
    table = two.table.set_index("term")
    # Complexity varies only between items: its SE grows when items vary (1.18 times on this
    # seeded study of 24 people at item SD 0.6; about 1.0 when items do not vary).
    assert table.loc["complexity_c", "se"] > 1.1 * paper.loc["complexity_c", "se"]
    assert table["b"].to_numpy() == pytest.approx(paper["b"].to_numpy())
    assert two.n_items == 36 and "participant and item" in two.to_text()
    t_fit = fit_human_glm(trials, clustering="two-way", reference="t")
    z_fit = fit_human_glm(trials, clustering="two-way")
    # t(35) has heavier tails than z: same SE, larger p.
    assert (t_fit.table["p"] >= z_fit.table["p"]).all()


def test_the_estimator_is_checked():
    scores, bread = np.ones((3, 2)), np.eye(2)
    with pytest.raises(TracktaleError, match="more observations"):
        multiway_cluster_cov(scores[:2], bread, [np.array([0, 1])])
    with pytest.raises(TracktaleError, match="at least 2 clusters"):
        multiway_cluster_cov(scores, bread, [np.zeros(3, dtype=int)])
    with pytest.raises(TracktaleError, match="one value per observation"):
        multiway_cluster_cov(scores, bread, [np.array([0, 1])])
    with pytest.raises(TracktaleError, match="unknown clustering 'items'"):
        fit_human_glm(pd.DataFrame(), clustering="items")
