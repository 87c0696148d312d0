"""The paper's Figures 3-7 and the case-study figures, drawn from the tidy trial table.

Each function takes the analysed human trials and/or the model rows, writes PNG, PDF and SVG
into ``folder`` and returns the :class:`~tracktale.analysis.report.style.SavedFigure`, or ``None``
when the data it needs is absent (e.g. no Pythia results), so a report shows what it can.
Error bars are 95% intervals: for people over participants and items in Figure 3 by default
(``--accuracy-interval``; a participant's trials are not independent and the items are a
sample), a BCa bootstrap over participants elsewhere, for models Wilson intervals over the items
(each scored once);
see :mod:`tracktale.analysis.stats.proportions`.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tracktale.analysis.narrative.answers import SIDE_BY_SIDE_RULE, correct_under
from tracktale.analysis.narrative.casestudies import final_models
from tracktale.analysis.report.style import (
    HUMAN_COLOUR,
    OKABE_ITO,
    TEMPLATE_COLOURS,
    SavedFigure,
    new_figure,
    percent_axes,
    save_figure,
    sequential_colours,
    styled,
)
from tracktale.analysis.stats.proportions import accuracy_table

if TYPE_CHECKING:
    import pandas as pd

TASKS = ("explicit", "implicit")


CHANCE_BY_TASK: dict[str, float | None] = {"explicit": None, "implicit": 0.5}
"""Chance accuracy per task: open recall has none; the two-way choice 50%."""


def _errorbar(ax: Any, table: pd.DataFrame, x: str, **style: Any) -> None:
    lower = (table["accuracy"] - table["ci_low"]).clip(lower=0)
    upper = (table["ci_high"] - table["accuracy"]).clip(lower=0)
    ax.errorbar(table[x], table["accuracy"], yerr=[lower, upper], marker="o", **style)


def _complexity_axis(ax: Any, levels: Sequence[float]) -> None:
    ax.set_xticks(list(levels), [f"C{int(level)}" for level in levels])
    ax.set_xlabel("Complexity")


def _models_by_complexity(
    ax: Any, rows: pd.DataFrame, order: Sequence[str], colours: Sequence[Any], value: str
) -> None:
    table = accuracy_table(rows, ["agent", "label", "complexity"], value=value)
    for agent, colour in zip(order, colours, strict=True):
        series = table[table["agent"] == agent]
        _errorbar(ax, series, "complexity", color=colour, label=series["label"].iloc[0])


def _model_ticks(ax: Any, x: Any, labels: Sequence[str]) -> None:
    """Model names under bars: level and wrapped when few, slanted only when many."""
    import textwrap

    if len(labels) <= 3:
        ax.set_xticks(x, [textwrap.fill(label, 16) for label in labels])
    else:
        ax.set_xticks(x, list(labels), rotation=60, ha="right")


def _line_styles(n: int) -> list[dict[str, Any]]:
    """Distinct colour and dash pairs for ``n`` unordered series (colours repeat after eight)."""
    dashes = ("-", "--", ":", "-.")
    return [
        {"color": OKABE_ITO[i % len(OKABE_ITO)], "linestyle": dashes[i // len(OKABE_ITO) % 4]}
        for i in range(n)
    ]


def _by_size(rows: pd.DataFrame) -> list[str]:
    sizes = rows.drop_duplicates("agent").sort_values("n_parameters")
    return list(sizes["agent"])


def humans_vs_reference(
    human: pd.DataFrame | None,
    models: pd.DataFrame | None,
    folder: Path,
    value: str = "correct",
    cluster: str | None = "agent",
    item: str | None = None,
) -> SavedFigure | None:
    """Figure 3: human accuracy by complexity against the reference models, per task.

    ``cluster`` names the participant column the human intervals resample (``None``: Wilson
    over the pooled trials); with ``item`` too, they are over participants and items
    (:func:`~tracktale.analysis.stats.proportions.two_way_accuracy_interval`).
    """
    reference = None
    if models is not None and not models.empty:
        rows = final_models(models)
        reference = rows[rows["reference"].astype(bool) & (rows["template"] == "standard")]
        # People and models under one rule for typed answers (the caption names it).
        reference = reference.assign(
            correct_rule=correct_under(reference, SIDE_BY_SIDE_RULE, value)
        )
    if (human is None or human.empty) and (reference is None or reference.empty):
        return None
    if human is not None and not human.empty:
        human = human.assign(correct=correct_under(human, SIDE_BY_SIDE_RULE))
    with styled():
        figure = new_figure(2)
        for ax, task in zip(figure.axes, TASKS, strict=True):
            if human is not None and not human.empty:
                rows = human[human["task"] == task]
                table = accuracy_table(rows, ["complexity"], cluster=cluster, item=item)
                _errorbar(ax, table, "complexity", color=HUMAN_COLOUR, label="Humans")
            if reference is not None and not reference.empty:
                task_rows = reference[reference["task"] == task]
                order = _by_size(task_rows)
                colours = OKABE_ITO[1 : 1 + len(order)]
                _models_by_complexity(ax, task_rows, order, colours, "correct_rule")
            levels: set[float] = set()
            for rows in (human, reference):
                if rows is not None:
                    levels |= set(rows["complexity"].dropna())
            _complexity_axis(ax, sorted(levels))
            ax.set_title(f"{'AB'[TASKS.index(task)]}  {task.capitalize()} task", loc="left")
        percent_axes(figure, chance=[None, 0.5])
        figure.axes[-1].legend(loc="lower left")
        return save_figure(
            figure,
            folder,
            "fig3_humans_vs_reference",
            _fig3_caption(human, reference, cluster, item),
        )


def _fig3_caption(
    human: pd.DataFrame | None,
    reference: pd.DataFrame | None,
    cluster: str | None,
    item: str | None = None,
) -> str:
    parts = [
        f"Humans and reference models by complexity, typed answers scored under the "
        f"{SIDE_BY_SIDE_RULE} rule for both (the target container and no other)."
    ]
    if human is not None and not human.empty:
        people = (
            "two-way clustered over participants and items"
            if cluster and item
            else "a bootstrap over participants"
            if cluster
            else "Wilson over the pooled trials"
        )
        parts.append(f"Error bars: 95% intervals, for the people {people}")
    if reference is not None and not reference.empty:
        counts = reference.groupby(["agent", "task", "complexity"]).size()
        n = f"{counts.min()}" if counts.min() == counts.max() else f"{counts.min()}-{counts.max()}"
        lead = "; for" if len(parts) > 1 else "Error bars: 95% intervals, for"
        parts.append(
            f"{lead} each model Wilson over its {n} items per point. The model lines use the "
            "standard template (the one people saw)"
        )
    parts[-1] += "."
    parts.append(
        "The dashed grey line at 50% in panel B is chance in the implicit task (two "
        "continuations); panel A (open recall) has no chance level."
    )
    return " ".join(parts)


def family_scaling(
    models: pd.DataFrame, folder: Path, task: str = "implicit", value: str = "correct"
) -> SavedFigure | None:
    """Figure 4: base-model accuracy by complexity, one line per size; a panel per family."""
    rows = final_models(models)
    rows = rows[
        (rows["task"] == task)
        & (rows["template"] == "standard")
        & ~rows["instruct"].astype(bool)
        & rows["family"].isin(("Pythia", "OLMo 2"))
    ]
    families = [f for f in ("Pythia", "OLMo 2") if f in set(rows["family"])]
    if not families:
        return None
    with styled():
        figure = new_figure(len(families))
        for index, (ax, family) in enumerate(zip(figure.axes, families, strict=True)):
            family_rows = rows[rows["family"] == family]
            order = _by_size(family_rows)
            _models_by_complexity(ax, family_rows, order, sequential_colours(len(order)), value)
            _complexity_axis(ax, sorted(family_rows["complexity"].unique()))
            ax.set_title(f"{'AB'[index]}  {family} (base), {task}", loc="left")
            ax.legend(loc="lower left", ncol=2)
        percent_axes(figure, chance=CHANCE_BY_TASK[task])
        return save_figure(figure, folder, "fig4_scaling", f"Scaling: {task} accuracy by size")


def scaling_log_axis(
    scaling: pd.DataFrame, folder: Path, name: str = "scaling_log_axis"
) -> SavedFigure | None:
    """Overall accuracy against parameter count on a log axis, one line per family/variant."""
    rows = scaling.dropna(subset=["n_parameters"])
    if rows["agent"].nunique() < 2:
        return None  # one point on a size axis compares nothing
    with styled():
        figure = new_figure(1, width=4.2)
        ax = figure.axes[0]
        groups = rows.groupby(["family", "instruct"], sort=True)
        for colour, ((family, instruct), group) in zip(OKABE_ITO, groups, strict=False):
            group = group.sort_values("n_parameters")
            label = f"{family}{' Instruct' if instruct else ''}"
            _errorbar(ax, group, "n_parameters", color=colour, label=label)
        ax.set_xscale("log")
        ax.set_xlabel("Parameters (log scale)")
        percent_axes(figure, chance=CHANCE_BY_TASK.get(str(rows["task"].iloc[0])))
        ax.set_title(f"{rows['task'].iloc[0].capitalize()} accuracy by model size", loc="left")
        ax.legend(loc="lower right")
        caption = (
            "Accuracy against parameter count (log axis), standard template; error bars: 95% "
            "Wilson intervals over each model's items"
        )
        return save_figure(figure, folder, name, caption)


def instruction_tuning(instruction: pd.DataFrame, folder: Path) -> SavedFigure | None:
    """Figure 5: OLMo 2 base vs instruct accuracy per size, explicit and implicit panels."""
    import numpy as np

    rows = instruction[instruction["family"] == "OLMo 2"]
    if rows.empty:
        return None
    with styled():
        figure = new_figure(2)
        for index, (ax, task) in enumerate(zip(figure.axes, TASKS, strict=True)):
            task_rows = rows[rows["task"] == task].sort_values("n_parameters_base")
            x = np.arange(len(task_rows))
            for offset, variant, colour in (
                (-0.2, "base", OKABE_ITO[0]),
                (0.2, "instruct", OKABE_ITO[1]),
            ):
                acc = task_rows[f"accuracy_{variant}"]
                err = [
                    (acc - task_rows[f"ci_low_{variant}"]).clip(lower=0),
                    (task_rows[f"ci_high_{variant}"] - acc).clip(lower=0),
                ]
                ax.bar(
                    x + offset, acc, width=0.4, yerr=err, color=colour, label=variant.capitalize()
                )
            ax.set_xticks(x, list(task_rows["size_label"]))
            ax.set_xlabel("OLMo 2 size")
            ax.set_title(f"{'AB'[index]}  {task.capitalize()} task", loc="left")
        percent_axes(figure, chance=[CHANCE_BY_TASK[task] for task in TASKS])
        figure.axes[0].legend(loc="upper left")
        return save_figure(figure, folder, "fig5_instruction_tuning", "OLMo 2 base vs instruct")


def template_robustness(
    templates: pd.DataFrame, folder: Path, examples: dict[str, list[str]] | None = None
) -> SavedFigure | None:
    """Figure 6: (A) example objects per template, (B) explicit and (C) implicit accuracy.

    Args:
        templates: :func:`~tracktale.analysis.narrative.casestudies.template_table`.
        folder: Where the figure goes.
        examples: Template -> object words to show in panel A (the stimulus sets' own).
    """
    import numpy as np

    if templates.empty or templates["template"].nunique() < 2:
        return None
    order = list(
        templates.drop_duplicates("agent").sort_values(["family", "n_parameters"])["agent"]
    )
    labels = templates.drop_duplicates("agent").set_index("agent")["label"]
    names = [t for t in TEMPLATE_COLOURS if t in set(templates["template"])]
    names += sorted(set(templates["template"]) - set(names))
    width = 0.8 / len(names)
    with styled():
        bars = max(3.3, 0.45 * len(order) + 0.75)  # width of each accuracy panel
        figure = new_figure(
            3, width=2 * bars + 1.6, height=3.6, sharey=False, width_ratios=[1.6, bars, bars]
        )
        _template_examples(figure.axes[0], names, examples or {})
        figure.axes[2].sharey(figure.axes[1])
        for index, (ax, task) in enumerate(zip(figure.axes[1:], TASKS, strict=True)):
            task_rows = templates[templates["task"] == task]
            x = np.arange(len(order))
            for position, template in enumerate(names):
                cell = (
                    task_rows[task_rows["template"] == template].set_index("agent").reindex(order)
                )
                colour = TEMPLATE_COLOURS.get(template, OKABE_ITO[4 + position % 3])
                err = [
                    (cell["accuracy"] - cell["ci_low"]).clip(lower=0).fillna(0),
                    (cell["ci_high"] - cell["accuracy"]).clip(lower=0).fillna(0),
                ]
                offset = (position - (len(names) - 1) / 2) * width
                ax.bar(x + offset, cell["accuracy"], width, yerr=err, color=colour, label=template)
            _model_ticks(ax, x, [labels[a] for a in order])
            ax.set_title(f"{'BC'[index]}  {task.capitalize()} task", loc="left")
        # Chance only where there is one: the implicit panel (C); B is open recall.
        percent_axes(figure, chance=[None, None, CHANCE_BY_TASK["implicit"]])
        figure.axes[0].set_ylabel("")
        figure.axes[1].set_ylabel("Accuracy (%)")

        caption = (
            "Accuracy by object template (paper's contains rule for the explicit task); error "
            "bars: 95% Wilson intervals over each model's items; the dashed grey line in panel "
            "C is chance in the implicit task (50%)"
        )
        return save_figure(figure, folder, "fig6_templates", caption)


def _template_examples(ax: Any, names: Sequence[str], examples: dict[str, list[str]]) -> None:
    """Panel A of Figure 6: a few object words of every template; its swatch is the legend."""
    ax.set_axis_off()
    ax.set_title("A  Object types", loc="left")
    for row, template in enumerate(names):
        y = 0.9 - row * 0.3
        colour = TEMPLATE_COLOURS.get(template, OKABE_ITO[4 + row % 3])
        ax.text(
            0.0, y, f"\u25a0 {template}", color=colour, fontweight="bold", transform=ax.transAxes
        )
        words = ", ".join(examples.get(template, [])[:4]) or "(no items)"
        ax.text(0.0, y - 0.1, words, transform=ax.transAxes, fontsize=8)


def olmo_instruct_explicit(
    models: pd.DataFrame, folder: Path, value: str = "correct", template: str | None = "standard"
) -> SavedFigure | None:
    """Figure 7: OLMo 2 Instruct explicit accuracy by complexity, one line per size.

    On the same data as Figure 5 (standard template by default; ``None`` pools templates).
    """
    rows = final_models(models)
    rows = rows[
        (rows["task"] == "explicit")
        & ((rows["template"] == template) if template is not None else True)
        & rows["instruct"].astype(bool)
        & (rows["family"] == "OLMo 2")
    ]
    if rows.empty:
        return None
    with styled():
        figure = new_figure(1, width=4.2)
        ax = figure.axes[0]
        order = _by_size(rows)
        _models_by_complexity(ax, rows, order, sequential_colours(len(order)), value)
        _complexity_axis(ax, sorted(rows["complexity"].unique()))
        percent_axes(figure, chance=None)  # open recall: no chance level
        ax.set_title("OLMo 2 Instruct, explicit task", loc="left")
        ax.legend(loc="lower left")
        return save_figure(
            figure, folder, "fig7_olmo_instruct_explicit", "OLMo 2 Instruct, explicit"
        )


def checkpoint_trajectories(checkpoints: pd.DataFrame, folder: Path) -> SavedFigure | None:
    """Accuracy against training step, one line per model."""
    if checkpoints.empty:
        return None
    with styled():
        figure = new_figure(1, width=4.6)
        ax = figure.axes[0]
        groups = list(checkpoints.groupby("agent"))
        for style, (_, group) in zip(_line_styles(len(groups)), groups, strict=True):
            group = group.sort_values("step")
            _errorbar(ax, group, "step", label=group["label"].iloc[0], **style)
        if (checkpoints["step"] > 0).all():
            ax.set_xscale("log")
        ax.set_xlabel("Training step")
        percent_axes(figure)
        ax.set_title("Accuracy across training checkpoints", loc="left")
        ax.legend(loc="lower right")
        return save_figure(figure, folder, "checkpoint_trajectories", "Checkpoint trajectories")


def human_distribution_figure(
    people: pd.DataFrame, placement: pd.DataFrame, folder: Path
) -> SavedFigure | None:
    """Participants' accuracy per task (histogram) with each model's matched accuracy."""
    import numpy as np

    if people.empty:
        return None
    bins = np.linspace(0, 1, 19).tolist()
    with styled():
        figure = new_figure(2, sharey=False)
        for index, (ax, task) in enumerate(zip(figure.axes, TASKS, strict=True)):
            scores = people.loc[people["task"] == task, "accuracy"]
            ax.hist(scores, bins=bins, color="0.75", edgecolor="white", label="Participants")
            models = placement[placement["task"] == task] if not placement.empty else placement
            if not models.empty:
                models = models.sort_values(["family", "n_parameters", "label"])
            for style, row in zip(_line_styles(len(models)), models.itertuples(), strict=True):
                ax.axvline(row.model_accuracy, linewidth=1.4, label=row.label, **style)
            ax.set_xlim(0, 1.02)
            ax.set_xlabel(f"{task.capitalize()} accuracy")
            ax.set_title(f"{'AB'[index]}  {task.capitalize()} task", loc="left")
        figure.axes[0].set_ylabel("Participants")
        figure.axes[-1].legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), fontsize=6.5)
        caption = (
            "Models within the human accuracy distribution. Each model's accuracy here is on the "
            "participants' own cells only (standard template, each cell weighted as often as "
            "it occurs in their trials), so it differs from its accuracy over all cells and "
            "templates elsewhere in the report. People and models are both scored under the "
            f"{SIDE_BY_SIDE_RULE} rule."
        )
        return save_figure(figure, folder, "human_distribution", caption)


def manipulation_check(ratios: pd.DataFrame, folder: Path) -> SavedFigure | None:
    """Log10 likelihood ratio of each template against standard, per model."""
    import numpy as np

    rows = ratios[ratios["template"] != "standard"] if not ratios.empty else ratios
    if rows.empty:
        return None
    order = list(dict.fromkeys(rows["agent"]))
    labels = rows.drop_duplicates("agent").set_index("agent")["label"]
    with styled():
        figure = new_figure(1, width=max(4.2, 0.45 * len(order) + 1.5), height=3.6)
        ax = figure.axes[0]
        x = np.arange(len(order))
        templates = list(dict.fromkeys(rows["template"]))
        for position, template in enumerate(templates):
            cell = rows[rows["template"] == template].set_index("agent").reindex(order)
            err = [cell["log10_ratio"] - cell["ci_low"], cell["ci_high"] - cell["log10_ratio"]]
            colour = TEMPLATE_COLOURS.get(template, OKABE_ITO[4])
            ax.errorbar(
                # Templates side by side around each model, centred, whatever their number.
                x + 0.15 * (position - (len(templates) - 1) / 2),
                cell["log10_ratio"],
                yerr=err,
                fmt="o",
                color=colour,
                label=template,
            )
        ax.axhline(0, color="0.5", linewidth=0.8)
        ax.set_xlim(-0.6, len(order) - 0.4)  # one model: its points near the middle, not the edges
        _model_ticks(ax, x, [labels[a] for a in order])
        ax.set_ylabel("log10 likelihood ratio vs standard")
        ax.set_title("Manipulation check: sequence log-probability", loc="left")
        ax.legend(loc="lower left")
        caption = (
            "Template manipulation check: log10 likelihood ratio of each template's stories "
            "against the standard ones; error bars: 95% intervals (paired over items)"
        )
        return save_figure(figure, folder, "manipulation_check", caption)
