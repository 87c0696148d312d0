"""Cluster-robust covariance of a fitted GLM: one-way and multi-way (Cameron-Gelbach-Miller).

In the human design complexity and focus vary only *between items*, so item-to-item variation
is part of their sampling error. Clustering by participant alone (the paper's specification)
treats the items as fixed and is anti-conservative for those terms; clustering by participant
*and* item (Cameron, Gelbach and Miller 2011) adds the item component.

The estimator is the one of R's ``sandwich::vcovCL(fit, cluster = ~ participant + item,
type = "HC1")`` with its defaults ``cadjust = TRUE`` and ``multi0 = FALSE``:

``V = (n - 1) / (n - k) * B [sum over the 2^D - 1 intersections of the cluster dimensions,
sign (-1)^(|S| + 1), of G_S / (G_S - 1) * sum_g s_g s_g'] B``

with ``B`` the inverse Fisher information, ``s_g`` the summed scores of cluster ``g`` and
``G_S`` the number of clusters of intersection ``S``. With one dimension this is exactly
statsmodels' ``cov_type="cluster"`` (``G/(G-1) * (n-1)/(n-k)``), the participant-clustered HC1
standard errors the paper's model reports; the small-sample correction is therefore the same
in both. (R's default ``type`` for a ``glm`` is ``HC0``, without the ``(n-1)/(n-k)`` factor; we
pass ``HC1`` so that one- and two-way agree in their correction.)

The multi-way matrix can fail to be positive semi-definite in small samples; as R does with
``fix = FALSE`` it is returned as computed, and :func:`clustered_inference` reports a
non-positive variance as a missing standard error rather than inventing one.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tracktale.errors import TracktaleError

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

REFERENCE_DISTRIBUTIONS = ("normal", "t")


@dataclass(frozen=True)
class ClusteredInference:
    """Estimates with cluster-robust standard errors and their tests.

    Attributes:
        params: Coefficients, indexed by term.
        cov: The cluster-robust covariance matrix (terms x terms).
        se: Standard errors (NaN where the variance estimate is not positive).
        pvalues: Two-sided p-values from ``reference``.
        reference: ``normal`` (z) or ``t``.
        df: Degrees of freedom of the t reference (``inf`` for normal).
        clusters: Number of clusters in each dimension, by name.
    """

    params: pd.Series
    cov: pd.DataFrame
    se: pd.Series
    pvalues: pd.Series
    reference: str
    df: float
    clusters: dict[str, int]

    def p_of(self, statistic: pd.Series) -> pd.Series:
        """Two-sided p-values of Wald statistics under this inference's reference."""
        import numpy as np
        from scipy import stats

        values = np.abs(statistic.to_numpy(dtype=float))
        if self.reference == "t":
            return _series(2 * stats.t.sf(values, self.df), statistic.index)
        return _series(2 * stats.norm.sf(values), statistic.index)


def _series(values: Any, index: Any) -> pd.Series:
    """A Series (pandas is imported lazily)."""
    import pandas as pd

    return pd.Series(values, index=index)


def multiway_cluster_cov(
    scores: np.ndarray, bread: np.ndarray, clusters: Sequence[np.ndarray]
) -> np.ndarray:
    """The HC1 multi-way cluster-robust covariance (see the module docstring).

    Args:
        scores: Per-observation score contributions, ``n x k``.
        bread: The inverse information matrix, ``k x k``.
        clusters: One integer code array (length ``n``) per cluster dimension.

    Returns:
        The ``k x k`` covariance matrix.

    Raises:
        TracktaleError: When a dimension has fewer than 2 clusters or lengths disagree.
    """
    import numpy as np

    n, k = scores.shape
    if n <= k:
        raise TracktaleError(f"cluster-robust SEs need more observations ({n}) than terms ({k})")
    codes = [np.asarray(c) for c in clusters]
    if any(len(c) != n for c in codes):
        raise TracktaleError("every cluster variable needs one value per observation")
    meat = np.zeros((k, k))
    for size in range(1, len(codes) + 1):
        for subset in itertools.combinations(range(len(codes)), size):
            groups = _intersection(codes, subset)
            count = int(groups.max()) + 1
            if count < 2:
                raise TracktaleError(
                    f"clustered standard errors need at least 2 clusters, one dimension has {count}"
                )
            summed = np.zeros((count, k))
            np.add.at(summed, groups, scores)
            sign = 1.0 if size % 2 else -1.0
            meat += sign * count / (count - 1) * (summed.T @ summed)
    return (n - 1) / (n - k) * (bread @ meat @ bread)


def _intersection(codes: list[np.ndarray], subset: tuple[int, ...]) -> np.ndarray:
    """Integer codes of the cells of the chosen cluster dimensions (their intersection)."""
    import numpy as np

    combined = np.zeros(len(codes[0]), dtype=np.int64)
    for i in subset:
        # Mixed-radix number of the cell: unique per combination, fast to sort (1-D ints).
        dense = np.unique(codes[i], return_inverse=True)[1].ravel()
        combined = combined * (int(dense.max()) + 1) + dense
    return np.unique(combined, return_inverse=True)[1].ravel()


def clustered_inference(
    result: Any,
    frame: pd.DataFrame,
    cluster_columns: Sequence[str],
    reference: str = "normal",
) -> ClusteredInference:
    """Cluster-robust covariance, SEs and p-values of a fitted statsmodels GLM.

    Args:
        result: A fitted ``statsmodels`` GLM (any cov_type: only its estimates are used).
        frame: The rows it was fitted on, in the same order, with the cluster columns.
        cluster_columns: One column per cluster dimension (e.g. ``("agent", "item_id")``).
        reference: ``normal`` (z tests, as statsmodels and R's ``coeftest`` default) or ``t``
            with ``G - 1`` degrees of freedom, ``G`` the smallest number of clusters of a
            dimension (Cameron and Miller 2015).

    Returns:
        The inference.
    """
    import numpy as np
    import pandas as pd
    from scipy import stats

    if reference not in REFERENCE_DISTRIBUTIONS:
        raise TracktaleError(f"unknown reference distribution {reference!r} (use normal or t)")
    params = result.params
    scores = np.asarray(result.model.score_obs(np.asarray(params)))
    bread = np.asarray(result.normalized_cov_params) * float(result.scale)
    codes = [pd.factorize(frame[column])[0] for column in cluster_columns]
    counts = {column: int(c.max()) + 1 for column, c in zip(cluster_columns, codes, strict=True)}
    cov = multiway_cluster_cov(scores, bread, codes)
    variance = np.diag(cov)
    se = np.where(variance > 0, np.sqrt(np.clip(variance, 0, None)), math.nan)
    statistic = np.asarray(params) / se
    if reference == "t":
        df = float(min(counts.values()) - 1)
        pvalues = 2 * stats.t.sf(np.abs(statistic), df)
    else:
        df = math.inf
        pvalues = 2 * stats.norm.sf(np.abs(statistic))
    index = params.index
    return ClusteredInference(
        params=params,
        cov=pd.DataFrame(cov, index=index, columns=index),
        se=pd.Series(se, index=index),
        pvalues=pd.Series(pvalues, index=index),
        reference=reference,
        df=df,
        clusters=counts,
    )
