"""Which inference the report leads with, and the default tests under each method.

Three methods fit the paper's two models (model 1: complexity x task; model 2: + recency):

- ``glm``: the logistic GLM with participant-clustered SEs, the paper's specification;
- ``glm-2way``: the same GLM with SEs clustered by participant and item;
- ``glmer``: the logistic mixed model with crossed random intercepts (lme4, through R).

Complexity and focus vary only between items, so ``glm`` treats the items as fixed and its
complexity and recency tests reject far too often when items differ (the null-calibration
benchmark, ``benchmarks/bench_null_calibration.py``). The report therefore leads with
:func:`default_method`: ``glmer`` where R has lme4, else ``glm-2way``; the paper's ``glm`` is
always shown too, labelled as the paper's. The four default tests are the complexity, task and
interaction terms of model 1 and the recency term of model 2.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tracktale.errors import TracktaleError

if TYPE_CHECKING:
    import pandas as pd

METHODS = ("glm", "glm-2way", "glmer")
METHOD_LABELS = {
    "glm": "GLM, SEs clustered by participant (the paper's specification)",
    "glm-2way": "GLM, SEs clustered by participant and item (two-way)",
    "glmer": "mixed model (glmer), random effects for participants and items",
}
DEFAULT_TESTS = ("complexity", "task", "interaction", "recency")
"""The tests the report makes by default: three terms of model 1, recency in model 2."""
GLM_TERMS = {
    "complexity": "complexity_c",
    "task": "task_s",
    "interaction": "complexity_c:task_s",
    "recency": "recency_c",
}
GLMER_TERMS = {
    "complexity": "complexity_z",
    "task": "task_s",
    "interaction": "complexity_z:task_s",
    "recency": "recency_z",
}
TWO_WAY_REFERENCE = "t"
"""p-values of the two-way GLM come from t(G - 1), G the number of items (the fewer clusters);
the null-calibration benchmark measured z tests rejecting more often (see the README)."""


def default_method() -> str:
    """``glmer`` when R with lme4 is installed, else ``glm-2way``."""
    from tracktale.analysis.stats.lme4 import lme4_available

    return "glmer" if lme4_available() else "glm-2way"


def resolve_method(method: str) -> str:
    """``auto`` -> :func:`default_method`; other names are checked.

    Raises:
        TracktaleError: For an unknown method.
    """
    if method == "auto":
        return default_method()
    if method not in METHODS:
        raise TracktaleError(f"unknown inference method {method!r} (use {', '.join(METHODS)})")
    return method


def test_of_term(term: str) -> str:
    """The default test a GLM or glmer term belongs to (``complexity_c`` -> ``complexity``)."""
    for table in (GLM_TERMS, GLMER_TERMS):
        for test, name in table.items():
            if name == term:
                return test
    raise TracktaleError(f"unknown term {term!r} (choose from {', '.join(GLM_TERMS.values())})")


def glm_tests(
    trials: pd.DataFrame,
    method: str,
    *,
    recency: str = "focus",
    task_coding: str = "sum",
    tests: tuple[str, ...] = DEFAULT_TESTS,
) -> dict[str, tuple[float, float]]:
    """Estimate and p of each default test under a GLM method (``glm`` or ``glm-2way``).

    Model 1 is fitted for complexity, task and interaction, model 2 for recency (only the
    models the asked tests need).

    Returns:
        Test -> ``(estimate, p)``.
    """
    from tracktale.analysis.stats.glm import fit_human_glm

    if method not in ("glm", "glm-2way"):
        raise TracktaleError(f"glm_tests fits GLMs, not {method!r}")
    clustering = "participant" if method == "glm" else "two-way"
    reference = "normal" if method == "glm" else TWO_WAY_REFERENCE
    out: dict[str, tuple[float, float]] = {}
    needs = {
        "model 1": [t for t in tests if t != "recency"],
        "model 2": [t for t in tests if t == "recency"],
    }
    for model, wanted in needs.items():
        if not wanted:
            continue
        fit = fit_human_glm(
            trials,
            recency=recency if model == "model 2" else None,
            task_coding=task_coding,
            clustering=clustering,
            reference=reference,
        )
        table = fit.table.set_index("term")
        for test in wanted:
            row = table.loc[GLM_TERMS[test]]
            out[test] = (float(row["b"]), float(row["p"]))
    return out


def glmer_formulas(both_tasks: bool = True, slopes: bool = False) -> dict[str, str]:
    """Model 1 and model 2 as lme4 formulas (as the report fits them)."""
    from tracktale.analysis.stats.mixed import fixed_formula, lme4_formula

    return {
        "model 1": lme4_formula(fixed_formula(False, both_tasks), slopes),
        "model 2": lme4_formula(fixed_formula(True, both_tasks), slopes),
    }


def glmer_batch_tests(rows: pd.DataFrame) -> pd.DataFrame:
    """The default tests from :func:`~tracktale.analysis.stats.glmer_batch.fit_batch` rows.

    Returns:
        One row per (sim, test): ``estimate``, ``p``, ``singular``, ``warning``, ``error``;
        a failed fit has NaN estimate and p.
    """
    import pandas as pd

    wanted = {("model 1", GLMER_TERMS[t]): t for t in DEFAULT_TESTS if t != "recency"}
    wanted[("model 2", GLMER_TERMS["recency"])] = "recency"
    records = []
    for (sim, model), group in rows.groupby(["sim", "model"], sort=True):
        error = str(group["error"].iloc[0]) if isinstance(group["error"].iloc[0], str) else ""
        by_term = group.set_index("term") if not error else None
        for (model_name, term), test in wanted.items():
            if model_name != model:
                continue
            estimate = p = float("nan")
            if by_term is not None and term in by_term.index:
                estimate = float(by_term.loc[term, "estimate"])
                p = float(by_term.loc[term, "p"])
            records.append(
                {
                    "sim": sim,
                    "test": test,
                    "estimate": estimate,
                    "p": p,
                    "singular": bool(group["singular"].iloc[0]) if not error else False,
                    "warning": str(group["warning"].fillna("").iloc[0]),
                    "error": error,
                }
            )
    return pd.DataFrame(records)
