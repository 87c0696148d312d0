"""One figure style for every paradigm, and saving figures as PNG, PDF and SVG atomically.

Figures are built on :class:`matplotlib.figure.Figure` directly, never through ``pyplot``, so
no GUI backend is selected and no global figure registry is touched; the style is applied with
``matplotlib.rc_context`` only while a figure is built and saved. Colours are the Okabe-Ito
palette (distinguishable under the common colour-vision deficiencies); ordered series such as
model sizes use the ``cividis`` colour map, which is also colour-blind-safe.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tracktale.atomic import atomic_write

if TYPE_CHECKING:
    from matplotlib.figure import Figure
    from matplotlib.typing import RcKeyType

OKABE_ITO = (
    "#0072B2",  # blue
    "#D55E00",  # vermillion
    "#009E73",  # bluish green
    "#E69F00",  # orange
    "#CC79A7",  # reddish purple
    "#56B4E9",  # sky blue
    "#F0E442",  # yellow
    "#000000",  # black
)
HUMAN_COLOUR = "#000000"
TASK_COLOURS = {"explicit": OKABE_ITO[0], "implicit": OKABE_ITO[1]}
TEMPLATE_COLOURS = {
    "standard": OKABE_ITO[0],
    "pseudoword": OKABE_ITO[3],
    "improbable": OKABE_ITO[2],
}
FORMATS = ("png", "pdf", "svg")
PANEL_WIDTH = 3.3
PANEL_HEIGHT = 2.8


def style() -> dict[RcKeyType, Any]:
    """The rcParams every figure is drawn and saved with."""
    from cycler import cycler

    return {
        "font.size": 9,
        "axes.titlesize": 10,
        "axes.labelsize": 9,
        "legend.fontsize": 7.5,
        "legend.frameon": False,
        "axes.spines.top": False,
        "axes.spines.right": False,
        "axes.grid": True,
        "grid.alpha": 0.25,
        "axes.prop_cycle": cycler(color=OKABE_ITO),
        "lines.linewidth": 1.6,
        "lines.markersize": 4.5,
        "errorbar.capsize": 2.5,
        "savefig.dpi": 200,
        "savefig.bbox": "tight",
        "pdf.fonttype": 42,
        "svg.fonttype": "none",
        "svg.hashsalt": "tracktale",
    }


@contextlib.contextmanager
def styled() -> Iterator[None]:
    """Apply :func:`style` for the duration of the block (restored afterwards)."""
    import matplotlib

    with matplotlib.rc_context(style()):
        yield


def new_figure(
    n_panels: int = 1,
    *,
    width: float | None = None,
    height: float = PANEL_HEIGHT,
    sharey: bool = True,
    width_ratios: list[float] | None = None,
) -> Figure:
    """A figure with ``n_panels`` side by side (call inside :func:`styled`)."""
    from matplotlib.figure import Figure

    figure = Figure(figsize=(width or PANEL_WIDTH * n_panels, height), layout="constrained")
    figure.subplots(1, n_panels, sharey=sharey, squeeze=False, width_ratios=width_ratios)
    return figure


def sequential_colours(n: int) -> list[Any]:
    """``n`` colours from light-to-dark ``cividis`` (for ordered series such as sizes)."""
    from matplotlib import colormaps

    cmap = colormaps["cividis"]
    return [cmap(0.9 - 0.8 * i / max(1, n - 1)) for i in range(n)]


@dataclass(frozen=True)
class SavedFigure:
    """A figure written in every format.

    Attributes:
        name: The file stem.
        title: What it shows (the report's caption).
        paths: One path per format (``png``, ``pdf``, ``svg``).
    """

    name: str
    title: str
    paths: dict[str, Path]


def save_figure(figure: Figure, folder: Path, name: str, title: str) -> SavedFigure:
    """Write ``figure`` as PNG, PDF and SVG into ``folder`` (each file atomically).

    Call inside :func:`styled` so the saved files use the same style as the drawing.
    """
    folder.mkdir(parents=True, exist_ok=True)
    paths = {}
    for fmt in FORMATS:
        path = folder / f"{name}.{fmt}"
        # PDF and SVG embed a creation date by default; leaving it out keeps files reproducible.
        metadata = (
            {"CreationDate": None} if fmt == "pdf" else {"Date": None} if fmt == "svg" else {}
        )
        with atomic_write(path, "wb") as handle:
            figure.savefig(handle, format=fmt, metadata=metadata)
        paths[fmt] = path
    return SavedFigure(name=name, title=title, paths=paths)


def percent_axes(
    figure: Figure,
    label: str = "Accuracy (%)",
    chance: float | Sequence[float | None] | None = 0.5,
) -> None:
    """Accuracy axes from 0 to 100% with a dashed chance line.

    Args:
        figure: The figure whose panels are set.
        label: The first panel's y label.
        chance: The chance level of every panel, one per panel (``None`` where a panel, such
            as open recall, has none), or ``None`` for no line.
    """
    from matplotlib.ticker import PercentFormatter

    levels = list(chance) if isinstance(chance, Sequence) else [chance] * len(figure.axes)
    for index, ax in enumerate(figure.axes):
        ax.set_ylim(0, 1.02)
        ax.yaxis.set_major_formatter(PercentFormatter(1.0, decimals=0))
        if index == 0:
            ax.set_ylabel(label)
        level = levels[index] if index < len(levels) else None
        if level is not None:
            ax.axhline(level, color="0.5", linestyle="--", linewidth=0.8, zorder=0)
