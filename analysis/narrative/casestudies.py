"""Models as case studies: scaling, instruction tuning, templates, checkpoints, human placement.

Every function takes the model rows of the tidy trial table (``agent_kind == "model"``) and
returns a table with Wilson 95% intervals. ``value`` chooses the correctness column:
``correct`` (the raw comparison) or ``correct_calibrated`` where the scoring stage computed it.
Final models are rows whose revision names no training step; checkpoint rows (``step1000``,
``stage1-step140000-tokens294B``) only enter the trajectories.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

from tracktale.analysis.stats.proportions import accuracy_table
from tracktale.errors import TracktaleError
from tracktale.models.tasks import judged_tasks

if TYPE_CHECKING:
    import pandas as pd

MODEL_COLUMNS = ("agent", "label", "family", "size_label", "n_parameters", "instruct", "reference")
"""Per-model descriptive columns carried into every table."""


def _check_value(models: pd.DataFrame, value: str) -> None:
    if value not in models.columns:
        raise TracktaleError(f"the model results have no column {value!r}")


def final_models(models: pd.DataFrame) -> pd.DataFrame:
    """Rows of final models (no training step in the revision) on the judged tasks."""
    rows = models[models["task"].isin(judged_tasks())]
    return rows[rows["step"].isna()]


def _describe(table: pd.DataFrame, models: pd.DataFrame) -> pd.DataFrame:
    described = models[list(MODEL_COLUMNS)].drop_duplicates("agent")
    return table.merge(described, on="agent", how="left")


def model_accuracy(
    models: pd.DataFrame, by: Sequence[str] = ("task", "complexity"), value: str = "correct"
) -> pd.DataFrame:
    """Accuracy of every final model by ``by`` (plus overall rows with ``by`` set to "all").

    Args:
        models: Model rows of the tidy table.
        by: Condition columns (e.g. ``task``, ``complexity``, ``template``, ``cell``).
        value: ``correct`` or ``correct_calibrated``.

    Returns:
        One row per model and group, with the model's description.
    """
    _check_value(models, value)
    table = accuracy_table(final_models(models), ["agent", *by], value=value)
    return _describe(table, models).sort_values(["family", "n_parameters", "agent", *by])


def scaling_table(
    models: pd.DataFrame, task: str = "implicit", template: str = "standard", value: str = "correct"
) -> pd.DataFrame:
    """Overall accuracy against parameter count, per family (Figure 4's summary).

    Returns:
        One row per final model: family, label, n_parameters, instruct, n, accuracy, interval
        and the complexity cost (accuracy at the lowest minus the highest complexity).
    """
    _check_value(models, value)
    rows = final_models(models)
    rows = rows[(rows["task"] == task) & (rows["template"] == template)]
    if rows.empty:
        raise TracktaleError(f"no final-model results for task={task}, template={template}")
    overall = _describe(accuracy_table(rows, ["agent"], value=value), models)
    by_level = accuracy_table(rows, ["agent", "complexity"], value=value)
    low, high = rows["complexity"].min(), rows["complexity"].max()
    ends = by_level.pivot(index="agent", columns="complexity", values="accuracy")
    overall["complexity_cost"] = overall["agent"].map(ends[low] - ends[high])
    overall.insert(1, "task", task)
    return overall.sort_values(["family", "instruct", "n_parameters"]).reset_index(drop=True)


def instruction_table(
    models: pd.DataFrame, value: str = "correct", template: str | None = "standard"
) -> pd.DataFrame:
    """Base vs instruction-tuned pairs of one family and size, per task (Figure 5's summary).

    Computed on the standard template by default, like Figure 7 (the paper's Figure 5A and
    Appendix A both show 55.3% to 93.5%, its 550 trials per task); ``template=None`` pools the
    templates present.

    Returns:
        One row per (family, size, task) with both accuracies and ``gain_pp`` (instruct minus
        base, percentage points); empty when no pair is present.
    """
    import pandas as pd

    _check_value(models, value)
    if template is not None:
        models = models[models["template"] == template]
    table = model_accuracy(models, ("task",), value)
    table = table[table["family"] != "other"]
    base = table[~table["instruct"].astype(bool)]
    tuned = table[table["instruct"].astype(bool)]
    keys = ["family", "size_label", "task"]
    pairs = base.merge(tuned, on=keys, suffixes=("_base", "_instruct"))
    if pairs.empty:
        return pd.DataFrame(columns=[*keys, "accuracy_base", "accuracy_instruct", "gain_pp"])
    pairs["gain_pp"] = 100 * (pairs["accuracy_instruct"] - pairs["accuracy_base"])
    columns = [
        *keys,
        "n_parameters_base",
        "accuracy_base",
        "ci_low_base",
        "ci_high_base",
        "accuracy_instruct",
        "ci_low_instruct",
        "ci_high_instruct",
        "gain_pp",
    ]
    return pairs[columns].sort_values(["family", "n_parameters_base", "task"])


def template_table(models: pd.DataFrame, value: str = "correct") -> pd.DataFrame:
    """Accuracy per model, task and template, with the difference from ``standard`` in points."""
    _check_value(models, value)
    table = model_accuracy(models, ("task", "template"), value)
    standard = table[table["template"] == "standard"].set_index(["agent", "task"])["accuracy"]
    keys = list(zip(table["agent"], table["task"], strict=True))
    table["diff_from_standard_pp"] = [
        100 * (acc - standard.get(key, math.nan))
        for key, acc in zip(keys, table["accuracy"], strict=True)
    ]
    return table


def checkpoint_table(
    models: pd.DataFrame, task: str = "implicit", value: str = "correct"
) -> pd.DataFrame:
    """Accuracy against training step for every model with checkpoint revisions.

    Returns:
        One row per (model, revision with a step): step, tokens, n, accuracy, interval.
    """
    import pandas as pd

    _check_value(models, value)
    rows = models[(models["task"] == task) & models["step"].notna()]
    if rows.empty:
        return pd.DataFrame(columns=["agent", "revision", "step", "tokens", "accuracy"])
    table = accuracy_table(rows, ["agent", "revision", "step", "tokens"], value=value)
    return _describe(table, models).sort_values(["agent", "step"]).reset_index(drop=True)


def participant_accuracy(human: pd.DataFrame, rule: str | None = None) -> pd.DataFrame:
    """Each analysed participant's accuracy per task (under ``rule``; ``None``: the study's)."""
    from tracktale.analysis.narrative.answers import correct_under

    if rule is not None:
        human = human.assign(correct=correct_under(human, rule))
    grouped = human.groupby(["agent", "task"])["correct"]
    return grouped.agg(accuracy="mean", n="size").reset_index()


def human_distribution(
    human: pd.DataFrame, models: pd.DataFrame, value: str = "correct"
) -> pd.DataFrame:
    """Where each final model falls among participants, under matched conditions.

    Models are scored on the human design's cells only (standard template), and their cell
    accuracies are weighted by how often each cell occurs in the human trials of that task, so a
    model's accuracy is what it would score on the participants' trial list. People and models
    are scored under one rule (:data:`~tracktale.analysis.narrative.answers.SIDE_BY_SIDE_RULE`).

    Returns:
        One row per model and task: ``model_accuracy`` (matched), the human median, quartiles,
        and ``percentile`` (share of participants below the model, ties counted half).
    """
    import pandas as pd

    from tracktale.analysis.narrative.answers import SIDE_BY_SIDE_RULE, correct_under

    _check_value(models, value)
    people = participant_accuracy(human, SIDE_BY_SIDE_RULE)
    rows = final_models(models)
    rows = rows[rows["template"] == "standard"]
    rows = rows.assign(correct_rule=correct_under(rows, SIDE_BY_SIDE_RULE, value))
    out = []
    for task, trials in human.groupby("task"):
        weights = trials["cell"].value_counts(normalize=True)
        scores = people.loc[people["task"] == task, "accuracy"].to_numpy()
        task_rows = rows[(rows["task"] == task) & rows["cell"].isin(weights.index)]
        cells = task_rows.groupby(["agent", "cell"])["correct_rule"].mean().unstack("cell")
        for agent, accuracies in cells.iterrows():
            present = accuracies.dropna().index
            if len(present) < len(weights):
                continue  # the model lacks a human cell: no matched comparison
            matched = float((accuracies[weights.index] * weights).sum())
            below = (scores < matched).sum() + 0.5 * (scores == matched).sum()
            out.append(
                {
                    "agent": agent,
                    "task": task,
                    "model_accuracy": matched,
                    "human_median": float(pd.Series(scores).median()),
                    "human_q1": float(pd.Series(scores).quantile(0.25)),
                    "human_q3": float(pd.Series(scores).quantile(0.75)),
                    "participants": len(scores),
                    "percentile": 100 * below / len(scores) if len(scores) else math.nan,
                }
            )
    table = pd.DataFrame(
        out,
        columns=[
            "agent",
            "task",
            "model_accuracy",
            "human_median",
            "human_q1",
            "human_q3",
            "participants",
            "percentile",
        ],
    )
    return _describe(table, models) if not table.empty else table
