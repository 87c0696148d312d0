"""Proportions with their intervals, and accuracy tables grouped by any columns.

Two kinds of data need two kinds of interval:

- **Independent trials** (a model scored once on each item; a power estimate over simulated
  studies): the Wilson score interval, from statsmodels' ``proportion_confint``. It stays inside
  [0, 1] and does not collapse at 0/n or n/n (20/20 gives [0.839, 1]).
- **Trials clustered in participants** (human accuracy): every participant answers many trials,
  so pooled-trial Wilson intervals are too narrow (1.1-1.2x on the human design). The interval
  of :func:`clustered_accuracy_interval` resamples participants: a BCa bootstrap
  (``scipy.stats.bootstrap``) of the pooled accuracy over participants. Where the participants'
  accuracies show no variation at all (everyone at 100%), the bootstrap has nothing to resample
  and would give a zero-width interval; there it falls back to Wilson over the pooled trials,
  which is then the honest statement (no between-participant variance was observed), and says
  so in the ``interval`` column.
- **Trials crossed in participants and items** (the report's human accuracy since issue 29):
  the accuracy a reader takes a cell's interval to be about is over participants *and* items,
  and resampling participants alone ignores how the items differ (the participant bootstrap
  covered 87-93% under the null benchmarks' richer truth). :func:`two_way_accuracy_interval`
  adds the items' share of the variance (two-way clustered, t with Welch-Satterthwaite df, on
  the logit scale); ``benchmarks/bench_interval_coverage.py`` measures its coverage.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

Z95 = 1.959963984540054
"""The standard normal quantile for a two-sided 95% interval."""
BOOTSTRAP_RESAMPLES = 9999
"""Resamples of the participant bootstrap (scipy's default)."""
CLUSTER_BOOTSTRAP = "participant bootstrap (BCa)"
TWO_WAY = "participants and items (two-way clustered, t)"
WILSON = "Wilson"


def proportion_interval(
    successes: float, n: float, level: float = 0.95, method: str = "wilson"
) -> tuple[float, float]:
    """A binomial proportion's interval from statsmodels (``proportion_confint``).

    Args:
        successes: Number of successes.
        n: Number of independent trials.
        level: Coverage (0.95).
        method: Any method ``proportion_confint`` knows (``wilson``, ``beta`` for
            Clopper-Pearson, ``jeffreys``, ...).

    Returns:
        ``(low, high)``; ``(nan, nan)`` when ``n`` is 0.
    """
    from statsmodels.stats.proportion import proportion_confint

    if n <= 0:
        return (math.nan, math.nan)
    low, high = proportion_confint(successes, n, alpha=1 - level, method=method)
    # At 0/n and n/n the bound is 0 or 1 exactly; the formula leaves round-off there (Wilson's
    # 0/3 gave 5.55e-17, which tables print in scientific notation).
    low = 0.0 if successes <= 0 else max(0.0, float(low))
    high = 1.0 if successes >= n else min(1.0, float(high))
    return (low, high)


def wilson_interval(successes: float, n: float, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of a binomial proportion (for independent trials).

    Args:
        successes: Number of successes.
        n: Number of trials.
        z: The normal quantile (1.96 for 95%).

    Returns:
        ``(low, high)``; ``(nan, nan)`` when ``n`` is 0.
    """
    from scipy import stats

    return proportion_interval(successes, n, level=1 - 2 * float(stats.norm.sf(z)))


def clustered_accuracy_interval(
    correct: Sequence[float] | Any,
    clusters: Sequence[Any] | Any,
    *,
    level: float = 0.95,
    resamples: int | None = None,
    seed: int = 0,
) -> tuple[float, float, float, str]:
    """Pooled accuracy with an interval that resamples clusters (participants).

    The statistic is the pooled accuracy (correct trials over all trials), so participants
    with more trials weigh more, as in the table's ``accuracy`` column. The interval is a BCa
    bootstrap over clusters (``scipy.stats.bootstrap``, paired resampling of each cluster's
    correct count and trial count).

    Args:
        correct: 0/1 outcomes, one per trial (missing values are dropped).
        clusters: The cluster (participant) of each trial.
        level: Coverage.
        resamples: Bootstrap resamples (``None``: :data:`BOOTSTRAP_RESAMPLES`, read at each
            call, so the report's tests can lower it for the whole report).
        seed: Seed of the bootstrap.

    Returns:
        ``(accuracy, low, high, method)``; ``method`` names the interval used
        (:data:`CLUSTER_BOOTSTRAP`, or Wilson where the bootstrap cannot work: fewer than 3
        clusters, or no variation between them).
    """
    import numpy as np
    import pandas as pd
    from scipy import stats

    frame = pd.DataFrame({"correct": np.asarray(correct, dtype=float), "cluster": list(clusters)})
    frame = frame.dropna(subset=["correct"])
    if frame.empty:
        return (math.nan, math.nan, math.nan, WILSON)
    sums = frame.groupby("cluster", sort=True)["correct"].agg(["sum", "count"])
    k, n = sums["sum"].to_numpy(), sums["count"].to_numpy(dtype=float)
    accuracy = float(k.sum() / n.sum())
    rates = k / n
    if len(k) < 3 or np.ptp(rates) == 0:
        low, high = proportion_interval(k.sum(), n.sum(), level)
        reason = "fewer than 3 participants" if len(k) < 3 else "no variation between them"
        return (accuracy, low, high, f"{WILSON} ({reason})")
    result = stats.bootstrap(
        (k, n),
        lambda a, b, axis=-1: a.sum(axis=axis) / b.sum(axis=axis),
        paired=True,
        vectorized=True,
        n_resamples=BOOTSTRAP_RESAMPLES if resamples is None else resamples,
        confidence_level=level,
        method="BCa",
        random_state=np.random.default_rng(seed),
    )
    low, high = result.confidence_interval
    if not (math.isfinite(low) and math.isfinite(high)):
        low, high = proportion_interval(k.sum(), n.sum(), level)
        return (accuracy, low, high, f"{WILSON} (bootstrap degenerate)")
    return (accuracy, max(0.0, float(low)), min(1.0, float(high)), CLUSTER_BOOTSTRAP)


def _two_way_variance(frame: pd.DataFrame, accuracy: float) -> tuple[float, float, float, int, int]:
    """The pooled accuracy's two-way clustered variance, its two one-way parts, R and C."""
    residual = frame["correct"] - accuracy
    n = len(frame)
    by_person = residual.groupby(frame["cluster"]).sum().to_numpy()
    by_item = residual.groupby(frame["item"]).sum().to_numpy()
    r, c = len(by_person), len(by_item)
    # Each one-way term with its small-sample factor G / (G - 1); the trials' own term is
    # counted in both, so it is taken out once (Cameron, Gelbach & Miller 2011).
    person = float((by_person**2).sum()) / n**2 * r / (r - 1)
    item = float((by_item**2).sum()) / n**2 * c / (c - 1)
    trial = float((residual**2).sum()) / n**2
    return max(person + item - trial, person, item), person, item, r, c


def two_way_accuracy_interval(
    correct: Sequence[float] | Any,
    clusters: Sequence[Any] | Any,
    items: Sequence[Any] | Any,
    *,
    level: float = 0.95,
) -> tuple[float, float, float, str]:
    """Pooled accuracy with an interval over participants and items (crossed clusters).

    The variance of the pooled accuracy is the two-way clustered one: participants' summed
    residuals plus items' summed residuals minus the trials' own, each cluster term with
    ``G / (G - 1)``, at least the larger one-way term (the variance that a bootstrap over
    participants plus one over items minus one over trials converges to). The interval is
    ``logit(p) +- t * SE / (p (1 - p))`` (inside [0, 1]), ``t`` with Welch-Satterthwaite
    degrees of freedom ``V^2 / (V_p^2 / (R - 1) + V_i^2 / (C - 1))``: near ``C - 1`` where the
    items dominate (few items), large where participants and trials do.

    Args:
        correct: 0/1 outcomes, one per trial (missing values are dropped).
        clusters: The participant of each trial.
        items: The item of each trial.
        level: Coverage.

    Returns:
        ``(accuracy, low, high, method)``: :data:`TWO_WAY`; with fewer than 3 items the
        participant bootstrap (:func:`clustered_accuracy_interval`); Wilson over the pooled
        trials with fewer than 3 participants or at 0% or 100%.
    """
    import numpy as np
    import pandas as pd
    from scipy import stats

    frame = pd.DataFrame(
        {"correct": np.asarray(correct, dtype=float), "cluster": list(clusters),
         "item": list(items)}
    ).dropna(subset=["correct"])  # fmt: skip
    if frame.empty:
        return (math.nan, math.nan, math.nan, WILSON)
    if frame["item"].nunique() < 3:
        return clustered_accuracy_interval(frame["correct"], frame["cluster"], level=level)
    k, n = float(frame["correct"].sum()), len(frame)
    accuracy = k / n
    if frame["cluster"].nunique() < 3 or accuracy in (0.0, 1.0):
        low, high = proportion_interval(k, n, level)
        reason = "fewer than 3 participants" if accuracy not in (0.0, 1.0) else "all alike"
        return (accuracy, low, high, f"{WILSON} ({reason})")
    variance, person, item, r, c = _two_way_variance(frame, accuracy)
    if variance <= 0:
        low, high = proportion_interval(k, n, level)
        return (accuracy, low, high, f"{WILSON} (no variation between participants or items)")
    df = variance**2 / (person**2 / (r - 1) + item**2 / (c - 1))
    half = float(stats.t.ppf((1 + level) / 2, df)) * math.sqrt(variance) / (k / n * (1 - k / n))
    centre = math.log(accuracy / (1 - accuracy))
    low, high = (1 / (1 + math.exp(-(centre + s * half))) for s in (-1, 1))
    return (accuracy, low, high, TWO_WAY)


def accuracy_table(
    trials: pd.DataFrame,
    by: Sequence[str],
    value: str = "correct",
    cluster: str | None = None,
    seed: int = 0,
    item: str | None = None,
) -> pd.DataFrame:
    """Accuracy with its 95% interval for every group of ``by``.

    Args:
        trials: Trial rows with a 0/1 (or boolean) ``value`` column; rows where it is missing
            are left out.
        by: The grouping columns, in output order.
        value: The column holding correctness.
        cluster: The column naming each trial's cluster (``agent`` for human participants):
            intervals then resample clusters (:func:`clustered_accuracy_interval`). ``None``:
            trials are independent (a model on distinct items) and intervals are Wilson.
        seed: Seed of the bootstrap.
        item: With ``cluster``, the column naming each trial's item: intervals are then over
            participants and items (:func:`two_way_accuracy_interval`).

    Returns:
        One row per group: the ``by`` columns, ``n``, ``n_correct``, ``accuracy``,
        ``ci_low``, ``ci_high`` and, with ``cluster``, ``n_clusters`` and ``interval`` (the
        method used).
    """
    import pandas as pd

    scored = trials.dropna(subset=[value])
    rows = []
    groups = scored.groupby(list(by), sort=True, dropna=False) if by else [((), scored)]
    for key, group in groups:
        key = key if isinstance(key, tuple) else (key,)
        n = len(group)
        k = float(group[value].astype(float).sum())
        row = {**dict(zip(by, key, strict=True)), "n": n, "n_correct": int(round(k))}
        if cluster is None:
            low, high = wilson_interval(k, n)
            row.update(accuracy=k / n if n else math.nan, ci_low=low, ci_high=high)
        else:
            accuracy, low, high, method = (
                two_way_accuracy_interval(group[value], group[cluster], group[item])
                if item is not None
                else clustered_accuracy_interval(group[value], group[cluster], seed=seed)
            )
            row.update(accuracy=accuracy, ci_low=low, ci_high=high)
            row.update(n_clusters=int(group[cluster].nunique()), interval=method)
        rows.append(row)
    columns = [*by, "n", "n_correct", "accuracy", "ci_low", "ci_high"]
    if cluster is not None:
        columns += ["n_clusters", "interval"]
    return pd.DataFrame(rows, columns=columns)


def mean_interval(values: Sequence[float], z: float = Z95) -> tuple[float, float, float]:
    """Mean with a normal-approximation 95% interval (for per-participant accuracies).

    Returns:
        ``(mean, low, high)``; the interval is ``nan`` with fewer than two values.
    """
    clean = [float(v) for v in values if not math.isnan(float(v))]
    if not clean:
        return (math.nan, math.nan, math.nan)
    mean = math.fsum(clean) / len(clean)
    if len(clean) < 2:
        return (mean, math.nan, math.nan)
    variance = math.fsum((v - mean) ** 2 for v in clean) / (len(clean) - 1)
    half = z * math.sqrt(variance / len(clean))
    return (mean, mean - half, mean + half)
