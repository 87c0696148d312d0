"""One primary test per hypothesis, declared before the data; every other p in a robustness table.

The report used to print up to five p-values for one question (recency: the paper's GLM, the
two-way GLM, glmer's t, the LRT and the permutation test), which invites picking the smallest.
:data:`PRIMARY_TESTS` declares, per hypothesis, which test is *the* test, chosen by what the
null benchmarks (``benchmarks/bench_null_calibration.py``) show holds its level under a truth
richer than the models; :func:`primary_tables` returns that one p per hypothesis and, apart,
every other p of the same hypothesis, labelled as robustness checks.

- ``complexity``: the slope of the items' empirical logits on complexity over its two-way SE
  (participants' and items' parts, the items' HC3), against t(items - 2)
  (:func:`~tracktale.analysis.stats.logit_permutation.logit_t_test`; issue 29's third pass).
  The models' own complexity p over-rejected at N 48, item SD 0.5 (the floored two-way GLM's
  t 7.6-8.0% of null studies); the item permutation of the score (the first default) about
  6%, of the same slope with an HC2 part (the second) 5.9% and 6.7% in two runs of 1,000 at
  N 48, item SD 0.5, where the t test rejected 4.7% and 5.3%, for about 2 points of power
  (``benchmarks/RESULTS.md``, issue 29, third pass). ``--complexity-statistic
  logit-two-way`` or ``score`` keeps a permutation test;
- ``interaction`` (task x complexity): the two-way clustered GLM's Wald test of the
  interaction term, t(items - 1) with the SE floor (the larger of the two-way and the
  participant-clustered SE), whatever model leads the section. It held 4.0-5.4% of null
  studies in every design benchmarked under the richer truth, with and without R on the
  machine; the maximal glmer with the ladder, which leads where R has lme4, was measured in
  one design only (4.8% of 500 null studies at N 48, item SD 0.5; ``benchmarks/RESULTS.md``,
  issue 29, fourth pass), so it stays a robustness row. ``interaction_test="lead"`` (the report's
  ``--interaction-test lead``) makes the leading model's term primary instead, as before
  issue 29's third pass. One consequence of the fixed choice: the primary p no longer
  depends on whether R is installed;
- ``recency``: the item-permutation test within complexity levels.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Literal, get_args

if TYPE_CHECKING:
    import pandas as pd

INTERACTION_GLM = "GLM, two-way clustered"
"""The test label of the two-way GLM's rows: the interaction's declared primary test."""

COMPLEXITY_T = "items' empirical-logit slope, two-way SE (HC3), t(items - 2)"
"""The complexity test's label (the default, ``--complexity-statistic logit-hc3-t``)."""
COMPLEXITY_PERMUTATION = "item permutation across all items"
"""The complexity test's label when a permuted statistic is chosen instead."""

PRIMARY_TESTS = {
    "complexity": COMPLEXITY_T,
    "interaction": "two-way GLM's interaction term (t, SE floor)",
    "recency": "item permutation within complexity levels",
}
"""Hypothesis -> its declared primary test (the study's analysis plan; the report's default)."""

PERMUTATION_NOTE = (
    "estimate: the test's statistic (a studentized slope or a score), not an effect size "
    "(see effects_points)"
)
"""Said beside the item-level tests' rows: their ``estimate`` is a test statistic, which a
reader would otherwise take for a coefficient."""

_TERMS = {
    "complexity": ("complexity_c", "complexity_z"),
    "task": ("task_s",),
    "interaction": ("complexity_c:task_s", "complexity_z:task_s"),
    "recency": ("recency_c", "recency_z"),
}


def _model_rows(fits: dict[str, Any], lead: str) -> list[dict[str, Any]]:
    """Every model-based p of every hypothesis: (hypothesis, source, estimate, p, lead)."""
    rows: list[dict[str, Any]] = []
    sources = {
        "glm": ("paper's GLM (participant-clustered, z)", "glm_complexity", "glm_recency"),
        "glm-2way": (INTERACTION_GLM, "glm2way_complexity", "glm2way_recency"),
    }
    for method, (label, model1, model2) in sources.items():
        for key, model in ((model1, "model 1"), (model2, "model 2")):
            fit = fits.get(key)
            if fit is None:
                continue
            table = fit.table.set_index("term")
            rows += _term_rows(table, "b", label, model, method == lead)
    mixed = fits.get("mixed")
    if mixed is not None:
        for model in ("model 1", "model 2"):
            fit = mixed.fits.get(model)
            if fit is not None:
                label = f"glmer ({'maximal, ladder' if mixed.ladders else mixed.random})"
                rows += _term_rows(fit.fixed.set_index("term"), "b", label, model, lead == "glmer")
        for row in mixed.lrt.itertuples():
            if row.test == "recency":
                rows.append(
                    {"hypothesis": "recency", "test": "glmer LRT, model 2 vs model 1",
                     "model": "model 2", "estimate": math.nan, "p": row.p, "lead": False}
                )  # fmt: skip
    return rows


def _term_rows(table: Any, column: str, label: str, model: str, lead: bool) -> list[dict]:
    rows = []
    for hypothesis, names in _TERMS.items():
        if hypothesis == "recency" and model != "model 2":
            continue
        if hypothesis != "recency" and model != "model 1":
            continue
        for name in names:
            if name in table.index:
                rows.append(
                    {
                        "hypothesis": hypothesis,
                        "test": label,
                        "model": model,
                        "estimate": float(table.loc[name, column]),
                        "p": float(table.loc[name, "p"]),
                        "lead": lead,
                    }
                )
    return rows


def primary_tables(
    fits: dict[str, Any], lead: str, interaction_test: str = "glm-2way"
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The primary test of each hypothesis, and every other test as robustness.

    Args:
        fits: The human section's fits (``glm_*``, ``glm2way_*``, ``mixed``,
            ``complexity_permutation``, ``recency_permutation``).
        lead: The leading method (``glmer``, ``glm-2way`` or ``glm``).
        interaction_test: ``glm-2way`` (the declared default: the two-way GLM's term) or
            ``lead`` (the leading model's term).

    Returns:
        ``(primary, robustness)``: ``hypothesis``, ``test``, ``model``, ``estimate``, ``p``
        (primary also ``declared``: the declared test, and ``note`` where it could not be run).
    """
    import pandas as pd

    rows = _model_rows(fits, lead)
    for hypothesis in ("complexity", "recency"):
        test = fits.get(f"{hypothesis}_permutation")
        if test is not None:
            label = PRIMARY_TESTS[hypothesis]
            if hypothesis == "complexity" and test.permutations:
                label = COMPLEXITY_PERMUTATION
            rows.append(
                {"hypothesis": hypothesis, "test": label,
                 "model": "model 1", "estimate": float(test.statistic), "p": float(test.p),
                 "lead": False}
            )  # fmt: skip
    table = pd.DataFrame(rows, columns=["hypothesis", "test", "model", "estimate", "p", "lead"])
    primary, used = [], set()
    for hypothesis, declared in PRIMARY_TESTS.items():
        if hypothesis == "interaction" and interaction_test == "lead":
            declared = "the leading model's interaction term"
            chosen = table[(table["hypothesis"] == hypothesis) & table["lead"]]
        elif hypothesis == "interaction":
            chosen = table[(table["hypothesis"] == hypothesis) & (table["test"] == INTERACTION_GLM)]
        elif hypothesis == "complexity":
            labels = (COMPLEXITY_T, COMPLEXITY_PERMUTATION)
            chosen = table[(table["hypothesis"] == hypothesis) & table["test"].isin(labels)]
            declared = chosen["test"].iloc[0] if not chosen.empty else declared
        else:
            chosen = table[(table["hypothesis"] == hypothesis) & (table["test"] == declared)]
        if chosen.empty:
            primary.append({"hypothesis": hypothesis, "declared": declared, "test": "",
                            "model": "", "estimate": math.nan, "p": math.nan,
                            "note": "not run"})  # fmt: skip
            continue
        row = chosen.iloc[0]
        used.add(row.name)
        note = PERMUTATION_NOTE if hypothesis != "interaction" else ""
        primary.append({"declared": declared, **row.drop("lead").to_dict(), "note": note})
    robustness = table.drop(index=list(used)).drop(columns="lead").reset_index(drop=True)
    columns = ["hypothesis", "declared", "test", "model", "estimate", "p", "note"]
    return pd.DataFrame(primary, columns=columns), robustness


RECENCY_SESOI_POINTS = 3.0
"""The smallest recency effect of interest: 3 percentage points per focus position (issue 29's
example); a study declares its own with the report's ``--recency-sesoi``."""

RecencyInterval = Literal["larger", "permutation", "two-way"]
"""The SE the recency TOST rests on (issue 29's third pass; ``benchmarks/RESULTS.md``):
``larger`` (the default): the larger of the ``permutation`` and the ``two-way`` SE, t with
the permutation's df; ``permutation``: the model-based SE scaled by the items' dispersion of
the recency contrast within complexity levels (the permutation distribution's variance), t with
the levels' pooled df; ``two-way``: the floored two-way GLM's SE, t(items - 1), the TOST before
that pass."""
RECENCY_INTERVALS: tuple[RecencyInterval, ...] = get_args(RecencyInterval)
RECENCY_INTERVAL_LABELS: dict[str, str] = {
    "larger": "the larger of the item-permutation SE and the two-way GLM's SE, t(df)",
    "permutation": "item dispersion within complexity levels (permutation variance), t(df)",
    "two-way": "two-way GLM's SE (floored), t(items - 1)",
}


def recency_permutation_se(fit: Any, frame: pd.DataFrame) -> tuple[float, float]:
    """Recency's SE from the permutation distribution of its item contrast, and its df.

    The two-way GLM's recency SE leans on few items (recency varies only within complexity 3
    and 4, among 20 items), and its sandwich is too small there: its test rejected 10-14% of
    true nulls at item SD 0.5. The primary recency test instead permutes focus positions
    within complexity levels, and the variance of its statistic ``T = sum_i c_i R_i`` (``c_i``
    the item's focus centred in its level, ``R_i`` the item's summed residual) over those
    relabellings has a closed form: per level, ``sum c_i^2`` times the items' residual
    variance ``sum (R_i - mean R)^2 / (n - 1)``. Its ratio to the binomial variance of ``T``
    (``sum_i c_i^2 W_i``, ``W_i`` the item's summed ``mu (1 - mu)``) is the items' dispersion
    for the recency contrast; the model-based SE of the recency coefficient times its square
    root is the SE returned. Residuals are model 2's (recency fitted), so a true recency effect
    does not inflate the spread; having fitted recency, they have one df fewer, so the variance
    is scaled by ``df / (df - 1)`` and the df are the informative items less the informative
    levels, less one.

    Args:
        fit: The GLM of model 2 (``recency_c``), fitted on ``frame``'s rows in order.
        frame: Its design frame with ``item_id`` and ``complexity``.

    Returns:
        ``(se, df)`` of the recency coefficient (log-odds per position).

    Raises:
        TracktaleError: When the frame does not match the fit or recency does not vary
            within any complexity level with two items or more.
    """
    import numpy as np

    from tracktale.analysis.stats.permutation import item_residuals
    from tracktale.errors import TracktaleError

    result = fit.result
    mu = np.asarray(result.fittedvalues, dtype=float)
    if len(frame) != len(mu):
        raise TracktaleError(f"the frame has {len(frame)} rows, the recency fit {len(mu)}")
    items = item_residuals(frame, mu, "recency_c", "complexity")
    items["weight"] = frame.assign(_w=mu * (1 - mu)).groupby("item_id", sort=True)["_w"].sum()
    permuted = binomial = df = 0.0
    for _, level in items.groupby("stratum"):
        centred = level["value"] - level["value"].mean()
        if len(level) < 2 or not np.any(centred.abs() > 1e-12):
            continue
        spread = float(((level["residual"] - level["residual"].mean()) ** 2).sum())
        permuted += float(centred @ centred) * spread / (len(level) - 1)
        binomial += float(centred**2 @ level["weight"])
        df += len(level) - 1
    if df < 2 or binomial <= 0:
        raise TracktaleError("recency does not vary within any complexity level")
    names = list(result.model.exog_names)
    position = names.index("recency_c")
    model_variance = float(np.asarray(result.normalized_cov_params)[position, position])
    # Model 2's residuals have had the recency direction fitted out of them: one df fewer.
    dispersion = permuted / binomial * df / (df - 1)
    return math.sqrt(model_variance * dispersion), df - 1


def recency_equivalence(
    fit: Any,
    bound_points: float = RECENCY_SESOI_POINTS,
    interval: RecencyInterval = "larger",
    frame: pd.DataFrame | None = None,
) -> dict[str, Any]:
    """Two one-sided tests (TOST) that recency lies within +-``bound_points`` per position.

    The two-way GLM's recency coefficient (population-averaged, per focus position) is turned
    into percentage points per position at the observed mean accuracy (the logistic slope there,
    ``p (1 - p) b``; the same factor for its SE), and tested against each bound. Equivalence is
    claimed when both one-sided p are below 0.05, i.e. when the 90% interval lies inside the
    bounds. The SE (``interval``): ``larger`` (the default), the larger of the two below, t
    with the permutation's df (the permutation SE sees how the items vary, the two-way one how
    the participants do too); ``permutation``, :func:`recency_permutation_se`, t with its df;
    ``two-way``, the fit's own (floored) SE and reference, t(items - 1). Measured
    (``benchmarks/bench_recency_equivalence.py``, N 48, the null benchmarks' richer truth,
    bounds +-8 points, where the TOST can claim anything; 1,000 studies per cell, two runs):
    with the true effect at a bound, ``two-way`` claimed equivalence in 6.2-7.7% of studies,
    ``permutation`` in 4.4-5.0% at item SD 0.5 but 5.7-6.4% at 0.2, ``larger`` in 4.3-5.6%
    (4.7% of 8,000), with 36-37% (item SD 0.5) and 90% (0.2) power at a true 0. At the
    default +-3 points and N 48 none claims it in more than 1.5% of studies whatever the
    truth: the 90% interval is wider than the bounds.

    Args:
        fit: A :class:`~tracktale.analysis.stats.glm.GLMFit` of model 2 (with ``recency_c``).
        bound_points: The equivalence bound, percentage points per position.
        interval: The SE the test rests on (:data:`RecencyInterval`).
        frame: The fit's design frame with ``item_id`` (needed but for ``two-way``).

    Returns:
        ``estimate_points``, ``se_points``, ``ci90_low``, ``ci90_high``, ``bound``, ``p_lower``,
        ``p_upper``, ``p_tost``, ``equivalent``, ``df``, ``interval`` (its label).

    Raises:
        TracktaleError: For an unknown interval, or one but ``two-way`` without a usable frame.
    """
    from scipy import stats

    from tracktale.errors import TracktaleError

    if interval not in RECENCY_INTERVALS:
        raise TracktaleError(
            f"unknown recency interval {interval!r}: one of {', '.join(RECENCY_INTERVALS)}"
        )
    row = fit.table.set_index("term").loc["recency_c"]
    accuracy = float(fit.result.model.endog.mean())
    slope = 100 * accuracy * (1 - accuracy)
    se_b, df = float(row["se"]), float(getattr(fit, "df", math.inf))
    if interval != "two-way":
        if frame is None:
            raise TracktaleError(f"the {interval} interval of recency needs the design frame")
        permuted, df = recency_permutation_se(fit, frame)
        # The permutation SE sees the items, the two-way one the participants too.
        se_b = permuted if interval == "permutation" else max(permuted, se_b)
    estimate, se = slope * float(row["b"]), slope * se_b
    reference = stats.norm if math.isinf(df) else stats.t(df)
    p_lower = float(reference.sf((estimate + bound_points) / se))
    p_upper = float(reference.cdf((estimate - bound_points) / se))
    critical = float(reference.isf(0.05))
    return {
        "estimate_points": estimate,
        "se_points": se,
        "ci90_low": estimate - critical * se,
        "ci90_high": estimate + critical * se,
        "bound": bound_points,
        "p_lower": p_lower,
        "p_upper": p_upper,
        "p_tost": max(p_lower, p_upper),
        "equivalent": max(p_lower, p_upper) < 0.05,
        "df": df,
        "interval": RECENCY_INTERVAL_LABELS[interval],
    }
