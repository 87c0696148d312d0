"""Effects in percentage points, averaged over the population of participants and items.

A logistic mixed model's coefficients are log odds ratios for a *typical* participant and item
(random effects at 0). A reader asks a different question: by how many points does accuracy
fall from C1 to C4, over the people and stories the study samples? That is the
population-averaged probability

    P(x) = E_b[ logistic(x'beta + z(x)'b) ],   b ~ N(0, Sigma),

where ``z(x)'b`` is the random part at the covariates ``x`` (intercepts and the slopes each
grouping has). ``z(x)'b`` is normal with variance ``v(x) = sum_g z_g(x)' Sigma_g z_g(x)`` over
the groupings (participants, items; ``||`` groupings are independent blocks), so ``P(x)`` is a
one-dimensional integral, computed by Gauss-Hermite quadrature (40 nodes).

Intervals: the fixed effects are drawn from their estimated sampling distribution
(``N(beta_hat, V)``), the population-averaged quantities recomputed for each draw, and the 2.5
and 97.5 percentiles taken. The random-effect variances are held at their estimates (their
uncertainty is not propagated), which makes the intervals somewhat narrow when the variances
are poorly estimated; the table says so. For a GLM (no random effects) ``v = 0`` and the same
code gives the GLM's own population-averaged probabilities.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from tracktale.analysis.stats.contrasts import TASK_ORDER
from tracktale.analysis.stats.glm import task_values

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

NODES = 40
DRAWS = 4000
INTERVAL_NOTE = (
    "Gauss-Hermite over the random effects, their variances at the estimates; 95% intervals "
    "from 4,000 draws of the fixed effects"
)


def _term_value(term: str, values: dict[str, float]) -> float:
    if term in ("Intercept", "(Intercept)"):
        return 1.0
    product = 1.0
    for factor in term.split(":"):
        product *= values.get(factor, 0.0)
    return product


def random_blocks(components: pd.DataFrame | None) -> list[tuple[list[str], np.ndarray]]:
    """Each grouping's random-effect terms and their covariance matrix.

    Args:
        components: A fit's variance components (``grouping``, ``term``, ``with``,
            ``variance``, ``sd``, ``correlation``), or ``None``.
    """
    import numpy as np

    if components is None or components.empty:
        return []
    blocks = []
    components = components.rename(columns={"with": "other"})
    for _, group in components.groupby("grouping", sort=True):
        own = group[group["other"].fillna("") == ""]
        own = own[own["term"].notna() & (own["term"] != "")]
        terms = list(own["term"])
        if not terms:
            continue
        sds = own.set_index("term")["sd"].astype(float).fillna(0.0)
        sigma = np.diag(sds.to_numpy() ** 2)
        for row in group[group["other"].fillna("") != ""].itertuples(index=False):
            i, j = terms.index(row.term), terms.index(row.other)
            sigma[i, j] = sigma[j, i] = float(row.correlation) * sds.iloc[i] * sds.iloc[j]
        blocks.append((terms, sigma))
    return blocks


def _random_variance(blocks: list[tuple[list[str], Any]], values: dict[str, float]) -> float:
    import numpy as np

    total = 0.0
    for terms, sigma in blocks:
        z = np.array([_term_value(term, values) for term in terms])
        total += float(z @ sigma @ z)
    return total


def averaged_probability(eta: np.ndarray, variance: float) -> np.ndarray:
    """``E[logistic(eta + sqrt(variance) u)]``, ``u ~ N(0, 1)``, for every ``eta``."""
    import numpy as np
    from numpy.polynomial.hermite_e import hermegauss
    from scipy.special import expit

    if variance <= 0:
        return np.asarray(expit(eta))
    nodes, weights = hermegauss(NODES)
    weights = weights / weights.sum()
    shifted = np.asarray(eta)[..., None] + np.sqrt(variance) * nodes
    return np.asarray(expit(shifted) @ weights)


def percentage_point_effects(
    params: pd.Series,
    cov: pd.DataFrame,
    components: pd.DataFrame | None,
    levels: Sequence[float],
    *,
    complexity_term: str,
    complexity_value: Any,
    task_coding: str,
    seed: int = 0,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Population-averaged probabilities per cell and effects in percentage points.

    Args:
        params: The fixed effects, by term.
        cov: Their covariance.
        components: The variance components (``None`` for a GLM).
        levels: The complexity levels (e.g. 1-4).
        complexity_term: The complexity predictor's name (``complexity_z``, ``complexity_c``).
        complexity_value: Maps a level to the predictor's value.
        task_coding: ``sum``, ``sum-implicit`` or ``treatment``.
        seed: Seed of the fixed-effect draws.

    Returns:
        ``(probabilities, effects)``. Probabilities: ``task``, ``complexity``,
        ``probability``, ``low``, ``high`` (percent). Effects: ``effect``, ``task``,
        ``points``, ``low``, ``high``: per task the change from the first to the last level
        and its mean per level; the task difference (implicit - explicit) at each level. How
        they are computed is :data:`INTERVAL_NOTE`, for the table's title.
    """
    import numpy as np
    import pandas as pd

    terms = list(params.index)
    beta = params.to_numpy(dtype=float)
    sigma = cov.loc[terms, terms].to_numpy(dtype=float)
    rng = np.random.default_rng(seed)
    draws = rng.multivariate_normal(beta, sigma, size=DRAWS, method="eigh")
    draws = np.vstack([beta, draws])  # row 0: the estimate itself
    blocks = random_blocks(components)
    codes = task_values(task_coding)
    tasks = TASK_ORDER if "task_s" in terms else ("all",)
    cells: dict[tuple[str, float], np.ndarray] = {}
    for task in tasks:
        for level in levels:
            values = {complexity_term: complexity_value(level), "task_s": codes.get(task, 0.0)}
            x = np.array([_term_value(term, values) for term in terms])
            cells[(task, level)] = 100 * averaged_probability(
                draws @ x, _random_variance(blocks, values)
            )
    probabilities = pd.DataFrame(
        [
            _summary({"task": task, "complexity": level}, "probability", cells[(task, level)])
            for task, level in cells
        ]  # fmt: skip
    )
    effects = []
    first, last = levels[0], levels[-1]
    for task in tasks:
        change = cells[(task, last)] - cells[(task, first)]
        span = {"effect": f"C{first:g} to C{last:g}", "task": task}
        effects.append(_summary(span, "points", change))
        per_level = {"effect": "per complexity level", "task": task}
        effects.append(_summary(per_level, "points", change / (len(levels) - 1)))
    if "task_s" in terms:
        for level in levels:
            difference = cells[("implicit", level)] - cells[("explicit", level)]
            row = {"effect": f"implicit - explicit at C{level:g}", "task": ""}
            effects.append(_summary(row, "points", difference))
    return probabilities, pd.DataFrame(effects)


def _summary(row: dict[str, Any], name: str, values: np.ndarray) -> dict[str, Any]:
    import numpy as np

    low, high = np.percentile(values[1:], [2.5, 97.5])
    return {**row, name: float(values[0]), "low": float(low), "high": float(high)}


def mixed_point_effects(fit: Any, levels: Sequence[float]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """:func:`percentage_point_effects` of a :class:`~tracktale.analysis.stats.mixed.MixedFit`."""
    mean, sd = fit.scaling["complexity_mean"], fit.scaling["complexity_sd"]
    return percentage_point_effects(
        fit.fixed.set_index("term")["b"],
        fit.cov,
        fit.components,
        levels,
        complexity_term="complexity_z",
        complexity_value=lambda level: (level - mean) / sd,
        task_coding=fit.scaling["task_coding"],
    )


def glm_point_effects(fit: Any, levels: Sequence[float]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """:func:`percentage_point_effects` of a :class:`~tracktale.analysis.stats.glm.GLMFit`."""
    mean = fit.complexity_mean
    return percentage_point_effects(
        fit.table.set_index("term")["b"],
        fit.cov,
        None,
        levels,
        complexity_term="complexity_c",
        complexity_value=lambda level: level - mean,
        task_coding=fit.task_coding,
    )
