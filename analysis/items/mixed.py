"""The people's accuracy in a logistic mixed model with the declared fixed effects.

Fixed effects: every declared factor and their interactions (the full factorial), each factor
in *simple coding*: a factor with levels ``a`` (the first, the reference), ``b``, ``c`` gets one
column per later level, ``1 - 1/k`` at that level and ``-1/k`` elsewhere, so each estimate is
that level's log-odds difference from the reference and the intercept is the grand mean (for
two levels the columns are +0.5 / -0.5). Random effects: intercepts for participants and for
items (the item's label: its conditions share it). The random-effects structure the design
implies (slopes for the factors that vary within participants and within items) is the
inference issue's rule; until the report has it, this section fits the intercepts only and
says so.

Engine: ``glmer`` (lme4) when R has it; else a logistic GLM with standard errors clustered by
participant and by item (the report says which).
"""

from __future__ import annotations

import html
from typing import TYPE_CHECKING

from tracktale.analysis.items.data import Factor, analysed_people, declared_factors, item_labels

if TYPE_CHECKING:
    import pandas as pd

    from tracktale.analysis.report.build import ReportContext, SectionResult

RANDOM_EFFECTS = "(1 | agent) + (1 | item)"
RANDOM_NOTE = (
    "Random effects: intercepts for participants and for items. The random-effects structure "
    "the design implies (slopes for factors that vary within participants and within items) "
    "is not in the report yet: this model has the intercepts only, so its standard errors may "
    "be too small for effects that vary between participants or items."
)


def mixed_section(context: ReportContext) -> SectionResult | None:
    """Fit and show the mixed model of the people's test trials."""
    from tracktale.analysis.report.build import SectionResult
    from tracktale.analysis.report.tables import save_table

    people, _ = analysed_people(context)
    factors = declared_factors(context)
    if people is None or not factors:
        return None
    section = SectionResult(title=f"{context.paradigm}: mixed model of the people's accuracy")
    if people["agent"].nunique() < 2:
        section.warnings.append("items mixed model: fewer than two participants, not fitted")
        return section
    frame, labels, dropped = model_frame(people, factors, item_labels(context))
    if not labels:
        section.warnings.append("items mixed model: no factor varies in the data, not fitted")
        return section
    formula = fixed_formula(factors, labels)
    try:
        table, engine = fit(frame, formula, labels)
    except Exception as error:  # a failed fit is a line in the report, not a lost report
        section.warnings.append(f"items mixed model failed: {' '.join(str(error).split())}")
        return section
    title = f"Mixed model of the people's accuracy ({engine}), log-odds"
    section.tables.append(save_table(table, context.tables_dir, "items_mixed_model", title))
    section.html = _notes(formula, engine, dropped, frame)
    return section


def model_frame(
    people: pd.DataFrame, factors: list[Factor], labels_of_items: dict[str, str]
) -> tuple[pd.DataFrame, dict[str, str], list[str]]:
    """The rows, the coded columns' labels (column -> ``factor: level vs reference``), notes."""
    import pandas as pd

    frame = pd.DataFrame(
        {
            "correct": people["correct"].astype(int).to_numpy(),
            "agent": people["agent"].astype(str).to_numpy(),
            "item": [labels_of_items.get(item, item) for item in people["item_id"].astype(str)],
        }
    )
    labels: dict[str, str] = {}
    dropped = []
    for index, factor in enumerate(factors):
        values = people[factor.column].astype(str).to_numpy()
        levels = [level for level in factor.levels if level in set(values)]
        if len(levels) < 2:
            dropped.append(f"{factor.name} (one level in the data)")
            continue
        for number, level in enumerate(levels[1:], start=1):
            column = f"f{index}_{number}"
            frame[column] = [
                (1 - 1 / len(levels)) if v == level else -1 / len(levels) for v in values
            ]
            labels[column] = f"{factor.name}: {level} vs {levels[0]}"
    return frame, labels, dropped


def fixed_formula(factors: list[Factor], labels: dict[str, str]) -> str:
    """``correct ~`` the full factorial of the coded factors (R and patsy read it alike)."""
    groups = []
    for index in range(len(factors)):
        columns = [column for column in labels if column.startswith(f"f{index}_")]
        if columns:
            groups.append("(" + " + ".join(columns) + ")")
    return "correct ~ " + " * ".join(groups)


def fit(frame: pd.DataFrame, formula: str, labels: dict[str, str]) -> tuple[pd.DataFrame, str]:
    """Fit the model: glmer where R has lme4, else the GLM clustered by participant and item.

    Returns:
        The fixed effects (``term``, ``estimate``, ``se``, ``z``, ``p``, ``odds_ratio``) and
        the engine, in words.
    """
    import numpy as np

    from tracktale.analysis.stats.lme4 import fit_glmer, lme4_available

    if lme4_available():
        glmer = fit_glmer(frame, f"{formula} + {RANDOM_EFFECTS}")
        table = glmer.fixed[["term", "estimate", "se", "z", "p"]].copy()
        engine = "glmer, lme4: random intercepts for participants and items"
    else:
        table = _clustered_glm(frame, formula)
        engine = (
            "R with lme4 is not installed: a logistic GLM with SEs clustered by participant "
            "and item"
        )
    table["term"] = [term_label(str(term), labels) for term in table["term"]]
    table["odds_ratio"] = np.exp(table["estimate"].astype(float))
    return table.reset_index(drop=True), engine


def _clustered_glm(frame: pd.DataFrame, formula: str) -> pd.DataFrame:
    import pandas as pd
    import statsmodels.api as sm
    import statsmodels.formula.api as smf

    from tracktale.analysis.stats.cluster import clustered_inference

    result = smf.glm(formula, frame, family=sm.families.Binomial()).fit()
    inference = clustered_inference(result, frame, ("agent", "item"))
    return pd.DataFrame(
        {
            "term": inference.params.index,
            "estimate": inference.params.to_numpy(),
            "se": inference.se.to_numpy(),
            "z": (inference.params / inference.se).to_numpy(),
            "p": inference.pvalues.to_numpy(),
        }
    )


def term_label(term: str, labels: dict[str, str]) -> str:
    """A model term in the design's words (``Intercept``; ``a: x vs y × b: u vs v``)."""
    if term in ("(Intercept)", "Intercept"):
        return "(Intercept)"
    return " × ".join(labels.get(part, part) for part in term.split(":"))


def _notes(formula: str, engine: str, dropped: list[str], frame: pd.DataFrame) -> str:
    counts = (
        f"{len(frame)} trials, {frame['agent'].nunique()} participants, "
        f"{frame['item'].nunique()} items"
    )
    parts = [
        f"<p>{html.escape(counts)}. Engine: {html.escape(engine)}.</p>",
        f"<p>Fixed effects: <code>{html.escape(formula)}</code>, each factor in simple coding "
        "(an estimate is a level's log-odds difference from the factor's first level; the "
        "intercept is the grand mean).</p>",
        f"<p>{html.escape(RANDOM_NOTE)}</p>",
    ]
    if dropped:
        parts.append(f"<p>Left out: {html.escape(', '.join(dropped))}.</p>")
    return "".join(parts)
