"""Tables of the boxes analysis in the source paper's layout, written as CSV and LaTeX.

The paper's Table 1 has a row per instruction variant and language condition and a column per
shot count, each cell reading ``Step-EM / State-EM`` in percent. :func:`paper_layout` turns a
long table from :mod:`.scores` into that form; the long tables (with bootstrap intervals and
parse rates) are written beside it.
"""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd

from tracktale.analysis.boxes.scores import ROW_FACTORS
from tracktale.analysis.report.tables import to_latex
from tracktale.atomic import atomic_write

LABELS = {
    "instruction": {
        "normal": "Normal instruction",
        "counterintuitive-language": "Counter-intuitive instruction (language)",
        "flipped-truth": "Counter-intuitive instruction (truth values switched)",
    },
    "language": {
        "nl": "NL functor + NL argument",
        "functor-only": "SL functor + NL argument",
        "argument-only": "NL functor + SL argument",
        "synthetic": "SL functor + SL argument",
    },
    "distractors": {"off": "no distractors", "on": "distractors"},
    "prompt_format": {"single-turn": "single-turn", "multi-round": "faked multi-round"},
    "initialization": {
        "normal": "normal initialization",
        "compressed": "compressed initialization",
    },
}


def _percent(value: float) -> str:
    return "n/a" if pd.isna(value) else f"{round(100 * value)}%"


def paper_layout(long: pd.DataFrame) -> pd.DataFrame:
    """``Step-EM / State-EM`` per condition row and shot column, as in the paper's tables.

    Args:
        long: A table from :func:`tracktale.analysis.boxes.scores.final_step_table`.

    Returns:
        Columns ``model``, the row factors (readable labels) and ``<n>-shot`` cells.
    """
    factors = [name for name in ROW_FACTORS if name in long]
    if long.empty:
        return pd.DataFrame(columns=["model", *factors])
    cells = long.assign(
        model=[
            f"{m}@{r}" if r else m for m, r in zip(long["model_id"], long["revision"], strict=True)
        ],
        cell=[
            f"{_percent(step)} / {_percent(state)}"
            for step, state in zip(long["step_em"], long["state_em"], strict=True)
        ],
        column=[f"{shots}-shot" for shots in long["shots"]],
    )
    keys = ["model", *factors]
    wide = cells.pivot_table(
        index=keys, columns="column", values="cell", aggfunc="first", sort=False
    )
    shots = sorted(long["shots"].unique())
    wide = wide.reindex(columns=[f"{s}-shot" for s in shots]).fillna("").reset_index()
    for name in factors:
        wide[name] = wide[name].map(lambda value, n=name: LABELS[n].get(value, value))
    wide.columns.name = None
    return wide


def write_csv(table: pd.DataFrame, path: str | os.PathLike[str]) -> str:
    """Write ``table`` as CSV atomically; return the path."""
    with atomic_write(path, "w") as handle:
        table.to_csv(handle, index=False, lineterminator="\n")
    return os.fspath(path)


def write_latex(table: pd.DataFrame, path: str | os.PathLike[str], caption: str) -> str:
    """Write ``table`` as a booktabs LaTeX table atomically; return the path."""
    with atomic_write(path, "w") as handle:
        handle.write(to_latex(table, caption, label=Path(path).stem))
    return os.fspath(path)
