"""The arithmetic paper's figures (2-7, 10-17, 19), drawn from the tables of :mod:`.tables`.

Each function draws on :class:`matplotlib.figure.Figure` objects in the project's style
(:mod:`tracktale.analysis.report.style`) and writes PNG, PDF and SVG without creation dates,
returning the figure (its files and its caption; ``None`` when there is nothing to draw). Models
are labelled with the paper's abbreviations where they are its models. The paper describes Figures
3, 7 and 10-17 in words only; how they are drawn here is our reading (see the README), and
their captions say so: Figure 3 bars FAA beside CAA per model, Figure 7 shows the AP
distribution per model as box plots (quartiles, 5th-95th percentile whiskers, the mean),
Figures 10-15 the median magnitude of the expected output against the number of steps (solid:
correctly answered items, dashed: the others; as log10), Figures 16-17 heatmaps of FAA per
model and input range or look-back. No function imports pyplot.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tracktale.analysis.arithmetic.paper_models import short_label
from tracktale.analysis.arithmetic.tables import OPERATION_NAMES, OPERATION_ORDER, POOLED
from tracktale.analysis.report.style import OKABE_ITO, SavedFigure, save_figure, styled

if TYPE_CHECKING:
    import pandas as pd

FACTOR_TITLES = {
    "lookback": "look-back (mixed operations)",
    "input_range": "input range",
    "data_type": "data type ([1,10] and [10,100])",
    "operation": "operation (look-back 1)",
}
MODELS_PER_PAGE = 5
"""Models per page of Figures 13-15 (15 models on three pages, as in the paper)."""


def _figure(n_rows: int = 1, n_columns: int = 1, *, width: float = 5.5, height: float = 3.6):
    from matplotlib.figure import Figure

    figure = Figure(figsize=(width, height), layout="constrained")
    return figure, figure.subplots(n_rows, n_columns, squeeze=False)


def _style(index: int) -> dict[str, Any]:
    """Colour and line style of series ``index`` (colours repeat with another dash)."""
    return {
        "color": OKABE_ITO[index % len(OKABE_ITO)],
        "linestyle": ("-", "--", ":")[(index // len(OKABE_ITO)) % 3],
    }


IN_WORDS = "our drawing of a figure the paper describes in words"
"""Said in the captions of Figures 3, 7 and 10-17 (see the module docstring)."""


def _save(figure: Any, folder: Path, name: str, caption: str) -> SavedFigure:
    return save_figure(figure, folder, name, caption)


def _model_figure(labels: Sequence[str]) -> tuple[Any, Any]:
    """One panel with room on its right for a legend of ``labels`` (never over the lines)."""
    columns = 2 if len(labels) > 12 else 1
    longest = max((len(label) for label in labels), default=0)
    # About 0.06 inch a character at the legend's 6.5 points, and the marker beside it.
    legend = columns * (0.06 * longest + 0.5)
    figure, axes = _figure(width=4.4 + legend)
    return figure, axes[0][0]


def _model_legend(figure: Any, ax: Any, labels: Sequence[str]) -> None:
    """The legend of ``ax``'s series to the right of the panel."""
    handles, names = ax.get_legend_handles_labels()
    columns = 2 if len(labels) > 12 else 1
    figure.legend(handles, names, loc="outside right upper", fontsize=6.5, ncols=columns)


def _slanted_height(labels: Sequence[str]) -> float:
    """A panel's height with room for ``labels`` slanted at 45 degrees below it."""
    # About 0.065 inch a character at 9 points, times sin 45 degrees.
    return max(3.6, 2.6 + 0.046 * max((len(label) for label in labels), default=0))


def _wrapped(text: str, width_inches: float) -> str:
    """``text`` broken into lines that fit ``width_inches`` at the title's 10 points."""
    import textwrap

    return textwrap.fill(text, max(20, int(width_inches * 11)))


def _percent_axis(axes: Any, label: str = "FAA (%)") -> None:
    axes.set_ylim(-2, 102)
    axes.set_ylabel(label)


def _step_axis(ax: Any) -> None:
    """Steps are whole numbers: ticks at integers only."""
    from matplotlib.ticker import MaxNLocator

    ax.xaxis.set_major_locator(MaxNLocator(integer=True))


def _level_key(level: str) -> tuple[int, float, str]:
    """Operations in the paper's order, numbers by value, the rest as text."""
    if level in OPERATION_ORDER:
        return 0, OPERATION_ORDER.index(level), level
    try:
        return 1, float(level.split("-")[0]), level
    except ValueError:
        return 2, 0, level


def _level_label(factor: str, level: str) -> str:
    if factor == "input_range":
        return f"[{level.replace('-', ',')}]"
    if factor == "lookback":
        return f"look-back {level}"
    return OPERATION_NAMES.get(level, level) if factor == "operation" else level


def plot_faa_by_horizon(table: pd.DataFrame, folder: Path) -> SavedFigure:
    """Figure 2: FAA against the number of steps, one line per model with its 95% band."""
    labels = [short_label(model) for model in sorted(set(table["model"]))]
    with styled():
        figure, ax = _model_figure(labels)
        for index, (model, series) in enumerate(table.groupby("model", sort=True)):
            style = _style(index)
            ax.plot(series["horizon"], series["faa"], marker="o", label=short_label(model), **style)
            ax.fill_between(
                series["horizon"], series["ci_low"], series["ci_high"], alpha=0.12,
                color=style["color"],
            )  # fmt: skip
        ax.set_xlabel("steps")
        _step_axis(ax)
        _percent_axis(ax)
        ax.set_title("FAA by procedure length")
        _model_legend(figure, ax, labels)
        caption = (
            "The paper's Figure 2: first-answer accuracy (FAA) against the number of steps, "
            "per model, with 95% intervals"
        )
        return _save(figure, folder, "arithmetic_fig2_faa_by_horizon", caption)


def plot_faa_vs_caa(accuracy: pd.DataFrame, folder: Path) -> SavedFigure:
    """Figure 3: FAA and CAA side by side for each model (sorted by FAA)."""
    import numpy as np

    with styled():
        height = _slanted_height(list(accuracy["label"]))
        figure, axes = _figure(width=max(4.0, 0.55 * len(accuracy) + 2), height=height)
        ax = axes[0][0]
        x = np.arange(len(accuracy))
        ax.bar(x - 0.2, accuracy["faa"], 0.4, label="FAA", color=OKABE_ITO[0])
        ax.bar(x + 0.2, accuracy["caa"], 0.4, label="CAA", color=OKABE_ITO[1])
        ax.set_xticks(x, accuracy["label"], rotation=45, ha="right")
        _percent_axis(ax, "accuracy (%)")
        ax.set_title("First-answer accuracy and Correct@Any")
        ax.legend()
        caption = (
            "The paper's Figure 3: first-answer accuracy (FAA) beside Correct@Any (CAA) per "
            f"model, sorted by FAA ({IN_WORDS})"
        )
        return _save(figure, folder, "arithmetic_fig3_faa_vs_caa", caption)


def plot_factor_by_horizon(
    table: pd.DataFrame, factors: Sequence[str], folder: Path, name: str, title: str
) -> SavedFigure | None:
    """Figures 4-6, pooled over models: FAA against steps for each level of each factor.

    ``title`` (``Figure 4: input range``) opens the caption.
    """
    pooled = table[table["model"] == POOLED]
    present = [f for f in factors if (pooled["factor"] == f).any()]
    if not present:
        return None
    with styled():
        figure, axes = _figure(1, len(present), width=4.2 * len(present))
        for ax, factor in zip(axes[0], present, strict=True):
            _factor_lines(ax, pooled[pooled["factor"] == factor], factor)
            ax.set_title(FACTOR_TITLES[factor])
        by = " and ".join(FACTOR_TITLES[factor] for factor in present)
        number = title.split(":")[0]
        caption = f"The paper's {number}: FAA against steps per level of {by}, pooled over models"
        return _save(figure, folder, name, caption)


def plot_factor_per_model(
    table: pd.DataFrame, factor: str, folder: Path, name: str, title: str
) -> SavedFigure | None:
    """Per-model Figures 4-6: one panel per model, FAA against steps per level of ``factor``.

    ``title`` (``Figure 4, per model``) is drawn above the panels and opens the caption.
    """
    rows = table[(table["factor"] == factor) & (table["model"] != POOLED)]
    models = sorted(set(rows["model"]))
    if not models:
        return None
    columns = min(3, len(models))
    n_rows = math.ceil(len(models) / columns)
    with styled():
        figure, axes = _figure(n_rows, columns, width=3.6 * columns, height=2.8 * n_rows)
        for position, ax in enumerate(axes.flat):
            if position >= len(models):
                ax.set_visible(False)
                continue
            model = models[position]
            _factor_lines(ax, rows[rows["model"] == model], factor, legend=position == 0)
            ax.set_title(short_label(model), fontsize=9)
        figure.suptitle(f"{title}: {FACTOR_TITLES[factor]}", fontsize=10)
        caption = (
            f"{title}: FAA against steps per level of {FACTOR_TITLES[factor]}, one panel per model"
        )
        return _save(figure, folder, name, caption)


def _factor_lines(ax: Any, rows: pd.DataFrame, factor: str, *, legend: bool = True) -> None:
    for index, level in enumerate(sorted(set(rows["level"]), key=_level_key)):
        series = rows[rows["level"] == level].sort_values("horizon")
        ax.plot(
            series["horizon"], series["faa"], marker="o", label=_level_label(factor, level),
            **_style(index),
        )  # fmt: skip
    ax.set_xlabel("steps")
    _step_axis(ax)
    _percent_axis(ax)
    if legend and len(rows):
        ax.legend(fontsize=6.5)


def plot_answer_positions(rows: pd.DataFrame, folder: Path) -> SavedFigure:
    """Figure 7: the distribution of AP (position of the first answer, % of the output).

    Per model a box from the first to the third quartile with the median, whiskers from the
    5th to the 95th percentile and the mean (the paper's AP) as a dot; drawn from its parts
    because ``Axes.boxplot`` imports pyplot.
    """
    import numpy as np
    import pandas as pd

    models = sorted(set(rows["model"]))
    with styled():
        height = _slanted_height([short_label(m) for m in models])
        figure, axes = _figure(width=max(4.0, 0.55 * len(models) + 2), height=height)
        ax = axes[0][0]
        for x, model in enumerate(models):
            values = pd.to_numeric(
                rows.loc[rows["model"] == model, "answer_position"], errors="coerce"
            ).dropna()
            if values.empty:
                continue
            low, q1, median, q3, high = np.percentile(values, [5, 25, 50, 75, 95])
            ax.vlines(x, low, high, color="0.3", linewidth=1)
            ax.bar(x, q3 - q1, bottom=q1, width=0.5, color=OKABE_ITO[5], edgecolor="0.2")
            ax.hlines(median, x - 0.25, x + 0.25, color=OKABE_ITO[1], linewidth=2)
            ax.plot(x, values.mean(), "o", color="0.1", markersize=4)
        ax.set_xticks(
            range(len(models)), [short_label(m) for m in models], rotation=45, ha="right",
            rotation_mode="anchor",
        )  # fmt: skip
        ax.set_xlim(-0.6, len(models) - 0.4)
        ax.set_ylim(-2, 102)
        ax.set_ylabel("answer position (% of the output)")
        ax.set_title("Where the first answer appears (dot: mean AP)")
        caption = (
            "The paper's Figure 7: where the first answer appears (% of the output) per model: "
            "quartiles and median, whiskers from the 5th to the 95th percentile, the mean (AP) "
            f"as a dot ({IN_WORDS})"
        )
        return _save(figure, folder, "arithmetic_fig7_answer_position", caption)


def plot_magnitudes(
    table: pd.DataFrame, by: str, folder: Path, name: str, title: str, levels: Sequence = ()
) -> SavedFigure | None:
    """Figures 10-15: median |expected output| by steps, correct (solid) vs incorrect (dashed).

    Args:
        table: :func:`~.tables.magnitude_table` grouped by ``by``.
        by: The panel factor (``input_range``, ``data_type``, ``operation`` or ``model``).
        folder: Where to write.
        name: The file stem.
        title: Drawn above the panels; it opens the caption.
        levels: The panels to draw, in order (default: every level in the table).
    """
    import numpy as np

    levels = list(levels) or sorted(set(table[by].astype(str)), key=_level_key)
    if not levels:
        return None
    with styled():
        figure, axes = _figure(1, len(levels), width=3.3 * len(levels), height=3.0)
        for ax, level in zip(axes[0], levels, strict=True):
            panel = table[table[by].astype(str) == str(level)]
            for correct, dash in ((True, "-"), (False, "--")):
                series = panel[panel["correct"] == correct].sort_values("horizon")
                # log10 on a linear axis: magnitudes span 1e-40 to 1e190, and a log axis over
                # that range draws (and measures) hundreds of tick labels.
                with np.errstate(divide="ignore"):
                    height = np.log10(series["median_magnitude"].to_numpy(dtype=float))
                ax.plot(
                    series["horizon"], np.where(np.isfinite(height), height, np.nan), dash,
                    marker="o", color=OKABE_ITO[0 if correct else 1],
                    label="correct" if correct else "incorrect",
                )  # fmt: skip
            label = short_label(level) if by == "model" else _level_label(by, str(level))
            ax.set_title(_wrapped(label, 3.0), fontsize=9)
            ax.set_xlabel("steps")
            _step_axis(ax)
        axes[0][0].set_ylabel("log10 median |expected output|")
        axes[0][0].legend(fontsize=7)
        figure.suptitle(title, fontsize=10)
        number, _, panels = title.partition(": ")
        caption = (
            f"The paper's {number}: log10 of the median |expected output| against steps, "
            f"{panels}, correctly answered items solid, the others dashed ({IN_WORDS})"
        )
        return _save(figure, folder, name, caption)


def plot_heatmap(
    wide: pd.DataFrame, folder: Path, name: str, title: str, label: str
) -> SavedFigure | None:
    """Figures 16-17: FAA per model (rows) and level (columns), values written in the cells.

    ``title`` is drawn above the map and opens the caption.
    """
    levels = [c for c in wide.columns if c != "model"]
    if wide.empty or not levels:
        return None
    values = wide[levels].to_numpy(dtype=float)
    names = [short_label(m) for m in wide["model"]]
    # The model names beside the map (about 0.065 inch a character at 9 points), the cells and
    # the colour bar: a map of one level with long names would otherwise collapse.
    width = 1.2 + 0.065 * max(len(name) for name in names) + 0.9 * len(levels)
    with styled():
        figure, axes = _figure(width=width, height=1.0 + 0.35 * len(wide) + 0.6)
        ax = axes[0][0]
        image = ax.imshow(values, cmap="cividis", vmin=0, vmax=100, aspect="auto")
        ticks = [_level_label(label, str(level)).removeprefix("look-back ") for level in levels]
        ax.set_xticks(range(len(levels)), ticks)
        ax.set_yticks(range(len(wide)), names)
        ax.grid(False)
        for (row, column), value in _cells(values):
            colour = "white" if value < 50 else "black"
            ax.text(column, row, f"{value:.0f}", ha="center", va="center", color=colour, size=7)
        ax.set_xlabel(FACTOR_TITLES.get(label, label))
        figure.colorbar(image, ax=ax, label="FAA (%)")
        # The map may be narrower than its title: wrapped, never cut at the figure's edge.
        figure.suptitle(_wrapped(title, width), fontsize=10)
        caption = f"The paper's {title} (%, over all steps; {IN_WORDS})"
        return _save(figure, folder, name, caption)


def _cells(values: Any):
    for row in range(values.shape[0]):
        for column in range(values.shape[1]):
            if not math.isnan(values[row, column]):
                yield (row, column), values[row, column]


def plot_par_by_horizon(table: pd.DataFrame, folder: Path) -> SavedFigure:
    """Figure 19: the parseable-answer rate against the number of steps, per model."""
    labels = [short_label(model) for model in sorted(set(table["model"]))]
    with styled():
        figure, ax = _model_figure(labels)
        for index, (model, series) in enumerate(table.groupby("model", sort=True)):
            ax.plot(
                series["horizon"], series["par"], marker="o", label=short_label(model),
                **_style(index),
            )  # fmt: skip
        ax.set_xlabel("steps")
        _step_axis(ax)
        _percent_axis(ax, "PAR (%)")
        ax.set_title("Parseable answers by procedure length")
        _model_legend(figure, ax, labels)
        caption = (
            "The paper's Figure 19: the parseable-answer rate (PAR) against the number of "
            "steps, per model"
        )
        return _save(figure, folder, "arithmetic_fig19_par_by_horizon", caption)


def plot_people_vs_models(table: pd.DataFrame, folder: Path) -> SavedFigure:
    """FAA against steps: people (black, with participant-clustered error bars) and models."""
    models = table[table["kind"] == "model"]
    labels = ["people", *(short_label(model) for model in sorted(set(models["model"])))]
    with styled():
        figure, ax = _model_figure(labels)
        people = table[table["kind"] == "human"]
        ax.errorbar(
            people["horizon"],
            people["faa"],
            yerr=[people["faa"] - people["ci_low"], people["ci_high"] - people["faa"]],
            color="black",
            marker="s",
            capsize=3,
            linewidth=2,
            label="people",
        )
        for index, (model, series) in enumerate(models.groupby("model", sort=True)):
            style = _style(index)
            ax.plot(series["horizon"], series["faa"], marker="o", label=short_label(model), **style)
            ax.fill_between(
                series["horizon"],
                series["ci_low"].astype(float),
                series["ci_high"].astype(float),
                alpha=0.12,
                color=style["color"],
            )
        ax.set_xlabel("steps")
        _step_axis(ax)
        _percent_axis(ax)
        ax.set_title("FAA by procedure length: people and models")
        _model_legend(figure, ax, labels)
        return _save(
            figure,
            folder,
            "arithmetic_people_vs_models_by_horizon",
            "People and models (ours: the paper has no human data): FAA against the number of "
            "steps, people in black with participant-clustered 95% intervals, each model with "
            "its 95% interval",
        )
