"""Tables for the terminal that stay readable in 80 columns.

Rich shrinks every column of a table that is too wide, which cut labels to "Partic…" and
broke a model's name over four lines between its numbers. These tables draw no vertical
rules (two spaces between columns), never wrap a number, and let only the text columns
wrap, at word boundaries, when the terminal is narrow.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich import box
from rich.table import Table


def compact_table(title: str, columns: Sequence[str], text_columns: Sequence[str]) -> Table:
    """A table with ``columns``; those in ``text_columns`` are left-aligned and may wrap.

    The other columns (numbers) are right-aligned and never wrap.
    """
    table = Table(
        title=title,
        title_justify="left",
        box=box.SIMPLE_HEAD,
        pad_edge=False,
        padding=(0, 1),
        collapse_padding=True,
    )
    for column in columns:
        if column in text_columns:
            table.add_column(column, justify="left", overflow="fold")
        else:
            table.add_column(column, justify="right", no_wrap=True)
    return table
