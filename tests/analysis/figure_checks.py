"""Checks of drawn figures: what a reader of the report would see wrong (issue 31, item 10).

:func:`capture` keeps every figure a plot module saves (the files are still written), and
:func:`problems` lists, per figure, what is wrong with it: fractional ticks on an axis of whole
numbers (steps, participants), a title cut off at the figure's edge, a legend drawn over the
data, a raw variable or model id in a text, the house style not applied.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable

WHOLE_AXES = ("step", "steps", "participants recruited", "participants")
"""Axis labels (lower case) of axes counted in whole numbers."""


def capture(monkeypatch, module, name: str) -> list:
    """Keep the figures ``module.name(figure, ...)`` saves; errors on layout warnings."""
    original = getattr(module, name)
    kept: list = []

    def saving(figure, folder, name, *args, **kwargs):
        figure._saved_as = name  # the file stem, for tests that look for one figure
        kept.append(figure)
        with warnings.catch_warnings():
            # "constrained_layout not applied", "axes sizes collapsed to zero": layout failures.
            warnings.simplefilter("error")
            return original(figure, folder, name, *args, **kwargs)

    monkeypatch.setattr(module, name, saving)
    return kept


def _texts(figure) -> Iterable:
    if figure._suptitle is not None:
        yield figure._suptitle
    for ax in figure.axes:
        yield from (ax.title, ax._left_title, ax._right_title, ax.xaxis.label, ax.yaxis.label)
        for axis, (lower, upper) in ((ax.xaxis, ax.get_xlim()), (ax.yaxis, ax.get_ylim())):
            low, high = sorted((lower, upper))
            # Only the ticks drawn: matplotlib keeps labels of ticks outside the view.
            yield from (
                tick.label1 for tick in axis.get_major_ticks() if low <= tick.get_loc() <= high
            )
    for legend in _legends(figure):
        yield from legend.get_texts()
        yield legend.get_title()


def _legends(figure) -> list:
    return [*figure.legends, *(ax.get_legend() for ax in figure.axes if ax.get_legend())]


def _data_paths(figure):
    """Every plotted line and band as a path in display coordinates (reference lines apart)."""
    for ax in figure.axes:
        for line in ax.get_lines():
            if line.get_transform() == ax.transData:  # axhline/axvline span the axes instead
                yield line.get_transform().transform_path(line.get_path()), False
        for collection in ax.collections:  # interval bands
            for path in collection.get_paths():
                yield collection.get_transform().transform_path(path), True


def problems(figure, *, forbidden: Iterable[str] = ()) -> list[str]:
    """What is wrong with ``figure`` as the report would show it."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = FigureCanvasAgg(figure)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        canvas.draw()  # lays the figure out as saving does
    renderer = canvas.get_renderer()
    found = []
    edge = figure.bbox
    for text in _texts(figure):
        words = text.get_text()
        if not words or not text.get_visible():
            continue
        box = text.get_window_extent(renderer)
        if box.x0 < edge.x0 - 1 or box.x1 > edge.x1 + 1 or box.y1 > edge.y1 + 1:
            found.append(f"cut off at the figure's edge: {words!r}")
        found += [f"raw name {name!r} in {words!r}" for name in forbidden if name in words]
    for ax in figure.axes:
        if ax.xaxis.label.get_text().lower() in WHOLE_AXES and ax.get_visible():
            lower, upper = ax.get_xlim()
            ticks = [t for t in ax.get_xticks() if lower <= t <= upper]
            fractional = [t for t in ticks if t != int(t)]
            if fractional:
                found.append(f"fractional ticks on {ax.xaxis.label.get_text()!r}: {fractional}")
        if ax.get_visible() and ax.spines["top"].get_visible() and not ax.images:
            found.append(f"not the house style (a top spine) in {ax.get_title()!r}")
    for legend in _legends(figure):
        box = legend.get_window_extent(renderer)
        covered = [
            path for path, filled in _data_paths(figure) if path.intersects_bbox(box, filled)
        ]
        if covered:
            found.append(f"a legend over {len(covered)} lines or bands")
    return found
