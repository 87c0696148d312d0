r"""Exports for the analysis: trials and participants as CSV and Parquet.

The trials export has exactly the :class:`~tracktale.trial.TrialRecord` columns and the
participants export the :class:`~tracktale.trial.ParticipantRecord` columns (with
``prolific_pid_hash`` filled in); the analysis reads nothing else. Prolific ids appear only as
salted hashes, unless raw ids are asked for (then a ``prolific_pid`` column is added to the
participants export, for payments and withdrawal requests; such files are not for sharing).

Exports survive whatever is in the database, and are safe to open:

- Text that is not valid Unicode (a lone surrogate stored before the API refused them) is
  written with U+FFFD in its place, in both formats.
- CSV follows RFC 4180 (cells with separators, quotes or line breaks are quoted) and the
  OWASP rule against formula injection: a text cell that starts with ``=``, ``+``, ``-``,
  ``@``, a tab, CR, LF or NUL (or their full-width forms) gets a leading apostrophe, so that
  a spreadsheet shows it as text instead of running it. Control characters other than tab,
  CR and LF, and the invisible bidirectional-formatting characters, are written as visible
  escapes (``\x00``, ``\u202e``) in CSV.
- Parquet keeps the exact text. A value that does not fit its column's type (a database
  edited by hand) turns that column into text rather than failing the export.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tracktale.atomic import atomic_write_bytes, make_folder
from tracktale.errors import TracktaleError
from tracktale.experiment.export.summary import task_accuracy
from tracktale.experiment.storage.pseudonyms import SALT_KEY, pid_hash, study_salt
from tracktale.experiment.storage.store import Storage
from tracktale.schema import columns
from tracktale.trial import ParticipantRecord, TrialRecord

__all__ = ["FORMATS", "SALT_KEY", "TABLES", "Table", "export_salt", "export_study", "pid_hash"]

FORMATS = ("csv", "parquet")
TABLES = ("trials", "participants", "accuracy")
FORMULA_STARTS = frozenset("=+-@\t\r\n\x00\uff1d\uff0b\uff0d\uff20")
"""First characters that make a spreadsheet read a cell as a formula (OWASP CSV injection)."""
_SURROGATE = re.compile("[\ud800-\udfff]")
_INVISIBLE = re.compile(
    "[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]"
)


@dataclass(frozen=True)
class Table:
    """Columns (with their Python types) and rows of one export."""

    name: str
    columns: tuple[str, ...]
    types: tuple[type, ...]
    rows: list[tuple[Any, ...]]


def export_salt(storage: Storage, configured: str | None = None) -> str:
    """The configured salt, else the one kept in the database (see :mod:`.pseudonyms`)."""
    return study_salt(storage, configured)


def well_formed(text: str) -> str:
    """``text`` with lone surrogates replaced by U+FFFD (so that it encodes as UTF-8)."""
    return _SURROGATE.sub("\ufffd", text)


def spreadsheet_safe(text: str) -> str:
    """A text cell as CSV holds it: formulas neutralised, invisible characters escaped."""
    text = _INVISIBLE.sub(lambda match: _escape(match.group(0)), well_formed(text))
    return "'" + text if text[:1] in FORMULA_STARTS else text


def _escape(char: str) -> str:
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def _field_types(cls: type) -> tuple[tuple[str, ...], tuple[type, ...]]:
    declared = columns(cls)  # from the record's declaration (tracktale.schema)
    return tuple(c.name for c in declared), tuple(c.kind for c in declared)


def trials_table(storage: Storage, study_id: str | None = None) -> Table:
    """Every stored trial, one row each."""
    names, kinds = _field_types(TrialRecord)
    rows = [tuple(record.to_dict().values()) for record in storage.trials(study_id)]
    return Table("trials", names, kinds, rows)


def participants_table(
    storage: Storage, salt: str, study_id: str | None = None, raw_ids: bool = False
) -> Table:
    """Every participant, one row each, with the Prolific id hashed (and raw if asked)."""
    names, kinds = _field_types(ParticipantRecord)
    pids = {person.participant_id: person.prolific_pid for person in storage.participants()}
    rows = []
    for record in storage.participant_records(study_id):
        pid = pids[record.participant_id]
        row = dataclasses.replace(record, prolific_pid_hash=pid_hash(salt, pid))
        rows.append(tuple(row.to_dict().values()) + ((pid,) if raw_ids else ()))
    if raw_ids:
        names, kinds = (*names, "prolific_pid"), (*kinds, str)
    return Table("participants", names, kinds, rows)


def accuracy_table(storage: Storage, study_id: str | None = None) -> Table:
    """Per-participant, per-task accuracy with the exclusion flag (see :mod:`.summary`)."""
    rows = [
        (
            row.participant_id,
            row.task,
            row.n_trials,
            row.n_correct,
            row.n_timeouts,
            row.accuracy,
            row.excluded,
        )
        for row in task_accuracy(storage.trials(study_id))
    ]
    columns = (
        "participant_id",
        "task",
        "n_trials",
        "n_correct",
        "n_timeouts",
        "accuracy",
        "excluded",
    )
    return Table("accuracy", columns, (str, str, int, int, int, float, bool), rows)


def csv_bytes(table: Table) -> bytes:
    """The table as UTF-8 CSV with a header row (empty cells for missing values).

    Text cells are made spreadsheet-safe (:func:`spreadsheet_safe`).
    """
    buffer = io.StringIO(newline="")
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(table.columns)
    for row in table.rows:
        writer.writerow([_csv_cell(value) for value in row])
    return buffer.getvalue().encode("utf-8")


def _csv_cell(value: Any) -> Any:
    if value is None:
        return ""
    return spreadsheet_safe(value) if isinstance(value, str) else value


def parquet_bytes(table: Table) -> bytes:
    """The table as Parquet, with typed, nullable columns.

    Raises:
        TracktaleError: If pyarrow is not installed.
    """
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise TracktaleError(
            "Parquet export needs pyarrow: pip install 'tracktale[study]'"
        ) from None
    arrow_types = {bool: pa.bool_(), int: pa.int64(), float: pa.float64(), str: pa.string()}
    columns = list(zip(*table.rows, strict=True)) if table.rows else [()] * len(table.columns)
    arrays = []
    for values, kind in zip(columns, table.types, strict=True):
        clean = [well_formed(v) if isinstance(v, str) else v for v in values]
        try:
            arrays.append(pa.array(clean, type=arrow_types.get(kind, pa.string())))
        except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError):
            # A value that does not fit the column's type: keep the column, as text.
            arrays.append(pa.array([None if v is None else str(v) for v in clean], pa.string()))
    buffer = io.BytesIO()
    pq.write_table(pa.Table.from_arrays(arrays, names=list(table.columns)), buffer)
    return buffer.getvalue()


def encode(table: Table, fmt: str) -> bytes:
    """The table in ``csv`` or ``parquet`` format."""
    if fmt not in FORMATS:
        raise TracktaleError(f"unknown export format {fmt!r} (choose from {', '.join(FORMATS)})")
    return csv_bytes(table) if fmt == "csv" else parquet_bytes(table)


def export_study(
    storage: Storage,
    directory: str | os.PathLike[str],
    *,
    study_id: str | None = None,
    formats: Sequence[str] = FORMATS,
    raw_ids: bool = False,
    salt: str | None = None,
) -> list[Path]:
    """Write ``trials``, ``participants`` and ``accuracy`` tables into ``directory``.

    Args:
        storage: The study database.
        directory: Output folder (created).
        study_id: Only this study's rows (default: every study in the database).
        formats: Any of :data:`FORMATS`.
        raw_ids: Add raw Prolific ids to the participants export.
        salt: Hash salt (default: the one kept in the database).

    Returns:
        The files written.
    """
    target = make_folder(directory)
    salt = export_salt(storage, salt)
    tables = [
        trials_table(storage, study_id),
        participants_table(storage, salt, study_id, raw_ids),
        accuracy_table(storage, study_id),
    ]
    written = []
    for table in tables:
        for fmt in formats:
            path = target / f"{table.name}.{fmt}"
            atomic_write_bytes(path, encode(table, fmt))
            written.append(path)
    return written
