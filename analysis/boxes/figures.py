"""Figures of the boxes analysis: probing curves (Figure 2) and transitions (Figure 4).

Figures are drawn on :class:`matplotlib.figure.Figure` objects (no pyplot, no global backend)
and written as PNG, PDF and SVG without creation dates, so equal data gives equal files.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from tracktale.analysis.boxes.scores import MODEL_KEYS, ROW_FACTORS
from tracktale.analysis.boxes.transitions import (
    CATEGORIES,
    CORRECT_OUTCOMES,
    NAMES,
    WRONG_OUTCOMES,
)
from tracktale.analysis.report.style import SavedFigure

if TYPE_CHECKING:
    from matplotlib.figure import Figure

FORMATS = ("png", "pdf", "svg")
_METADATA = {"png": {"Software": None}, "pdf": {"CreationDate": None}, "svg": {"Date": None}}


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


def save(figure: Figure, base: Path, title: str) -> SavedFigure:
    """Write ``figure`` as ``base.png``, ``base.pdf`` and ``base.svg``, captioned ``title``."""
    import matplotlib

    paths = {}
    with matplotlib.rc_context({"svg.hashsalt": "tracktale", "pdf.compression": 6}):
        for extension in FORMATS:
            path = base.with_suffix(f".{extension}")
            figure.savefig(path, dpi=150, metadata=_METADATA[extension])
            paths[extension] = path
    return SavedFigure(name=base.name, title=title, paths=paths)


_COLORS = dict(zip(CATEGORIES, [f"C{i}" for i in range(len(CATEGORIES))], strict=True))
"""One color per transition category, the same in every panel and figure."""


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
    from matplotlib.figure import Figure

    saved: list[SavedFigure] = []
    factors = [name for name in ROW_FACTORS if name in table]
    for (model_id, revision), per_model in table.groupby(list(MODEL_KEYS), sort=True):
        shots = sorted(per_model["shots"].unique())
        figure = Figure(figsize=(4.2 * len(shots), 6.4), layout="constrained")
        axes = figure.subplots(2, len(shots), squeeze=False, sharey=True)
        for column, shot in enumerate(shots):
            per_shot = per_model[per_model["shots"] == shot]
            for row, metric in enumerate(("step_em", "state_em")):
                ax = axes[row][column]
                for label, line in per_shot.groupby(
                    per_shot.apply(_condition_label, axis=1, factors=factors), sort=False
                ):
                    line = line.sort_values("world_step")
                    ax.plot(line["world_step"], line[metric], marker="o", label=label)
                    ax.fill_between(
                        line["world_step"],
                        line[f"{metric}_low"],
                        line[f"{metric}_high"],
                        alpha=0.15,
                    )
                ax.axvline(shot - 0.5, color="purple", linestyle=":", linewidth=1)
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
            fontsize="small",
            title=", ".join(factors),
            title_fontsize="small",
        )
        label = model_label(model_id, revision)
        _title(figure, f"Intermediate state probing: {label}", 4.2 * len(shots))
        title = (
            f"Intermediate state probing (as the paper's Figure 2), {label}: Step-EM and "
            "State-EM at every probed step, per shot count and condition, with 95% bootstrap "
            "bands; the dotted line marks the end of the demonstrations"
        )
        saved.append(save(figure, out_dir / f"boxes_probing_{slug(model_id, revision)}", title))
    return saved


def plot_transitions(counts: pd.DataFrame, out_dir: Path) -> list[SavedFigure]:
    """Share of states in each transition category per step, one figure per model and condition.

    The left panel holds the transitions that end correct (CU, MC, HU-AC, VA), the right one
    those that end wrong (NFU, HU-IO, DR, DW) and the unparsed states.
    """
    from matplotlib.figure import Figure

    saved: list[SavedFigure] = []
    condition = [
        c for c in counts.columns if c not in ("step", "category", "count", "n_states", "share")
    ]
    for key, group in counts.groupby(condition, sort=True, dropna=False):
        values = dict(zip(condition, key, strict=True))
        figure = Figure(figsize=(10, 4), layout="constrained")
        axes = figure.subplots(1, 2, sharey=True)
        panels = (CORRECT_OUTCOMES, (*WRONG_OUTCOMES, "NP", "NP-prev"))
        for ax, categories, title in zip(axes, panels, ("ends correct", "ends wrong"), strict=True):
            for category in categories:
                line = group[group["category"] == category].sort_values("step")
                ax.plot(
                    line["step"],
                    line["share"],
                    ":" if category.startswith("NP") else "-",
                    marker="o",
                    color=_COLORS[category],
                    label=f"{category}: {NAMES[category]}",
                )
            ax.set_title(title)
            ax.set_xlabel("step")
            _step_axis(ax)
            ax.set_ylim(-0.02, 1.02)
            ax.legend(fontsize="x-small", loc="upper center", bbox_to_anchor=(0.5, -0.18), ncols=2)
        axes[0].set_ylabel("share of states")
        label = model_label(values["model_id"], values["revision"])
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
            f"Transitions between steps (the categories of the paper's Figure 3, plotted as in "
            f"its Figure 4), {label}, {_describe(values)}: share of states per category and "
            "step, those that end correct and those that end wrong"
        )
        saved.append(save(figure, out_dir / f"boxes_transitions_{name}", title))
    return saved
