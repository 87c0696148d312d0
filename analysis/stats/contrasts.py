"""Marginal probabilities per complexity x task and the task contrast at each complexity.

As R's emmeans does for a logistic model: the linear predictor is evaluated at each complexity
level and task with any other covariate (recency) at its mean, which is 0 after centring;
its standard error comes from the coefficients' covariance (the cluster-robust one for a GLM,
lme4's for glmer), and

- the **probability** and its interval are the inverse logit of the linear predictor and of
  its Wald interval (``emmeans(..., type = "response")``);
- the **task contrast** (implicit - explicit) at each complexity is a difference of linear
  predictors: a log odds ratio with its Wald z test and the odds ratio's interval
  (``contrast(emmeans(...), "revpairwise")``), and, on the probability scale, a difference of
  probabilities with a delta-method SE (``regrid`` then contrast). No multiplicity adjustment
  is made (one contrast per complexity level, as emmeans does for ``by`` groups).

For glmer these are *conditional* probabilities (a typical participant and item, random
effects at 0); for the GLM they are population-averaged. The tables say which.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from tracktale.analysis.stats.glm import task_values
from tracktale.analysis.stats.proportions import Z95

if TYPE_CHECKING:
    import pandas as pd

TASK_ORDER = ("explicit", "implicit")


def _design_row(terms: Sequence[str], values: dict[str, float]) -> list[float]:
    row = []
    for term in terms:
        if term == "Intercept":
            row.append(1.0)
            continue
        product = 1.0
        for factor in term.split(":"):
            product *= values.get(factor, 0.0)
        row.append(product)
    return row


def marginal_tables(
    params: pd.Series,
    cov: pd.DataFrame,
    levels: Sequence[float],
    *,
    complexity_term: str,
    complexity_value: Callable[[float], float],
    task_coding: str,
    scale: str,
    floor_cov: pd.DataFrame | None = None,
    df: float = float("inf"),
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Probabilities per (task, complexity) and the task contrast at each complexity.

    The contrasts' tests and intervals use the same reference as the model's own tests (t with
    ``df`` degrees of freedom, or the normal), and their p-values are also given
    Holm-adjusted over the levels (``p_holm``): four contrasts are four tests.

    Args:
        params: The fixed effects, by term (``Intercept``, ``complexity_c`` or
            ``complexity_z``, ``task_s``, their product, ``recency_*``).
        cov: Their covariance matrix.
        levels: The complexity levels to evaluate at (e.g. 1-4).
        complexity_term: The name of the complexity predictor.
        complexity_value: Maps a level to the predictor's value (centred, or z).
        task_coding: ``sum`` or ``treatment``.
        scale: ``conditional`` (mixed model) or ``population-averaged`` (GLM), for the tables.
        floor_cov: A second covariance whose variance of each estimate is the floor (the
            participant-clustered one of a floored two-way GLM): each linear combination gets
            the larger of its two variances.
        df: Degrees of freedom of the t reference (``inf``: the normal).

    Returns:
        ``(probabilities, contrasts)``. Probabilities: ``task``, ``complexity``, ``logit``,
        ``se``, ``probability``, ``prob_low``, ``prob_high``, ``scale``. Contrasts:
        ``complexity``, ``contrast``, ``log_odds_ratio``, ``se``, ``z``, ``p``, ``p_holm``,
        ``odds_ratio``, ``or_low``, ``or_high``, ``difference``, ``difference_se``,
        ``difference_low``, ``difference_high``, ``scale`` (empty with one task).
    """
    import numpy as np
    import pandas as pd
    from scipy import stats
    from scipy.special import expit

    critical = Z95 if np.isinf(df) else float(stats.t.isf(0.025, df))
    reference = stats.norm if np.isinf(df) else stats.t(df)
    terms = list(params.index)
    beta = params.to_numpy(dtype=float)
    sigma = cov.loc[terms, terms].to_numpy(dtype=float)
    floor = None if floor_cov is None else floor_cov.loc[terms, terms].to_numpy(dtype=float)

    def variance(x: np.ndarray) -> float:
        value = float(x @ sigma @ x)
        return value if floor is None else max(value, float(x @ floor @ x))

    has_task = "task_s" in terms
    tasks = TASK_ORDER if has_task else ("all",)
    codes = task_values(task_coding)
    rows: dict[tuple[str, float], np.ndarray] = {}
    probability_rows = []
    for task in tasks:
        for level in levels:
            values = {complexity_term: complexity_value(level), "task_s": codes.get(task, 0.0)}
            x = np.asarray(_design_row(terms, values))
            rows[(task, level)] = x
            eta, se = float(x @ beta), float(np.sqrt(variance(x)))
            probability_rows.append(
                {
                    "task": task,
                    "complexity": level,
                    "logit": eta,
                    "se": se,
                    "probability": float(expit(eta)),
                    "prob_low": float(expit(eta - Z95 * se)),
                    "prob_high": float(expit(eta + Z95 * se)),
                    "scale": scale,
                }
            )
    contrast_rows = []
    for level in levels if has_task else ():
        explicit, implicit = rows[("explicit", level)], rows[("implicit", level)]
        d = implicit - explicit
        estimate, se = float(d @ beta), float(np.sqrt(variance(d)))
        p_implicit, p_explicit = expit(implicit @ beta), expit(explicit @ beta)
        # Delta method: d p / d beta = p (1 - p) x.
        gradient = p_implicit * (1 - p_implicit) * implicit
        gradient = gradient - p_explicit * (1 - p_explicit) * explicit
        difference = float(p_implicit - p_explicit)
        difference_se = float(np.sqrt(variance(gradient)))
        contrast_rows.append(
            {
                "complexity": level,
                "contrast": "implicit - explicit",
                "log_odds_ratio": estimate,
                "se": se,
                "z": estimate / se,
                "p": float(2 * reference.sf(abs(estimate / se))),
                "odds_ratio": float(np.exp(estimate)),
                "or_low": float(np.exp(estimate - critical * se)),
                "or_high": float(np.exp(estimate + critical * se)),
                "difference": difference,
                "difference_se": difference_se,
                "difference_low": difference - critical * difference_se,
                "difference_high": difference + critical * difference_se,
                "scale": scale,
            }
        )
    contrast_columns = [
        "complexity", "contrast", "log_odds_ratio", "se", "z", "p", "p_holm", "odds_ratio",
        "or_low", "or_high", "difference", "difference_se", "difference_low", "difference_high",
        "scale",
    ]  # fmt: skip
    contrasts = pd.DataFrame(contrast_rows, columns=[c for c in contrast_columns if c != "p_holm"])
    contrasts.insert(6, "p_holm", holm(contrasts["p"].to_numpy(dtype=float)))
    return pd.DataFrame(probability_rows), contrasts


def holm(pvalues: Any) -> Any:
    """Holm's step-down adjustment (family-wise error at the nominal level), NaN kept."""
    import numpy as np

    p = np.asarray(pvalues, dtype=float)
    out = np.full(len(p), np.nan)
    valid = np.flatnonzero(~np.isnan(p))
    order = valid[np.argsort(p[valid])]
    m = len(order)
    running = 0.0
    for rank, index in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p[index]))
        out[index] = running
    return out


def glm_marginal_tables(fit: Any, levels: Sequence[float]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """:func:`marginal_tables` of a :class:`~tracktale.analysis.stats.glm.GLMFit`."""
    params = fit.table.set_index("term")["b"]
    mean = fit.complexity_mean
    return marginal_tables(
        params,
        fit.cov,
        levels,
        complexity_term="complexity_c",
        complexity_value=lambda level: level - mean,
        task_coding=fit.task_coding,
        scale="population-averaged",
        floor_cov=fit.floor_cov,
        df=getattr(fit, "df", float("inf")),
    )


def mixed_marginal_tables(fit: Any, levels: Sequence[float]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """:func:`marginal_tables` of a :class:`~tracktale.analysis.stats.mixed.MixedFit`."""
    params = fit.fixed.set_index("term")["b"]
    mean, sd = fit.scaling["complexity_mean"], fit.scaling["complexity_sd"]
    return marginal_tables(
        params,
        fit.cov,
        levels,
        complexity_term="complexity_z",
        complexity_value=lambda level: (level - mean) / sd,
        task_coding=fit.scaling["task_coding"],
        scale="conditional",
    )
