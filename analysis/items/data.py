"""The rows the items report analyses: the declared factors, people after exclusions, models.

Shared by the sections of :mod:`tracktale.analysis.items`. Factors and their levels come from
the designs the stimulus sets record (``manifest.config``), in declared order; a factor's
values are ordered by its declared levels, so tables and figures follow the design.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

    from tracktale.analysis.report.build import ReportContext

HUMAN_TASKS = ("explicit", "comprehension")
"""The human study's tasks: a typed answer, a forced choice (:mod:`...paradigms.items`)."""


@dataclass(frozen=True)
class Factor:
    """A declared factor.

    Attributes:
        name: Its name in the design.
        column: Its column in the trial table (prefixed where the name is a reserved column).
        levels: Its levels, in declared order (the first is the reference).
    """

    name: str
    column: str
    levels: tuple[str, ...]


def declared_factors(context: ReportContext, rows: pd.DataFrame | None = None) -> list[Factor]:
    """The factors the sets' designs declare, in declared order (first set first).

    Args:
        context: The report context (its stimulus sets).
        rows: Trial rows whose columns the factors are looked up in (default: the context's
            human rows, else its model rows); a factor without a column is left out.
    """
    frames = [rows] if rows is not None else [context.human, context.models]
    columns: set[str] = set()
    for frame in frames:
        if frame is not None:
            columns |= set(frame.columns)
    found: dict[str, Factor] = {}
    for stimulus_set in context.stimulus_sets:
        config = stimulus_set.manifest.config
        design = (config.get("design") or {}).get("factors") or {}
        for name in config.get("factors", ()):
            column = next((c for c in (name, f"condition_{name}") if c in columns), None)
            if name in found or column is None:
                continue
            levels = tuple(str(level) for level in (design.get(name) or {}).get("levels", ()))
            found[name] = Factor(name, column, levels)
    return list(found.values())


def item_labels(context: ReportContext) -> dict[str, str]:
    """Each item id's label in the table (the rows of one item share it)."""
    labels = {}
    for stimulus_set in context.stimulus_sets:
        for item in stimulus_set:
            label = (item.truth or {}).get("item") if isinstance(item.truth, dict) else None
            labels[item.item_id] = str(label if label is not None else item.item_id)
    return labels


def analysed_people(context: ReportContext) -> tuple[pd.DataFrame | None, list[str]]:
    """The people's test trials after the session exclusions, and the rules as sentences.

    The session rules (completed, attentive, no AI help) apply; no accuracy threshold does
    (the paper's 50% rule is the narrative study's, not a rule for any design); timed-out
    trials count as incorrect.
    """
    from tracktale.analysis.data.exclusions import ExclusionRules, apply_exclusions

    human = context.human
    if human is None or human.empty:
        return None, []
    tasks = tuple(task for task in HUMAN_TASKS if task in set(human["task"]))
    if not tasks:
        return None, []
    rules = ExclusionRules(min_accuracy=0.0)
    result = apply_exclusions(human, context.participants, rules, tasks)
    described = [line for line in rules.describe() if not line.startswith("accuracy below")]
    kept = result.trials
    kept = kept[kept["role"] == "main"] if "role" in kept.columns else kept
    kept = kept.dropna(subset=["correct"])
    return (kept if not kept.empty else None), [*described, *result.notes]


def judged_model_rows(context: ReportContext) -> pd.DataFrame | None:
    """The models' judged rows (implicit and explicit) on the test items."""
    from tracktale.models.tasks import judged_tasks

    models = context.models
    if models is None or models.empty:
        return None
    rows = models[(models["role"] == "main") & models["task"].isin(judged_tasks())]
    rows = rows.dropna(subset=["correct"])
    return rows if not rows.empty else None


def ordered(values: Any, factor: Factor) -> Any:
    """``values`` as strings, ordered by the factor's declared levels (others after them)."""
    import pandas as pd

    strings = values.astype(str)
    extra = sorted(set(strings) - set(factor.levels))
    return pd.Categorical(strings, categories=[*factor.levels, *extra], ordered=True)
