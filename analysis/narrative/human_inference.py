"""The human section's inference: the default that holds for items, then the paper's.

The section leads with the method of :func:`~tracktale.analysis.stats.inference.resolve_method`
(``glmer`` where R has lme4, else the two-way clustered GLM), with the task contrast at each
complexity and the marginal probabilities; with glmer also the variance components and ICCs,
the model comparison and the likelihood-ratio tests. The paper's participant-clustered GLMs
follow, labelled as the paper's specification, with a table setting their SEs beside the
two-way ones. Every warning (a singular or non-converged fit, the variational Bayes fallback, a
model that could not be fitted) is returned for the CLI and written into the tables.

Table files (CSV and LaTeX, stable names): ``inference_model1``/``inference_model2`` (the
leading method's models), ``task_contrasts``, ``marginal_probabilities``, ``glm_complexity`` and
``glm_recency`` (the paper's), ``glm2way_complexity`` and ``glm2way_recency``, ``se_comparison``,
``complexity_permutation`` and ``recency_permutation`` (the item-permutation tests),
and with a mixed model ``mixed_model1_fixed``, ``mixed_model2_fixed``, ``mixed_random``,
``mixed_icc``, ``mixed_comparison``, ``mixed_lrt``.
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tracktale.analysis.report.tables import SavedTable, save_table
from tracktale.analysis.stats.glm import GLMFit, fit_human_glm
from tracktale.analysis.stats.inference import METHOD_LABELS, TWO_WAY_REFERENCE
from tracktale.atomic import atomic_write_text
from tracktale.errors import TracktaleError

if TYPE_CHECKING:
    import pandas as pd

    from tracktale.analysis.stats.mixed_analysis import MixedAnalysis

WHY = (
    "Complexity and focus vary only between items, so the items' own variation is part of "
    "the sampling error of their effects. The paper's GLM clusters by participant only and "
    "treats the items as fixed: in null simulations of this design its complexity and "
    "recency tests reject far more often than 5% (see docs/explanation/statistics.md and "
    "benchmarks/bench_null_calibration.py). The inference below leads with a method that "
    "counts the items; the paper's specification follows for reproduction."
)
INFERENCE_CHOICES = ("auto", "glmer", "glm-2way", "glm")


@dataclass
class HumanInference:
    """What the inference part of the human section shows.

    Attributes:
        method: The leading method (``glmer``, ``glm-2way`` or ``glm``).
        html: HTML fragments, in order.
        tables: The tables written, in order.
        warnings: One line per warning, for the CLI.
        fits: Named fits for later sections (``glm_complexity``, ``glm_recency``,
            ``glm2way_complexity``, ``glm2way_recency``, ``mixed``).
    """

    method: str
    html: list[str] = field(default_factory=list)
    tables: list[SavedTable] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    fits: dict[str, Any] = field(default_factory=dict)


def _glms(analysed: pd.DataFrame, options: Any, out: HumanInference) -> None:
    models = (("complexity", None), ("recency", options.recency))
    for clustering, prefix in (("participant", "glm"), ("two-way", "glm2way")):
        for suffix, recency in models:
            try:
                fit = fit_human_glm(
                    analysed,
                    recency=recency,
                    task_coding=options.task_coding,
                    clustering=clustering,
                    reference=TWO_WAY_REFERENCE if clustering == "two-way" else "normal",
                    floor=getattr(options, "two_way_floor", True),
                )
            except TracktaleError as error:
                out.warnings.append(f"{prefix}_{suffix} not fitted: {error}")
                continue
            out.fits[f"{prefix}_{suffix}"] = fit


def _mixed(analysed: pd.DataFrame, options: Any, out: HumanInference) -> MixedAnalysis | None:
    from tracktale.analysis.stats.mixed import approximate_warning
    from tracktale.analysis.stats.mixed_analysis import fit_mixed_models

    if options.engine == "none":
        return None
    try:
        analysis = fit_mixed_models(
            analysed,
            recency=options.recency,
            engine=options.engine,
            slopes=options.slopes,
            task_coding=options.task_coding,
            glmer_test=getattr(options, "glmer_test", "t-bw"),
            random="intercepts" if options.slopes else getattr(options, "random", "maximal"),
        )
    except TracktaleError as error:
        if options.engine != "auto":
            raise
        out.warnings.append(f"the mixed models could not be fitted: {error}")
        return None
    if analysis.approximate:
        out.warnings.append(approximate_warning(options.engine == "statsmodels"))
    out.warnings += analysis.warnings
    out.fits["mixed"] = analysis
    return analysis


def lead_method(requested: str, analysis: MixedAnalysis | None) -> str:
    """The method the section leads with.

    Raises:
        TracktaleError: When glmer is asked for but no lme4 fit of model 1 exists.
    """
    has_glmer = analysis is not None and analysis.engine == "lme4" and "model 1" in analysis.fits
    if requested == "auto":
        return "glmer" if has_glmer else "glm-2way"
    if requested not in INFERENCE_CHOICES:
        choices = ", ".join(INFERENCE_CHOICES)
        raise TracktaleError(f"unknown inference {requested!r} (use {choices})")
    if requested == "glmer" and not has_glmer:
        raise TracktaleError(
            "--inference glmer needs glmer's model 1: R with lme4 and --engine auto or lme4"
        )
    return requested


def _recency_permutation(analysed: pd.DataFrame, options: Any, out: HumanInference) -> None:
    from tracktale.analysis.stats.permutation import PERMUTATIONS, recency_test_of_trials

    permutations = getattr(options, "permutations", PERMUTATIONS)
    if not permutations:
        return
    try:
        test = recency_test_of_trials(
            analysed, options.recency, options.task_coding, permutations=permutations
        )
    except TracktaleError as error:
        out.warnings.append(f"the recency permutation test was not run: {error}")
        return
    if test.p != test.p:
        out.warnings.append(f"recency ({test.covariate}) does not vary within any complexity")
    out.fits["recency_permutation"] = test


def _complexity_permutation(analysed: pd.DataFrame, options: Any, out: HumanInference) -> None:
    from tracktale.analysis.stats.permutation import (
        COMPLEXITY_STATISTICS,
        PERMUTATIONS,
        UNPERMUTED_STATISTICS,
        complexity_test_of_trials,
    )

    permutations = getattr(options, "permutations", PERMUTATIONS)
    statistic = getattr(options, "complexity_statistic", COMPLEXITY_STATISTICS[0])
    if not permutations and statistic not in UNPERMUTED_STATISTICS:
        return
    try:
        test = complexity_test_of_trials(
            analysed, options.task_coding, permutations=permutations, statistic=statistic
        )
    except TracktaleError as error:
        out.warnings.append(f"the complexity permutation test was not run: {error}")
        return
    if test.p != test.p:
        out.warnings.append("complexity does not vary between items: no complexity test")
    out.fits["complexity_permutation"] = test


MODELS_COMPLEXITY_NOTE = (
    "The models' own complexity p above rejected a true null 6.6-9% of the time at N 48, "
    "item SD 0.5 (docs/explanation/statistics.md)."
)
"""What the benchmarks measured of the models' complexity p (issue 29), after either test."""


def permutation_sentence(test: Any) -> str:
    """One sentence on an item-permutation test (recency or complexity), for the report."""
    if test.test == "complexity" and not test.permutations:
        return (
            f"Complexity is tested across its {test.items} items by the slope of their "
            f"empirical logits over its two-way SE (participants and items; HC3), against "
            f"t({test.items - 2}): p = {test.p:.3g}, the report's complexity test, for the null "
            f"of no complexity effect in either task. {MODELS_COMPLEXITY_NOTE}"
        )
    if test.test == "complexity":
        how = test.method.split("(", 1)[-1].rstrip(")")
        return (
            "Complexity is tested by permuting the items' complexity across all "
            f"{test.items} items ({test.permutations:,} relabellings, {how}): p = {test.p:.3g}, "
            "the report's complexity test, for the null of no complexity effect in either "
            f"task. {MODELS_COMPLEXITY_NOTE}"
        )
    return (
        f"Recency is tested by permuting the items' {test.covariate} values within complexity "
        f"levels ({test.permutations:,} relabellings, {test.informative_items} of {test.items} "
        f"items informative): p = {test.p:.3g}, the report's recency test. It holds its 5% rate "
        "whatever the items' spread, where the model's own recency p above rejected a true "
        "null 8-13% of the time at item SD 0.5 (docs/explanation/statistics.md)."
    )


def _with_permutation_p(table: pd.DataFrame, out: HumanInference) -> pd.DataFrame:
    """Rows tested by permutation get its p beside the model's own (``p_permutation``).

    The recency row of any model; the complexity main-effect row of model 1 only (the
    complexity test's null model has no recency, so it is not model 2's adjusted effect).
    """
    import numpy as np

    terms = table["term"].astype(str)
    model1 = table["model"] == "model 1" if "model" in table else False
    rows = {
        "recency": terms.str.startswith("recency").to_numpy(dtype=bool),
        "complexity": (
            terms.str.startswith("complexity") & ~terms.str.contains(":") & model1
        ).to_numpy(dtype=bool),
    }
    p, tested = np.full(len(table), np.nan), np.zeros(len(table), dtype=bool)
    for name, selected in rows.items():
        test = out.fits.get(f"{name}_permutation")
        if test is not None:
            p[selected], tested = test.p, tested | selected
    if not tested.any():
        return table
    return table.assign(p_permutation=p)


def _coefficients(fit: GLMFit, method: str, model: str) -> pd.DataFrame:
    table = fit.table.copy()
    table.insert(0, "model", model)
    table.insert(1, "method", method)
    return table


def _mixed_fixed(fit: Any, model: str) -> pd.DataFrame:
    table = fit.fixed.drop(columns=["approximate"], errors="ignore").copy()
    table.insert(0, "model", model)
    table.insert(1, "method", "glmer" if fit.engine == "lme4" else "variational Bayes")
    table["approximate"] = fit.approximate
    table["singular"] = fit.singular
    table["warnings"] = " | ".join(fit.warnings)
    return table


def human_inference(analysed: pd.DataFrame, options: Any, tables_dir: Path) -> HumanInference:
    """Fit every model, choose the lead, write the tables and return the section's parts.

    Args:
        analysed: Human trials after exclusions (both tasks).
        options: The report's options (``engine``, ``slopes``, ``recency``, ``task_coding``
            and ``inference``).
        tables_dir: Where the tables go.

    Returns:
        The parts, in the order the report shows them.
    """
    out = HumanInference(method="glm-2way")
    _glms(analysed, options, out)
    analysis = _mixed(analysed, options, out)
    out.method = lead_method(getattr(options, "inference", "auto"), analysis)
    _recency_permutation(analysed, options, out)
    _complexity_permutation(analysed, options, out)
    levels = sorted(float(v) for v in analysed["complexity"].dropna().unique())
    save = _saver(out, tables_dir)
    out.html.append(f"<h3>Inference: {html.escape(METHOD_LABELS[out.method])}</h3>")
    out.html.append(f"<p>{html.escape(WHY)}</p>")
    _primary(out, save, options)
    _equivalence(analysed, out, save, options)
    _bayes(analysed, options, out, save)
    _lead_tables(out, analysis, levels, save)
    if analysis is not None and out.method != "glmer":
        _mixed_tables(out, analysis, save, leading=False)
    # Stable file names whatever leads; a leading method's tables are not listed twice.
    if out.method != "glm-2way":
        out.html.append(f"<h3>{html.escape(METHOD_LABELS['glm-2way'])}</h3>")
    _glm_tables(out, "glm2way", "glm-2way", save, shown=out.method != "glm-2way")
    out.html.append("<h3>The paper's specification: GLM, SEs clustered by participant</h3>")
    out.html.append(
        "<p>Reproduces the paper's analysis (section 3.3): correct answers on mean-centred "
        "complexity, probing method and their interaction, standard errors clustered by "
        "participant; the second model adds the recency covariate. Its complexity and recency "
        "tests do not count the items' variation.</p>"
    )
    _glm_tables(out, "glm", "glm", save, shown=True)
    comparison = se_comparison(out.fits)
    if not comparison.empty:
        save(comparison, "se_comparison", "Standard errors: participant-clustered vs two-way")
    return out


def _primary(out: HumanInference, save, options: Any) -> None:
    """One primary p per hypothesis first; every other p of those hypotheses as robustness."""
    from tracktale.analysis.stats.primary import primary_tables

    interaction_test = getattr(options, "interaction_test", "glm-2way")
    primary, robustness = primary_tables(out.fits, out.method, interaction_test)
    out.html.append(
        "<p>One declared primary test per hypothesis (complexity, task x complexity, "
        "recency); the other tests of the same hypotheses follow as robustness checks, not "
        "as alternatives to choose from.</p>"
    )
    save(primary, "primary_tests", "Primary tests: one per hypothesis")
    save(robustness, "robustness_tests", "Robustness: the other tests of each hypothesis")


def recency_bound(options: Any) -> float:
    """The smallest recency effect of interest the report's options declare (points)."""
    from tracktale.analysis.stats.primary import RECENCY_SESOI_POINTS

    return float(getattr(options, "recency_sesoi", None) or RECENCY_SESOI_POINTS)


def _equivalence(analysed: pd.DataFrame, out: HumanInference, save, options: Any) -> None:
    """The TOST of recency against the smallest effect of interest, beside its primary test."""
    import pandas as pd

    from tracktale.analysis.stats.glm import design_frame
    from tracktale.analysis.stats.primary import (
        RECENCY_INTERVAL_LABELS,
        RecencyInterval,
        recency_equivalence,
    )

    fit = out.fits.get("glm2way_recency")
    if fit is None or "recency_c" not in set(fit.table["term"]):
        return
    interval: RecencyInterval = getattr(options, "recency_interval", "larger")
    frame, _ = design_frame(
        analysed, recency=options.recency, task_coding=options.task_coding, extra=("item_id",)
    )
    try:
        result = recency_equivalence(fit, recency_bound(options), interval, frame)
    except TracktaleError as error:
        out.warnings.append(f"the recency equivalence test was not run: {error}")
        return
    verdict = "equivalent to no effect" if result["equivalent"] else "not shown equivalent"
    out.html.append(
        "<p>Recency, equivalence test (TOST, two-way GLM's estimate, percentage points per "
        f"focus position at the mean accuracy; SE: {html.escape(RECENCY_INTERVAL_LABELS[interval])}"
        f", df {result['df']:g}): {result['estimate_points']:+.2f} points, 90% CI "
        f"[{result['ci90_low']:+.2f}, {result['ci90_high']:+.2f}] against bounds "
        f"+-{result['bound']:g}: p = {result['p_tost']:.3g}, {verdict}.</p>"
    )
    save(pd.DataFrame([result]), "recency_equivalence", "Recency: equivalence test (TOST)")


def _bayes(analysed: pd.DataFrame, options: Any, out: HumanInference, save) -> None:
    """With ``--bayes``: recency's posterior in points and its mass inside the bounds (brms)."""
    if not getattr(options, "bayes", False) or not options.recency:
        return
    import pandas as pd

    from tracktale.analysis.stats.bayes import fit_bayes_recency
    from tracktale.analysis.stats.glm import design_frame

    frame, _ = design_frame(
        analysed, recency=options.recency, task_coding=options.task_coding, extra=("item_id",)
    )
    result = fit_bayes_recency(frame, recency_bound(options), seed=getattr(options, "seed", 1))
    out.html.append(
        "<p>Recency, Bayesian estimate (brms, the same model with the maximal random effects; "
        f"priors: {html.escape(result.priors)}): {result.estimate_points:+.2f} points per "
        f"focus position, 95% interval [{result.ci95_low:+.2f}, {result.ci95_high:+.2f}]; "
        f"posterior mass inside +-{result.bound:g}: {result.mass_inside:.1%} (largest R-hat "
        f"{result.rhat_max:.3f}, {result.divergent} divergent transitions).</p>"
    )
    # One quantity a row: the formula and priors are too long for a column of a wide row.
    rows = [{"quantity": key, "value": value} for key, value in result.model_dump().items()]
    save(pd.DataFrame(rows), "recency_bayes", "Recency: Bayesian estimate")


@dataclass(frozen=True)
class _Texts:
    """Several fits' text summaries saved as one file."""

    texts: list[str]

    def to_text(self) -> str:
        return "\n\n".join(self.texts)


def _saver(out: HumanInference, tables_dir: Path):
    def save(
        table: pd.DataFrame, name: str, title: str, listed: bool = True, fit: Any = None
    ) -> None:
        saved = save_table(table, tables_dir, name, title)
        if fit is not None:
            # The page shows one table per model; the fit's full text summary is a file beside.
            text = tables_dir / f"{name}.txt"
            atomic_write_text(text, fit.to_text())
            saved.paths["txt"] = text
        if listed:
            out.tables.append(saved)

    return save


def _glm_tables(out: HumanInference, prefix: str, method: str, save, shown: bool) -> None:
    for suffix, model in (("complexity", "model 1"), ("recency", "model 2")):
        fit = out.fits.get(f"{prefix}_{suffix}")
        if fit is None:
            continue
        title = f"{METHOD_LABELS[method]}: {model}"
        save(_coefficients(fit, method, model), f"{prefix}_{suffix}", title, shown, fit)


def _lead_tables(out: HumanInference, analysis: Any, levels: list[float], save) -> None:
    import pandas as pd

    from tracktale.analysis.stats.contrasts import glm_marginal_tables, mixed_marginal_tables

    label = METHOD_LABELS[out.method]
    if out.method == "glmer":
        fits = analysis.fits
        for name, key in (("model 1", "inference_model1"), ("model 2", "inference_model2")):
            if name in fits:
                table = _with_permutation_p(_mixed_fixed(fits[name], name), out)
                save(table, key, f"{label}: {name}", fit=fits[name])
        lead_fit = fits["model 1"]
        probabilities, contrasts = mixed_marginal_tables(lead_fit, levels)
    else:
        prefix = "glm" if out.method == "glm" else "glm2way"
        for suffix, name, key in (
            ("complexity", "model 1", "inference_model1"),
            ("recency", "model 2", "inference_model2"),
        ):
            fit = out.fits.get(f"{prefix}_{suffix}")
            if fit is not None:
                table = _with_permutation_p(_coefficients(fit, out.method, name), out)
                save(table, key, f"{label}: {name}", fit=fit)
        lead_fit = out.fits.get(f"{prefix}_complexity")
        if lead_fit is None:
            return
        probabilities, contrasts = glm_marginal_tables(lead_fit, levels)
    for name in ("complexity", "recency"):
        test = out.fits.get(f"{name}_permutation")
        if test is not None:
            out.html.append(f"<p>{html.escape(permutation_sentence(test))}</p>")
            title = f"{name.capitalize()} by item permutation"
            save(pd.DataFrame([test.row()]), f"{name}_permutation", title)
    if not contrasts.empty:
        save(contrasts, "task_contrasts", f"Task contrast at each complexity ({label}, model 1)")
    save(probabilities, "marginal_probabilities", f"Marginal probabilities ({label}, model 1)")
    _save_point_effects(lead_fit, out.method, levels, label, save)
    if out.method == "glmer":
        _mixed_tables(out, analysis, save, leading=True)


def _save_point_effects(fit: Any, method: str, levels: list[float], label: str, save) -> None:
    """Effects in percentage points over the population (issue 29), from the lead model 1."""
    from tracktale.analysis.stats.marginal_effects import (
        INTERVAL_NOTE,
        glm_point_effects,
        mixed_point_effects,
    )

    effects = mixed_point_effects if method == "glmer" else glm_point_effects
    _, points = effects(fit, levels)
    title = (
        f"Effects in percentage points, averaged over participants and items ({label}, "
        f"model 1): {INTERVAL_NOTE}"
    )
    save(points, "effects_points", title)


def _mixed_tables(out: HumanInference, analysis: Any, save, leading: bool) -> None:
    import pandas as pd

    engine = "glmer" if analysis.engine == "lme4" else "variational Bayes, APPROXIMATE"
    if not leading:
        out.html.append(f"<h3>Mixed models ({html.escape(engine)})</h3>")
    for name, key in (("model 1", "mixed_model1_fixed"), ("model 2", "mixed_model2_fixed")):
        if name in analysis.fits:
            table = _mixed_fixed(analysis.fits[name], name)
            save(table, key, f"Mixed {name} ({engine})", not leading, analysis.fits[name])
    components = [
        fit.components.assign(model=name, approximate=fit.approximate, singular=fit.singular)
        for name, fit in analysis.fits.items()
        if fit.components is not None
    ]
    if components:
        random = pd.concat(components, ignore_index=True)
        random = random[["model", *[c for c in random.columns if c != "model"]]]
        save(random, "mixed_random", f"Random effects: variances, SDs, correlations ({engine})")
    if not analysis.icc.empty:
        save(analysis.icc, "mixed_icc", f"Intraclass correlations, latent scale ({engine})")
    save(analysis.comparison, "mixed_comparison", f"Model comparison: AIC and BIC ({engine})")
    if not analysis.lrt.empty:
        save(analysis.lrt, "mixed_lrt", "Likelihood-ratio tests (glmer)")
    ladder = analysis.ladder_table() if hasattr(analysis, "ladder_table") else pd.DataFrame()
    if not ladder.empty:
        out.html += [f"<p>{html.escape(note)}.</p>" for note in analysis.notes]
        # One table on the page; every model's ladder, step by step, is a file beside it.
        save(
            ladder,
            "mixed_ladder",
            "Random effects: the maximal model and every ladder step",
            fit=_Texts([fit.to_text() for fit in analysis.ladders.values()]),
        )
        optimizers = analysis.optimizer_table()
        if not optimizers.empty:
            save(optimizers, "mixed_optimizers", "The final fits under other optimizers")
    elif analysis.approximate:
        out.html.append(
            "<p>No likelihood-ratio tests, AIC or BIC: variational Bayes has no likelihood.</p>"
        )


def se_comparison(fits: dict[str, Any]) -> pd.DataFrame:
    """Each GLM term's participant-clustered and two-way SE side by side."""
    import pandas as pd

    rows = []
    for suffix, model in (("complexity", "model 1"), ("recency", "model 2")):
        paper, two_way = fits.get(f"glm_{suffix}"), fits.get(f"glm2way_{suffix}")
        if paper is None or two_way is None:
            continue
        a, b = paper.table.set_index("term"), two_way.table.set_index("term")
        for term in a.index:
            rows.append(
                {
                    "model": model,
                    "term": term,
                    "label": a.loc[term, "label"],
                    "b": a.loc[term, "b"],
                    "se_participant": a.loc[term, "se"],
                    "se_two_way": b.loc[term, "se_two_way"],
                    "ratio": b.loc[term, "se_two_way"] / a.loc[term, "se"],
                    "se_tested": b.loc[term, "se"],
                    "p_participant": a.loc[term, "p"],
                    "p_two_way": b.loc[term, "p"],
                }
            )
    return pd.DataFrame(rows)
