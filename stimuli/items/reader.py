"""Reading an item table (CSV, TSV or XLSX) into rows that remember their line.

Text files must be UTF-8 (a byte-order mark is dropped); every line that is not is reported
(``items.csv:7: not UTF-8 ...``) and nothing else is read. The delimiter is a tab for ``.tsv``
and ``.tab`` files, else whichever of ``,``, ``;`` and tab the header line holds most of (the
design's ``format.delimiter`` overrides both). XLSX files are read with openpyxl (``pip install
'tracktale[xlsx]'``), from the first sheet or the one the design names. Every cell is
normalised to Unicode NFC and stripped of surrounding whitespace; right-to-left text is kept
as written. Blank rows are skipped.
"""

from __future__ import annotations

import csv
import io
import unicodedata
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path
from typing import Any, Literal

from tracktale.errors import InputProblems, TracktaleError

TableKind = Literal["csv", "tsv", "xlsx"]
_DELIMITERS = (",", ";", "\t")


@dataclass(frozen=True)
class Row:
    """One row of the table.

    Attributes:
        line: Its line in the file (CSV/TSV: the line it starts on; XLSX: the row number).
        cells: Column name -> the cell's text (NFC, stripped; ``""`` for an empty cell).
    """

    line: int
    cells: dict[str, str]


@dataclass(frozen=True)
class Table:
    """A table as read.

    Attributes:
        path: The file.
        kind: ``csv``, ``tsv`` or ``xlsx``.
        header: The column names, in order.
        rows: The rows that are not blank, in order.
        letters: XLSX only: column name -> its column letter, for messages.
    """

    path: Path
    kind: TableKind
    header: tuple[str, ...]
    rows: tuple[Row, ...]
    letters: dict[str, str] = field(default_factory=dict)

    def where(self, line: int, column: str | None = None) -> str:
        """``items.csv:5: column 'answer'`` (with the letter in an XLSX file)."""
        text = f"{self.path}:{line}:"
        if column is None:
            return text
        letter = f" ({self.letters[column]})" if column in self.letters else ""
        return f"{text} column {column!r}{letter}:"


def read_table(
    path: str | Path, *, delimiter: str | None = None, sheet: str | None = None
) -> Table:
    """Read a CSV, TSV or XLSX item table.

    Raises:
        InputProblems: One line per line that is not UTF-8, per row that does not fit the
            header, or for a header with repeated names.
        TracktaleError: For a file that cannot be read at all.
    """
    path = Path(path)
    if path.suffix.lower() in (".xlsx", ".xlsm"):
        header, rows, letters = _read_xlsx(path, sheet)
        table = Table(path, "xlsx", header, rows, letters)
    else:
        kind: TableKind = "tsv" if path.suffix.lower() in (".tsv", ".tab") else "csv"
        header, rows = _read_text(path, delimiter or ("\t" if kind == "tsv" else None))
        table = Table(path, kind, header, rows)
    repeated = sorted({name for name in header if name and header.count(name) > 1})
    if repeated:
        raise InputProblems(path, [f"{path}:1: the header names column {repeated[0]!r} twice"])
    return table


def _read_text(path: Path, delimiter: str | None) -> tuple[tuple[str, ...], tuple[Row, ...]]:
    try:
        raw = path.read_bytes()
    except OSError as error:
        raise TracktaleError(f"cannot read {path}: {error.strerror}") from None
    text = _decode(path, raw)
    lines = text.splitlines()
    if not lines or not lines[0].strip():
        raise InputProblems(path, [f"{path}:1: the first line must be the header"])
    chosen = delimiter or max(_DELIMITERS, key=lines[0].count)
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=chosen)
    header: tuple[str, ...] | None = None
    rows: list[Row] = []
    problems: list[str] = []
    previous_end = 0
    try:
        for record in reader:
            start, previous_end = previous_end + 1, reader.line_num
            if header is None:
                header = tuple(_clean(name) for name in record)
                continue
            if not any(cell.strip() for cell in record):
                continue
            if len(record) > len(header) and any(cell.strip() for cell in record[len(header) :]):
                problems.append(
                    f"{path}:{start}: the row has {len(record)} cells; the header has {len(header)}"
                )
                continue
            cells = [_clean(cell) for cell in record] + [""] * (len(header) - len(record))
            rows.append(Row(start, dict(zip(header, cells, strict=False))))
    except csv.Error as error:
        problems.append(f"{path}:{reader.line_num}: not readable as CSV ({error})")
    if problems:
        raise InputProblems(path, problems)
    return header or (), tuple(rows)


def _decode(path: Path, raw: bytes) -> str:
    """The file's text, or every line that is not UTF-8."""
    if raw.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise InputProblems(path, [f"{path}:1: UTF-16, not UTF-8 (save the file as CSV UTF-8)"])
    raw = raw.removeprefix(b"\xef\xbb\xbf")
    try:
        return unicodedata.normalize("NFC", raw.decode("utf-8"))
    except UnicodeDecodeError:
        pass
    problems = []
    for number, line in enumerate(raw.split(b"\n"), start=1):
        try:
            line.decode("utf-8")
        except UnicodeDecodeError as error:
            column = len(line[: error.start].decode("utf-8", errors="replace")) + 1
            problems.append(
                f"{path}:{number}: not UTF-8 (byte 0x{line[error.start]:02X} at character "
                f"{column}; save the file as UTF-8)"
            )
    raise InputProblems(path, problems)


def _clean(cell: str) -> str:
    return unicodedata.normalize("NFC", cell).strip()


def _read_xlsx(
    path: Path, sheet: str | None
) -> tuple[tuple[str, ...], tuple[Row, ...], dict[str, str]]:
    from openpyxl import load_workbook
    from openpyxl.utils import get_column_letter
    from openpyxl.utils.exceptions import InvalidFileException

    try:
        workbook = load_workbook(path, read_only=True, data_only=True)
    except (InvalidFileException, OSError, KeyError, ValueError) as error:
        raise TracktaleError(f"cannot read {path} as an XLSX workbook ({error})") from None
    try:
        if sheet is not None and sheet not in workbook.sheetnames:
            names = ", ".join(workbook.sheetnames)
            raise TracktaleError(f"{path} has no sheet {sheet!r} (it has {names})")
        worksheet = workbook[sheet] if sheet is not None else workbook.worksheets[0]
        records = [
            (number, [_xlsx_cell(value) for value in values])
            for number, values in enumerate(worksheet.iter_rows(values_only=True), start=1)
        ]
    finally:
        workbook.close()
    if not records:
        raise InputProblems(path, [f"{path}:1: the first row must be the header"])
    header = tuple(records[0][1])
    width = max((i + 1 for i, name in enumerate(header) if name), default=0)
    header = header[:width]
    letters = {name: get_column_letter(i + 1) for i, name in enumerate(header) if name}
    rows = tuple(
        Row(number, dict(zip(header, [*cells, *[""] * width][:width], strict=True)))
        for number, cells in records[1:]
        if any(cells)
    )
    return header, rows, letters


def _xlsx_cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, datetime | date):
        return value.isoformat()
    return _clean(str(value))
