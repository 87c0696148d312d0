"""The report page: sections rendered with the Jinja2 templates in ``analysis/report/templates/``.

Autoescaping is on, so every title, caption, cell, warning and source is escaped; only a
section's ``html`` fragment (which its section escaped itself) goes in as it is. Figures are
embedded as PNG data, so the page is one self-contained file.
"""

from __future__ import annotations

import base64
import datetime
import functools
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import tracktale
from tracktale.analysis.report.tables import SavedTable, table_cells

if TYPE_CHECKING:
    import jinja2
    import pandas as pd

    from tracktale.analysis.report.context import ReportOptions, SectionResult
    from tracktale.analysis.report.style import SavedFigure

MAX_ROWS = 60
"""Rows of a table the page shows (the CSV file has them all)."""


@functools.cache
def environment() -> jinja2.Environment:
    """The templates of the report, loaded from the package, with autoescaping on."""
    import jinja2

    return jinja2.Environment(
        loader=jinja2.PackageLoader("tracktale.analysis.report", "templates"),
        autoescape=jinja2.select_autoescape(["html"]),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
    )


def _table_view(table: pd.DataFrame, max_rows: int) -> dict[str, Any]:
    # Of the whole table (then cut), so a column reads alike throughout.
    rows = table_cells(table)[:max_rows]
    return {
        # A zero-width space after each underscore lets a long column name break there.
        "columns": [str(c).replace("_", "_\u200b") for c in table.columns],
        "numeric": [table.iloc[:, i].dtype.kind in "iufb" for i in range(table.shape[1])],
        "rows": rows,
        "more": max(len(table) - max_rows, 0),
    }


def html_table(table: pd.DataFrame, max_rows: int = MAX_ROWS) -> str:
    """A DataFrame as an escaped HTML table (long tables are cut, the CSV has all rows)."""
    macros = environment().get_template("macros.html").module
    return str(macros.data_table(_table_view(table, max_rows)))  # type: ignore[attr-defined]


def _links(paths: dict[str, Path], root: Path) -> list[tuple[str, str]]:
    return [(fmt, str(path.relative_to(root))) for fmt, path in paths.items()]


def _figure_view(figure: SavedFigure, root: Path) -> dict[str, Any]:
    return {
        "title": figure.title,
        "png": base64.b64encode(figure.paths["png"].read_bytes()).decode("ascii"),
        "links": _links(figure.paths, root),
    }


def _saved_table_view(table: SavedTable, root: Path) -> dict[str, Any]:
    return {
        "title": table.title,
        # A long-form table is linked, not printed: the page says how many rows it holds.
        "table": _table_view(table.table, MAX_ROWS if table.shown else 0),
        "links": _links(table.paths, root),
    }


def _section_view(section: SectionResult) -> dict[str, Any]:
    from markupsafe import Markup

    root = _root_of(section)
    return {
        "title": section.title,
        "warnings": section.warnings,
        "html": Markup(section.html),  # escaped by the section that wrote it
        "figures": [_figure_view(f, root) for f in section.figures],
        "tables": [_saved_table_view(t, root) for t in section.tables],
    }


def render_html(
    sections: list[SectionResult],
    sources: list[str],
    options: ReportOptions,
    paradigms: Iterable[str] = (),
) -> str:
    """The whole page: one file, figures embedded as PNG data.

    Args:
        sections: The sections, in page order.
        sources: One line per input (stimulus sets, human data, model results).
        options: The analysis options (stated in one line).
        paradigms: The paradigms reported, whose own options the line states too.
    """
    from importlib.resources import files

    css = files("tracktale.analysis.report").joinpath("templates", "report.css").read_text("utf-8")
    return (
        environment()
        .get_template("report.html")
        .render(
            css=css,
            version=tracktale.__version__,
            date=datetime.date.today().isoformat(),
            sources=sources,
            options=describe_options(options, paradigms),
            sections=[_section_view(section) for section in sections],
        )
    )


def _root_of(section: SectionResult) -> Path:
    paths = [p for f in section.figures for p in f.paths.values()]
    paths += [p for t in section.tables for p in t.paths.values()]
    return paths[0].parent.parent if paths else Path(".")


def describe_options(options: ReportOptions, paradigms: Iterable[str] = ()) -> str:
    """The analysis options in one line, as the page states them.

    Args:
        options: The analysis options.
        paradigms: The paradigms reported: the line ends with each one's own options (those
            its plug-in declares), and names no other paradigm's.
    """
    from tracktale.analysis.report.options import ParadigmOptions, options_model

    own = [
        options.of(paradigm, ParadigmOptions).describe()
        for paradigm in paradigms
        if options_model(paradigm) is not None
    ]
    return ", ".join(
        [
            f"mixed-model engine {options.engine}, random effects "
            f"{'intercepts and complexity slopes' if options.slopes else options.random}, "
            f"recency covariate {options.recency}, task coding {options.task_coding}, "
            f"inference {options.inference}, glmer tests {options.glmer_test}, item "
            f"permutations {options.permutations:,}, complexity test "
            f"{options.complexity_statistic}, interaction's primary test "
            f"{options.interaction_test}, two-way SEs "
            f"{'at least the participant-clustered' if options.two_way_floor else 'as estimated'}"
            f", recency equivalence bounds +-{options.recency_sesoi:g} points"
            f"{' (and brms)' if options.bayes else ''}"
            f", accuracy intervals {options.accuracy_interval}, "
            f"model correctness column {options.value}, Figures 5 and 7 on the "
            f"{options.figure_template} template{'s' if options.figure_template == 'all' else ''}",
            *own,
        ]
    )
