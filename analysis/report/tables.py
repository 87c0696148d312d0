"""Tables as CSV (full precision) and LaTeX (booktabs, rounded), each written atomically."""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tracktale.atomic import atomic_write_text

if TYPE_CHECKING:
    import pandas as pd

_LATEX_SPECIAL = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
}


@dataclass(frozen=True)
class SavedTable:
    """A table written as CSV and LaTeX.

    Attributes:
        name: The file stem.
        title: What it shows (the caption).
        table: The data.
        paths: ``{"csv": ..., "tex": ...}``.
        shown: Whether the page prints its rows; a long-form table (the data of a figure,
            one row per state) is linked with its row count instead.
    """

    name: str
    title: str
    table: pd.DataFrame
    paths: dict[str, Path]
    shown: bool = True


def latex_escape(text: str) -> str:
    """Escape LaTeX's special characters."""
    return "".join(_LATEX_SPECIAL.get(char, char) for char in text)


PERCENT_COLUMNS = {
    "accuracy": ("accuracy", "ci_low", "ci_high"),
    "probability": ("probability", "prob_low", "prob_high"),
}
"""Proportion columns shown in percent (the page's text, figures and scorecard speak in percent;
the CSV files keep proportions): a table with the first column shows all three so."""


def format_cell(value: Any, digits: int = 3, *, whole: bool = False, percent: bool = False) -> str:
    """A value as a table shows it: floats rounded, missing values empty.

    Args:
        value: The cell.
        digits: Decimals of a real number.
        whole: The cell's column holds whole numbers only (:func:`whole_number_columns`):
            a float is shown without decimals (``1``, not ``1.000``).
        percent: The cell is a proportion shown in percent, one decimal (``74.6%``).
    """
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if percent and isinstance(value, int | float):
        return f"{100 * float(value):.1f}%"
    if whole and isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, float):
        if value != 0 and (abs(value) >= 1e6 or abs(value) < 10**-digits):
            return f"{value:.{digits}g}"
        return f"{value:.{digits}f}"
    return str(value)


def whole_number_columns(table: pd.DataFrame) -> list[bool]:
    """Per column: whether every value in it is a whole number held as a float.

    pandas makes a column of counts or levels float as soon as one value is missing or a merge
    brings one in; such a column is shown as integers, while a column with any fractional
    value keeps its decimals in every row.
    """
    import numpy as np

    flags = []
    for position in range(table.shape[1]):
        values = table.iloc[:, position]  # by position: a table may repeat a column's name
        if values.dtype.kind != "f":
            flags.append(False)
            continue
        present = values.dropna().to_numpy(dtype=float)
        whole = np.isfinite(present) & (present == np.round(present))
        flags.append(bool(len(present)) and bool(whole.all()))
    return flags


def percent_columns(table: pd.DataFrame) -> list[bool]:
    """Per column: whether it is a proportion the page shows in percent (:data:`PERCENT_COLUMNS`).

    Only where the table has the lead column (``accuracy``), so a ``ci_low`` of another
    quantity (a log ratio, a rate already in percent) keeps its own scale, and only where every
    value of the lead column lies in [0, 1].
    """
    names = [str(column) for column in table.columns]
    shown: set[str] = set()
    for lead, columns in PERCENT_COLUMNS.items():
        if lead not in names:
            continue
        values = table.iloc[:, names.index(lead)]
        if values.dtype.kind == "f" and bool(values.dropna().between(0, 1).all()):
            shown.update(columns)
    return [name in shown for name in names]


def table_cells(table: pd.DataFrame, digits: int = 3) -> list[list[str]]:
    """Every row of ``table`` as its cells read (whole numbers, percentages, rounding)."""
    flags = list(zip(whole_number_columns(table), percent_columns(table), strict=True))
    return [
        [
            format_cell(value, digits, whole=whole, percent=percent)
            for value, (whole, percent) in zip(row, flags, strict=True)
        ]
        for row in table.itertuples(index=False)
    ]


def to_latex(table: pd.DataFrame, caption: str, label: str, digits: int = 3) -> str:
    """A booktabs ``table`` environment (the document needs the booktabs package)."""
    numeric = [table[c].dtype.kind in "fiu" for c in table.columns]
    spec = "".join("r" if n else "l" for n in numeric)
    lines = [
        r"\begin{table}[ht]",
        r"\centering",
        rf"\caption{{{latex_escape(caption)}}}",
        rf"\label{{tab:{latex_escape(label)}}}",
        rf"\begin{{tabular}}{{{spec}}}",
        r"\toprule",
        " & ".join(latex_escape(str(c)) for c in table.columns) + r" \\",
        r"\midrule",
    ]
    for cells in table_cells(table, digits):
        lines.append(" & ".join(latex_escape(cell) for cell in cells) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}", r"\end{table}", ""]
    return "\n".join(lines)


def save_table(table: pd.DataFrame, folder: Path, name: str, title: str) -> SavedTable:
    """Write ``table`` as ``name.csv`` and ``name.tex`` into ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    csv_path, tex_path = folder / f"{name}.csv", folder / f"{name}.tex"
    atomic_write_text(csv_path, table.to_csv(index=False, lineterminator="\n"))
    atomic_write_text(tex_path, to_latex(table, title, name))
    return SavedTable(name=name, title=title, table=table, paths={"csv": csv_path, "tex": tex_path})
