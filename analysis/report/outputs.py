"""What an analysis wrote, kept as objects: each table's data and each figure's files.

A paradigm's analysis writes its tables and figures to disk and records them here as it goes,
so the report shows the very tables it wrote, never a copy read back from the CSV files.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, ParamSpec

from tracktale.analysis.report.style import SavedFigure
from tracktale.analysis.report.tables import SavedTable

if TYPE_CHECKING:
    import pandas as pd

FIGURE_FORMATS = ("png", "pdf", "svg")
P = ParamSpec("P")


@dataclass
class Outputs:
    """The tables and figures an analysis wrote, in the order it wrote them.

    Attributes:
        tables: Each table with its data and files (``csv``, and ``tex`` where written).
        figures: Each figure with its files (``png``, ``pdf``, ``svg``).
    """

    tables: list[SavedTable] = field(default_factory=list)
    figures: list[SavedFigure] = field(default_factory=list)
    written: list[Path] = field(default_factory=list)
    """Every file, in the order written."""

    def table(
        self,
        table: pd.DataFrame,
        paths: Iterable[str | Path],
        title: str,
        *,
        shown: bool = True,
    ) -> list[Path]:
        """Record ``table``, just written to ``paths`` (files of one stem); return the paths.

        Args:
            table: The data written.
            paths: Its files (``csv``, and ``tex`` where written).
            title: What it shows: the report's caption.
            shown: Print its rows on the page (``False``: a long-form table, linked only).
        """
        files = [Path(path) for path in paths]
        by_format = {path.suffix.lstrip("."): path for path in files}
        self.tables.append(
            SavedTable(name=files[0].stem, title=title, table=table, paths=by_format, shown=shown)
        )
        self.written += files
        return files

    def figures_saved(self, saved: SavedFigure | Iterable[SavedFigure] | None) -> None:
        """Record figures just written (a plot function's answer; ``None``: nothing drawn)."""
        chosen = [] if saved is None else [saved] if isinstance(saved, SavedFigure) else saved
        for figure in chosen:
            ordered = {fmt: figure.paths[fmt] for fmt in FIGURE_FORMATS if fmt in figure.paths}
            self.figures.append(SavedFigure(name=figure.name, title=figure.title, paths=ordered))
            self.written += ordered.values()

    def extend(self, other: Outputs) -> None:
        """Append what another analysis wrote."""
        self.tables += other.tables
        self.figures += other.figures
        self.written += other.written


def written_paths(analysis: Callable[P, Outputs]) -> Callable[P, list[Path]]:
    """The same analysis, returning the paths it wrote (in order) instead of the objects."""

    @functools.wraps(analysis)
    def paths(*args: P.args, **kwargs: P.kwargs) -> list[Path]:
        return analysis(*args, **kwargs).written

    paths.__doc__ = f"{analysis.__name__}, returning the paths written (in order)."
    return paths
