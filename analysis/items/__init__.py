"""Report sections of imported item tables (the ``items`` paradigm).

Three sections, on the test items only:

- accuracy by the declared factors (:mod:`.accuracy`): people (after the session exclusions,
  participant-bootstrap intervals) and every model on each judged task side by side, by every
  cell of the factors and by each factor, with one figure per factor;
- the mixed model of the people's accuracy with the declared fixed effects (:mod:`.mixed`);
- each model's accuracy on each judged task per cell, with Wilson intervals over items
  (:func:`models_section`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

    from tracktale.analysis.report.build import ReportContext, SectionResult

SECTIONS = (
    "tracktale.analysis.items.accuracy:accuracy_section",
    "tracktale.analysis.items.mixed:mixed_section",
    "tracktale.analysis.items:models_section",
)
"""The paradigm's report sections (``module:function``), in page order."""


def models_section(context: ReportContext) -> SectionResult | None:
    """Model accuracy by task and by the declared factors' cells."""
    from tracktale.analysis.report.build import SectionResult
    from tracktale.analysis.report.tables import save_table
    from tracktale.analysis.stats.proportions import wilson_interval
    from tracktale.models.tasks import judged_tasks

    models = context.models
    if models is None or models.empty:
        return None
    rows = models[(models["role"] == "main") & models["task"].isin(judged_tasks())]
    if rows.empty:
        return None
    factors = _declared_factors(context)
    columns = [_column(rows, name) for name in factors]
    keys = ["agent", "task", *(column for column in columns if column is not None)]
    table = rows.groupby(keys, sort=True)["correct"].agg(n="size", correct="sum").reset_index()
    table["correct"] = table["correct"].astype(int)
    table["accuracy"] = table["correct"] / table["n"]
    bounds = [
        wilson_interval(int(k), int(n)) for k, n in zip(table["correct"], table["n"], strict=True)
    ]
    table["ci_low"] = [low for low, _ in bounds]
    table["ci_high"] = [high for _, high in bounds]
    title = "Model accuracy on the test items by task and by the design's cells (95% Wilson)"
    saved = save_table(
        table.rename(columns={"agent": "model"}), context.tables_dir, "items_accuracy", title
    )
    return SectionResult(title=f"{context.paradigm}: models", tables=[saved])


def _column(rows: pd.DataFrame, factor: str) -> str | None:
    """The trial table's column of a factor (prefixed where its name is a reserved column)."""
    for name in (factor, f"condition_{factor}"):
        if name in rows.columns:
            return name
    return None


def _declared_factors(context: ReportContext) -> list[str]:
    """The factors the sets' designs declare, in declared order (first set first)."""
    found: list[str] = []
    for stimulus_set in context.stimulus_sets:
        for name in stimulus_set.manifest.config.get("factors", ()):
            if name not in found:
                found.append(name)
    return found
