"""The results store: a folder of Parquet shards, one row per (model, revision, item, task).

Layout and guarantees:

- A store is a folder of ``part-*.parquet`` shards. Each shard is written to a hidden temporary
  file, fsynced and renamed into place (:mod:`tracktale.atomic`), so a reader (or a run killed
  with ``kill -9``) sees whole shards only; hidden ``.part-*.tmp`` files are never read.
- Writers never modify a shard: a run appends a shard after every chunk of items, so a killed run
  loses at most the chunk in flight and a restart scores only what is missing. Parallel jobs
  (one SLURM job per revision) each write their own shards into the same folder.
- Reading concatenates every shard and keeps, for each key ``(model_id, revision, item_id,
  task)``, the most recently written row, so every result is held exactly once even when two
  shards hold the same key (a rescore, or a compaction interrupted before it removed the shards it
  merged). :func:`compact` rewrites a store as one shard; a run merges its own shards at the end.
  A shard removed by a merge while a reader reads the store means the merged shard is already in
  place: the reader lists the shards again.
- ``revision`` is ``""`` for a model's default branch.

This module needs pandas and pyarrow but never torch: the analysis stage imports it.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import socket
import time
import uuid
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from tracktale.atomic import atomic_write
from tracktale.errors import TracktaleError
from tracktale.item import plain_data
from tracktale.models.tasks import result_records
from tracktale.schema.derive import base_type, hints
from tracktale.schema.results import (
    RESULT_KEY,
    ModelProvenance,
    ResultIdentity,
    field_names,
    frame_columns,
    typed_columns,
)
from tracktale.scorer import ResultRecord

KEY = RESULT_KEY
"""A row's identity."""

IDENTITY_COLUMNS = field_names(ResultIdentity)
PROVENANCE_COLUMNS = field_names(ModelProvenance)
"""Where the weights came from: ``gguf`` (file, sha256, quantization such as Q4_1), ``hub``
or ``folder`` (see :mod:`tracktale.models.gguf`); NA in rows written before they existed."""


def standard_columns() -> tuple[str, ...]:
    """Columns every :func:`read_results` frame has (missing values are NA).

    The result models' fields marked to be in every frame (:mod:`tracktale.schema.results`),
    over the registered tasks, then ``written_at``.
    """
    return (*frame_columns(result_records()), "written_at")


def row_records() -> tuple[type, ...]:
    """The records that declare a stored row's columns.

    The result models of the registered tasks (:func:`result_records`), then the explicit
    task's parts: each registered paradigm's judgement and each backend's generation details.

    Raises:
        TracktaleError: When two records declare one column with different types.
    """
    from tracktale.models.registry import backend_names, generation_details
    from tracktale.stimuli.registry import get_paradigm, paradigm_names

    parts: list[type] = [get_paradigm(name).judgement for name in paradigm_names()]
    parts += [generation_details(name) for name in backend_names()]
    records = (*result_records(), *dict.fromkeys(parts))
    declared: dict[str, tuple[type, type]] = {}
    for cls in records:
        for name in field_names(cls):
            kind = base_type(hints(cls)[name])
            first = declared.setdefault(name, (cls, kind))
            if first[1] != kind:
                raise TracktaleError(
                    f"column {name!r} is {first[1]} in {first[0].__name__} but {kind} in "
                    f"{cls.__name__}"
                )
    return records


def typed(kind: type) -> tuple[str, ...]:
    """The declared columns of a scalar type (``bool``, ``int``, ``float``), over every record.

    Read as pandas ``boolean``, ``Int64`` and ``float64``: nullable, since a row of another
    task or paradigm (or an older row) lacks them.
    """
    return typed_columns(row_records(), kind)


STANDARD_COLUMNS = standard_columns()
"""The :func:`standard_columns` of the tasks registered when this module was imported."""

SHARD_PATTERN = "part-*.parquet"
_STALE_TMP_SECONDS = 3600


def record_to_row(record: ResultRecord, written_at: int) -> dict[str, Any]:
    """Flatten a result into one row: identity, model info and details, then the scores."""
    info = record.info
    row: dict[str, Any] = {
        "model_id": record.model_id,
        "revision": record.revision or "",
        "item_id": record.item_id,
        "task": record.task,
        "stimulus_sha256": record.stimulus_sha256,
        "paradigm": record.paradigm,
        "resolved_sha": info.resolved_sha,
        "backend": info.backend,
        "dtype": info.dtype,
        "device": info.device,
        "bos_policy": info.bos_policy,
    }
    for key, value in info.details.items():
        row[key if key not in row else f"info_{key}"] = _cell(value)
    for key, value in record.scores.items():
        row[key if key not in row else f"score_{key}"] = _cell(value)
    row["written_at"] = written_at
    return row


def _cell(value: Any) -> Any:
    """A detail or score as a Parquet cell: scalars and flat lists as they are, nested data JSON."""
    value = plain_data(value)
    if isinstance(value, dict) or (
        isinstance(value, list) and any(isinstance(v, dict | list) for v in value)
    ):
        return json.dumps(value, sort_keys=True, default=str)
    return value


def write_shard(folder: str | os.PathLike[str], records: Sequence[ResultRecord]) -> Path | None:
    """Write results as a new shard of the store in ``folder`` (created if needed), atomically.

    Returns:
        The shard's path, or ``None`` when there was nothing to write.
    """
    if not records:
        return None
    written_at = time.time_ns()
    return _write_frame(Path(folder), pd.DataFrame([record_to_row(r, written_at) for r in records]))


def _write_frame(folder: Path, frame: pd.DataFrame) -> Path:
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise TracktaleError(
            f"cannot create the results folder {folder}: {error.strerror}"
        ) from None
    if not folder.is_dir():
        raise TracktaleError(f"{folder} is not a folder (a results store is a folder)")
    host = re.sub(r"[^A-Za-z0-9]+", "-", socket.gethostname())[:24] or "host"
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
    path = folder / f"part-{stamp}-{host}-{os.getpid()}-{uuid.uuid4().hex[:8]}.parquet"
    table = pa.Table.from_pandas(frame, preserve_index=False)
    with atomic_write(path, "wb") as handle:
        pq.write_table(table, handle)
    return path


def shards(path: str | os.PathLike[str]) -> list[Path]:
    """The store's shards, oldest name first (a single ``.parquet`` file is its own shard)."""
    target = Path(path)
    if target.is_file():
        return [target]
    return sorted(target.glob(SHARD_PATTERN)) if target.is_dir() else []


def _read_shard(path: Path, columns: Sequence[str] | None) -> pd.DataFrame:
    try:
        if columns is not None:
            present = set(pq.read_schema(path).names)
            columns = [name for name in columns if name in present]
        return pq.read_table(path, columns=columns).to_pandas()
    except FileNotFoundError:
        raise  # merged away by another process: the caller lists the shards again
    except (OSError, pa.ArrowException) as error:
        raise TracktaleError(f"cannot read results shard {path}: {error}") from None


def read_results(
    path: str | os.PathLike[str], columns: Iterable[str] | None = None
) -> pd.DataFrame:
    """Read a results store: one row per ``(model_id, revision, item_id, task)``.

    Args:
        path: The store's folder (or one ``.parquet`` file).
        columns: Only these columns (plus the key); ``None`` for all.

    Returns:
        The rows, the most recently written one for each key. Every frame has the
        :func:`standard_columns` (NA where a task does not fill them; asked-for ``columns``
        only when given); ``correct``-like columns are pandas ``boolean``, counts ``Int64``;
        per-token values are list columns.

    Raises:
        TracktaleError: If ``path`` does not exist or a shard cannot be read.
    """
    target = Path(path)
    if not target.exists():
        raise TracktaleError(f"no results at {target}")
    wanted = None if columns is None else list(dict.fromkeys([*KEY, "written_at", *columns]))
    frames = _read_every_shard(target, wanted)
    frame = pd.concat(frames, ignore_index=True, sort=False) if frames else pd.DataFrame()
    expected = standard_columns() if wanted is None else wanted
    for name in expected:
        if name not in frame.columns:
            frame[name] = pd.Series(pd.NA, index=frame.index, dtype="object")
    if len(frame):
        frame = frame.sort_values("written_at", kind="stable")
        frame = frame.drop_duplicates(list(KEY), keep="last")
    frame = frame.reset_index(drop=True)
    return _typed(frame)


_ATTEMPTS = 20


def _read_every_shard(target: Path, columns: list[str] | None) -> list[pd.DataFrame]:
    """Every non-empty shard; listed again when a merge removes one under the reader."""
    for _ in range(_ATTEMPTS):
        try:
            frames = [_read_shard(shard, columns) for shard in shards(target)]
        except FileNotFoundError:
            continue  # the shards it was merged into are in place: list them again
        return [frame for frame in frames if len(frame)]
    raise TracktaleError(f"cannot read {target}: its shards kept changing while being read")


def _typed(frame: pd.DataFrame) -> pd.DataFrame:
    records = row_records()
    for name in typed_columns(records, bool):
        if name in frame.columns:
            frame[name] = frame[name].astype("boolean")
    for name in typed_columns(records, int):
        if name in frame.columns:
            frame[name] = pd.to_numeric(frame[name], errors="coerce").astype("Int64")
    for name in typed_columns(records, float):
        if name in frame.columns:
            frame[name] = pd.to_numeric(frame[name], errors="coerce").astype("float64")
    return frame


class ShardWriter:
    """Appends shards to a store and can merge the shards it wrote into one.

    Args:
        folder: The store.
    """

    def __init__(self, folder: str | os.PathLike[str]) -> None:
        self.folder = Path(folder)
        self.written: list[Path] = []

    def write(self, records: Sequence[ResultRecord]) -> None:
        """Write one chunk of results as a shard."""
        path = write_shard(self.folder, records)
        if path is not None:
            self.written.append(path)

    def merge(self) -> Path | None:
        """Replace this writer's shards by one (the new shard is in place before any removal).

        When another process compacted the store meanwhile (some of the shards are gone, their
        rows now in its shard), nothing is merged: every row is already stored once.
        """
        if len(self.written) < 2:
            return self.written[0] if self.written else None
        try:
            merged = _merge(self.folder, self.written)
        except (FileNotFoundError, TracktaleError):
            if all(path.exists() for path in self.written):
                raise
            self.written = [path for path in self.written if path.exists()]
            return None
        self.written = [merged]
        return merged


def _merge(folder: Path, parts: Sequence[Path]) -> Path:
    for part in parts:
        if not part.exists():
            raise FileNotFoundError(part)
    frame = pd.concat([_read_shard(part, None) for part in parts], ignore_index=True, sort=False)
    frame = frame.sort_values("written_at", kind="stable").drop_duplicates(list(KEY), keep="last")
    merged = _write_frame(folder, frame.reset_index(drop=True))
    for part in parts:
        with contextlib.suppress(FileNotFoundError):
            part.unlink()
    return merged


def compact(path: str | os.PathLike[str]) -> tuple[int, int]:
    """Rewrite a store as a single shard holding each key once.

    Safe while other jobs write to the store: only the shards read are removed, after the
    compacted shard is in place. Also removes temporary files left by killed writers (older than
    an hour).

    Returns:
        The number of rows kept and the number of shards merged.

    Raises:
        TracktaleError: If ``path`` is not a store folder.
    """
    folder = Path(path)
    if not folder.is_dir():
        raise TracktaleError(f"{folder} is not a results folder")
    now = time.time()
    for stale in folder.glob(".part-*.tmp"):
        with contextlib.suppress(OSError):
            if now - stale.stat().st_mtime > _STALE_TMP_SECONDS:
                stale.unlink()
    for _ in range(_ATTEMPTS):
        parts = shards(folder)
        try:
            if len(parts) < 2:
                return (len(_read_shard(parts[0], list(KEY))) if parts else 0), len(parts)
            merged = _merge(folder, parts)
            return len(_read_shard(merged, list(KEY))), len(parts)
        except FileNotFoundError:
            continue  # another writer merged some of them meanwhile
    raise TracktaleError(f"cannot compact {folder}: its shards kept changing")
