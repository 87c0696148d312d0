"""Figures of the boxes analysis: probing curves (Figure 2) and transitions (Figure 4).

Figures are drawn on :class:`matplotlib.figure.Figure` objects (no pyplot, no global backend)
in the report's house style (:mod:`tracktale.analysis.report.style`) and written as PNG, PDF
and SVG without creation dates, so equal data gives equal files. Legends sit outside the panels,
never over the curves.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from tracktale.analysis.boxes.scores import MODEL_KEYS, ROW_FACTORS
from tracktale.analysis.boxes.transitions import (
    CORRECT_OUTCOMES,
    NAMES,
    WRONG_OUTCOMES,
)
from tracktale.analysis.report.style import OKABE_ITO, SavedFigure, save_figure, styled

if TYPE_CHECKING:
    from matplotlib.figure import Figure


def slug(*parts: object) -> str:
    """A file-name-safe name from ``parts``."""
    text = "_".join(str(part) for part in parts if str(part))
    return re.sub(r"[^A-Za-z0-9._+-]+", "-", text).strip("-")


def model_label(model_id: str, revision: str) -> str:
    """``Pythia 160M@step1000``: the model's readable label (the catalog's), with its revision."""
    from tracktale.analysis.data.catalog import describe_model

    label = describe_model(model_id).label
    return f"{label}@{revision}" if revision else label


def _title(figure: Figure, text: str, width_inches: float) -> None:
    """A figure title wrapped to the figure's width, so that no part of it is cut off."""
    import textwrap

    lines = [textwrap.fill(line, max(24, int(width_inches * 11))) for line in text.split("\n")]
    figure.suptitle("\n".join(lines), fontsize="medium")


def _step_axis(ax: Any) -> None:
    """Steps are whole numbers: ticks at integers only."""
    from matplotlib.ticker import MaxNLocator

    ax.xaxis.set_major_locator(MaxNLocator(integer=True))


def _describe(values: dict) -> str:
    parts = [f"{values['shots']}-shot", str(values["language"]), str(values["instruction"])]
    if values["distractors"] == "on":
        parts.append("distractors")
    if values["prompt_format"] != "single-turn":
        parts.append(str(values["prompt_format"]))
    if values["initialization"] == "compressed":
        parts.append(f"compressed initialization (k={values['compressed_steps']})")
    return ", ".join(parts)


def _condition_label(row: pd.Series, factors: Sequence[str]) -> str:
    return ", ".join(str(row[name]) for name in factors)


def plot_probing(table: pd.DataFrame, out_dir: Path) -> list[SavedFigure]:
    """Step-EM and State-EM per probed step, one figure per model revision (Figure 2's curves).

    Columns are shot counts; a line per condition, with its bootstrap interval as a band; the
    dotted vertical line marks where the demonstrations end.
    """
    saved: list[SavedFigure] = []
    factors = [name for name in ROW_FACTORS if name in table]
    for (model_id, revision), per_model in table.groupby(list(MODEL_KEYS), sort=True):
        shots = sorted(per_model["shots"].unique())
        label = model_label(model_id, revision)
        with styled():
            figure = _probing_figure(per_model, shots, factors)
            _title(figure, f"Intermediate state probing: {label}", 4.2 * len(shots))
            title = (
                f"Intermediate state probing (as the paper's Figure 2), {label}: Step-EM and "
                "State-EM at every probed step, per shot count and condition, with 95% "
                "bootstrap bands; the dotted line marks the end of the demonstrations"
            )
            name = f"boxes_probing_{slug(model_id, revision)}"
            saved.append(save_figure(figure, out_dir, name, title))
    return saved


def _probing_figure(per_model: pd.DataFrame, shots: list, factors: list[str]) -> Figure:
    from matplotlib.figure import Figure

    figure = Figure(figsize=(4.2 * len(shots), 6.4), layout="constrained")
    axes = figure.subplots(2, len(shots), squeeze=False, sharey=True)
    for column, shot in enumerate(shots):
        per_shot = per_model[per_model["shots"] == shot]
        lines = per_shot.groupby(
            per_shot.apply(_condition_label, axis=1, factors=factors), sort=False
        )
        for row, metric in enumerate(("step_em", "state_em")):
            ax = axes[row][column]
            for index, (label, line) in enumerate(lines):
                line = line.sort_values("world_step")
                colour = OKABE_ITO[index % len(OKABE_ITO)]
                ax.plot(line["world_step"], line[metric], marker="o", label=label, color=colour)
                low, high = line[f"{metric}_low"], line[f"{metric}_high"]
                ax.fill_between(line["world_step"], low, high, alpha=0.15, color=colour)
            ax.axvline(shot - 0.5, color="0.4", linestyle=":", linewidth=1)
            ax.set_ylim(-0.02, 1.02)
            ax.set_title(f"{shot}-shot: {'Step-EM' if metric == 'step_em' else 'State-EM'}")
            ax.set_xlabel("step")
            _step_axis(ax)
    handles, labels = axes[0][0].get_legend_handles_labels()
    figure.legend(
        handles,
        labels,
        loc="outside lower center",
        ncols=min(3, max(1, len(labels))),
        title=", ".join(factors),
    )
    return figure


def plot_transitions(counts: pd.DataFrame, out_dir: Path) -> list[SavedFigure]:
    """Share of states in each transition category per step, one figure per model and condition.

    The left panel holds the transitions that end correct (CU, MC, HU-AC, VA), the right one
    those that end wrong (NFU, HU-IO, DR, DW) and the unparsed states; each panel's legend
    sits below it.
    """
    saved: list[SavedFigure] = []
    condition = [
        c for c in counts.columns if c not in ("step", "category", "count", "n_states", "share")
    ]
    for key, group in counts.groupby(condition, sort=True, dropna=False):
        values = dict(zip(condition, key, strict=True))
        label = model_label(values["model_id"], values["revision"])
        with styled():
            figure = _transitions_figure(group)
            _title(figure, f"Transitions between steps: {label}\n{_describe(values)}", 10)
            name = slug(
                f"{values['model_id']}@{values['revision']}"
                if values["revision"]
                else values["model_id"],
                values["shots"],
                values["language"],
                values["instruction"],
                values["distractors"],
                values["prompt_format"],
                values["initialization"],
            )
            title = (
                f"Transitions between steps (the categories of the paper's Figure 3, plotted as "
                f"in its Figure 4), {label}, {_describe(values)}: share of states per category "
                "and step, those that end correct and those that end wrong"
            )
            saved.append(save_figure(figure, out_dir, f"boxes_transitions_{name}", title))
    return saved


def _transitions_figure(group: pd.DataFrame) -> Figure:
    from matplotlib.figure import Figure

    figure = Figure(figsize=(10, 4.6), layout="constrained")
    axes = figure.subplots(1, 2, sharey=True)
    panels = (CORRECT_OUTCOMES, (*WRONG_OUTCOMES, "NP", "NP-prev"))
    for ax, categories, title in zip(axes, panels, ("ends correct", "ends wrong"), strict=True):
        for index, category in enumerate(categories):
            line = group[group["category"] == category].sort_values("step")
            ax.plot(
                line["step"],
                line["share"],
                ":" if category.startswith("NP") else "-",
                marker="o",
                # One colour per category: each category is drawn in one panel only.
                color=OKABE_ITO[index % len(OKABE_ITO)],
                label=f"{category}: {NAMES[category]}",
            )
        ax.set_title(title)
        ax.set_xlabel("step")
        _step_axis(ax)
        ax.set_ylim(-0.02, 1.02)
        ax.legend(fontsize="x-small", loc="upper center", bbox_to_anchor=(0.5, -0.2), ncols=2)
    axes[0].set_ylabel("share of states")
    return figure
