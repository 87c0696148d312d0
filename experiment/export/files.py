r"""Exports for the analysis: trials and participants as CSV and Parquet.

The trials export has exactly the :class:`~tracktale.trial.TrialRecord` columns and the
participants export the :class:`~tracktale.trial.ParticipantRecord` columns (with
``prolific_pid_hash`` filled in); the analysis reads nothing else. A study whose stories are
read word by word (self-paced reading, Maze) also gets a ``words`` export, exactly the
:class:`~tracktale.schema.WordRecord` columns, one row per word. Prolific ids appear only as
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

The researcher's preview sessions (``source="preview"``, :mod:`..study.links`) are left out of
every table unless asked for (``include_preview``).

Every export reads one snapshot of the database (:meth:`.reads.StorageReads.snapshot`): the
tables of one export, and the reads behind one table, agree with each other while participants
keep starting and answering. The tables are the builders in :data:`TABLES`, each reading from
an :class:`ExportRead`; a table added there is exported, downloadable and read in the same
snapshot as the others.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import os
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, TypeVar

import sqlalchemy as sa

from tracktale.atomic import atomic_write_bytes, make_folder
from tracktale.errors import TracktaleError
from tracktale.experiment.export.summary import task_accuracy
from tracktale.experiment.storage.pseudonyms import (
    SALT_KEY,
    personal_completion_code,
    pid_hash,
    study_salt,
)
from tracktale.experiment.storage.store import Storage
from tracktale.schema import WordRecord, columns
from tracktale.schema.records import PREVIEW_SOURCE
from tracktale.trial import ParticipantRecord, TrialRecord

__all__ = [
    "FORMATS",
    "SALT_KEY",
    "TABLES",
    "ExportRead",
    "Table",
    "export_salt",
    "export_study",
    "pid_hash",
    "read_tables",
]

FORMATS = ("csv", "parquet")
FORMULA_STARTS = frozenset("=+-@\t\r\n\x00\uff1d\uff0b\uff0d\uff20")
"""First characters that make a spreadsheet read a cell as a formula (OWASP CSV injection)."""
_SURROGATE = re.compile("[\ud800-\udfff]")
_INVISIBLE = re.compile(
    "[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]"
)


class _HasSource(Protocol):
    @property
    def source(self) -> str: ...


_Sourced = TypeVar("_Sourced", bound=_HasSource)


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


@dataclass(frozen=True)
class ExportRead:
    """What the tables of one export read: one snapshot of the database, and the options.

    Attributes:
        storage: The study database.
        connection: The snapshot every read of the export runs on.
        study_id: Only this study's rows (``None``: every study in the database).
        salt: The secret the Prolific ids are hashed under.
        raw_ids: Add the raw Prolific ids (and personal completion codes) to participants.
        personal_codes: The study gives each participant their own completion code.
        include_preview: Keep the researcher's preview sessions (``source="preview"``),
            which every table leaves out by default.
    """

    storage: Storage
    connection: sa.Connection
    study_id: str | None
    salt: str
    raw_ids: bool = False
    personal_codes: bool = False
    include_preview: bool = False

    def kept(self, records: Iterable[_Sourced]) -> list[_Sourced]:
        """``records`` without preview sessions, unless they are asked for."""
        if self.include_preview:
            return list(records)
        return [record for record in records if record.source != PREVIEW_SOURCE]


def trials_table(read: ExportRead) -> Table:
    """Every stored trial, one row each (preview sessions' only when asked for)."""
    names, kinds = _field_types(TrialRecord)
    trials = read.kept(read.storage.trials(read.study_id, read.connection))
    return Table("trials", names, kinds, [tuple(record.to_dict().values()) for record in trials])


def words_table(read: ExportRead) -> Table:
    """Every word of every story read word by word, one row each (see ``WordRecord``)."""
    names, kinds = _field_types(WordRecord)
    words = read.kept(read.storage.words(read.study_id, read.connection))
    return Table("words", names, kinds, [tuple(record.to_dict().values()) for record in words])


def participants_table(read: ExportRead) -> Table:
    """Every participant, one row each, with the Prolific id hashed (and raw if asked).

    With raw ids, a study that gives personal completion codes lists each one too.
    """
    names, kinds = _field_types(ParticipantRecord)
    people = read.storage.participants(read.study_id, read.connection)
    pids = {person.participant_id: person.prolific_pid for person in people}
    codes = read.raw_ids and read.personal_codes
    rows = []
    for record in read.kept(read.storage.participant_records(read.study_id, read.connection)):
        pid = pids[record.participant_id]
        row = dataclasses.replace(record, prolific_pid_hash=pid_hash(read.salt, pid))
        extra: tuple[str, ...] = (pid,) if read.raw_ids else ()
        if codes:
            extra += (personal_completion_code(read.salt, record.participant_id),)
        rows.append(tuple(row.to_dict().values()) + extra)
    if read.raw_ids:
        names, kinds = (*names, "prolific_pid"), (*kinds, str)
    if codes:
        names, kinds = (*names, "completion_code"), (*kinds, str)
    return Table("participants", names, kinds, rows)


def accuracy_table(read: ExportRead) -> Table:
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
        for row in task_accuracy(read.kept(read.storage.trials(read.study_id, read.connection)))
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


TABLES: dict[str, Callable[[ExportRead], Table]] = {
    "trials": trials_table,
    "participants": participants_table,
    "accuracy": accuracy_table,
    "words": words_table,
}
"""Every export table by name, each built from the one snapshot of its export."""
OPTIONAL_TABLES = frozenset({"words"})
"""Tables :func:`export_study` writes only when they have rows (the admin page's download
of one gives its header at least)."""


def read_tables(
    storage: Storage,
    names: Sequence[str] | None = None,
    *,
    study_id: str | None = None,
    salt: str | None = None,
    raw_ids: bool = False,
    personal_codes: bool = False,
    include_preview: bool = False,
) -> list[Table]:
    """The tables ``names`` (default: all of :data:`TABLES`), read in one snapshot.

    Preview sessions (``source="preview"``) are left out unless ``include_preview``.

    Raises:
        TracktaleError: For an unknown table name.
    """
    unknown = [name for name in names or () if name not in TABLES]
    if unknown:
        raise TracktaleError(
            f"unknown export table {unknown[0]!r} (choose from {', '.join(TABLES)})"
        )
    salt = export_salt(storage, salt)  # before the snapshot: the first use stores it
    with storage.snapshot() as connection:
        read = ExportRead(
            storage, connection, study_id, salt, raw_ids, personal_codes, include_preview
        )
        return [TABLES[name](read) for name in names or TABLES]


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
    personal_codes: bool = False,
    include_preview: bool = False,
) -> list[Path]:
    """Write every table of :data:`TABLES`, read in one snapshot, into ``directory``.

    Args:
        storage: The study database.
        directory: Output folder (created).
        study_id: Only this study's rows (default: every study in the database).
        formats: Any of :data:`FORMATS`.
        raw_ids: Add raw Prolific ids to the participants export.
        salt: Hash salt (default: the one kept in the database).
        personal_codes: The study gives personal completion codes (listed with raw ids).
        include_preview: Keep the researcher's preview sessions (left out by default).

    Returns:
        The files written.
    """
    target = make_folder(directory)
    tables = read_tables(
        storage,
        study_id=study_id,
        salt=salt,
        raw_ids=raw_ids,
        personal_codes=personal_codes,
        include_preview=include_preview,
    )
    written = []
    for table in tables:
        if table.name in OPTIONAL_TABLES and not table.rows:
            continue  # a study of whole stories has no words: its export is as it was
        for fmt in formats:
            path = target / f"{table.name}.{fmt}"
            atomic_write_bytes(path, encode(table, fmt))
            written.append(path)
    return written
