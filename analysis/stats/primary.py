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
  machine; the maximal glmer with the ladder, which leads where R has lme4, has 16 null
  studies behind it (0 rejections, too few to show a rate), so it is a robustness row until a
  benchmark shows its level. ``interaction_test="lead"`` (the report's
  ``--interaction-test lead``) makes the leading model's term primary instead, as before
  issue 29's third pass. One consequence of the fixed choice: the primary p no longer
  depends on whether R is installed;
- ``recency``: the item-permutation test within complexity levels.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

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


def recency_equivalence(fit: Any, bound_points: float = RECENCY_SESOI_POINTS) -> dict[str, Any]:
    """Two one-sided tests (TOST) that recency lies within +-``bound_points`` per position.

    The two-way GLM's recency coefficient (population-averaged, per focus position) is turned
    into percentage points per position at the observed mean accuracy (the logistic slope there,
    ``p (1 - p) b``; the same factor for its SE), and tested against each bound with the test's
    own reference (t(items - 1), or the normal). Equivalence is claimed when both one-sided p
    are below 0.05, i.e. when the 90% interval lies inside the bounds. Caveat, measured: the
    two-way GLM's recency SE is too small at large item variation (its two-sided test rejected
    8.8-11% of true nulls at item SD 0.5), so this TOST is then too ready to claim equivalence.

    Args:
        fit: A :class:`~tracktale.analysis.stats.glm.GLMFit` of model 2 (with ``recency_c``).
        bound_points: The equivalence bound, percentage points per position.

    Returns:
        ``estimate_points``, ``se_points``, ``ci90_low``, ``ci90_high``, ``bound``, ``p_lower``,
        ``p_upper``, ``p_tost``, ``equivalent``, ``df``.
    """
    from scipy import stats

    row = fit.table.set_index("term").loc["recency_c"]
    accuracy = float(fit.result.model.endog.mean())
    slope = 100 * accuracy * (1 - accuracy)
    estimate, se = slope * float(row["b"]), slope * float(row["se"])
    df = float(getattr(fit, "df", math.inf))
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
    }
