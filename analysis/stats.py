"""Proportions with Wilson intervals, and accuracy tables grouped by any columns."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

Z95 = 1.959963984540054
"""The standard normal quantile for a two-sided 95% interval."""


def wilson_interval(successes: float, n: float, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of a binomial proportion.

    Unlike the normal (Wald) interval it stays inside [0, 1] and keeps its coverage near 0 and 1,
    where model accuracies often sit.

    Args:
        successes: Number of successes.
        n: Number of trials.
        z: The normal quantile (1.96 for 95%).

    Returns:
        ``(low, high)``; ``(nan, nan)`` when ``n`` is 0.
    """
    if n <= 0:
        return (math.nan, math.nan)
    p = successes / n
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    return (max(0.0, centre - half), min(1.0, centre + half))


def accuracy_table(trials: pd.DataFrame, by: Sequence[str], value: str = "correct") -> pd.DataFrame:
    """Accuracy with its Wilson 95% interval for every group of ``by``.

    Args:
        trials: Trial rows with a 0/1 (or boolean) ``value`` column; rows where it is missing
            are left out.
        by: The grouping columns, in output order.
        value: The column holding correctness.

    Returns:
        One row per group: the ``by`` columns, ``n``, ``n_correct``, ``accuracy``,
        ``ci_low`` and ``ci_high``.
    """
    import pandas as pd

    scored = trials.dropna(subset=[value])
    rows = []
    groups = scored.groupby(list(by), sort=True, dropna=False) if by else [((), scored)]
    for key, group in groups:
        key = key if isinstance(key, tuple) else (key,)
        n = len(group)
        k = float(group[value].astype(float).sum())
        low, high = wilson_interval(k, n)
        rows.append(
            {
                **dict(zip(by, key, strict=True)),
                "n": n,
                "n_correct": int(round(k)),
                "accuracy": k / n if n else math.nan,
                "ci_low": low,
                "ci_high": high,
            }
        )
    columns = [*by, "n", "n_correct", "accuracy", "ci_low", "ci_high"]
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
