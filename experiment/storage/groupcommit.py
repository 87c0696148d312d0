"""Group commit: concurrent trial saves share one transaction, and so one disk sync.

Every acknowledged trial must survive a power cut, so each commit is synced to disk (SQLite
``synchronous=FULL``; PostgreSQL's default). One sync per trial caps a server at a few hundred
saves a second; when many participants save at once, the requests waiting at that moment are
written in one transaction instead. There is no background thread: the first waiting request
writes a batch while the others wait, then hands over to the next one still waiting, so every
request returns as soon as its own row is committed.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Engine


@dataclass
class _Pending:
    row: Mapping[str, Any]
    statement: Any = None
    finished: bool = False
    inserted: bool = False
    error: BaseException | None = None


class GroupCommitter:
    """Inserts rows into tables with unique constraints, batching concurrent inserts.

    Rows for any of its tables share the batches (a trial served and a trial answered at the
    same moment are committed, and synced, together).

    Args:
        engine: The database.
        table: The table to insert into (the first is the default of :meth:`insert`).
        *more: Further tables whose rows share the batches.
        max_batch: Most rows written in one transaction.
    """

    def __init__(
        self, engine: Engine, table: sa.Table, *more: sa.Table, max_batch: int = 256
    ) -> None:
        self.engine = engine
        self.max_batch = max_batch
        self._default = table.name
        # PostgreSQL reports inserted rows through RETURNING (its rowcount is not kept when
        # SQLAlchemy adds RETURNING itself); SQLite's rowcount is reliable on every version.
        self._returns = engine.dialect.name == "postgresql"
        self._statements = {}
        for each in (table, *more):
            statement = insert_ignoring_conflicts(engine, each)
            if statement is None:
                # Without INSERT ... ON CONFLICT DO NOTHING one conflict would abort the
                # whole batch, so other databases write one row per transaction.
                statement = each.insert()
                self.max_batch = 1
            self._statements[each.name] = statement
        self._condition = threading.Condition()
        self._queue: list[_Pending] = []
        self._writing = False

    def insert(self, row: Mapping[str, Any], table: str | None = None) -> bool:
        """Insert one row (into ``table``, by name) and wait until it is committed.

        Returns:
            ``True`` if the row was inserted, ``False`` if a unique constraint kept it out.

        Raises:
            Exception: The database's error when it refused this row (the other rows of its
                batch are written one by one then, so one bad row fails only itself).
        """
        pending = _Pending(row, self._statements[table or self._default])
        with self._condition:
            self._queue.append(pending)
            while not pending.finished:
                if self._writing:
                    self._condition.wait()
                    continue
                self._writing = True
                batch = self._queue[: self.max_batch]
                del self._queue[: self.max_batch]
                self._condition.release()
                try:
                    self._write(batch)
                finally:
                    self._condition.acquire()
                    self._writing = False
                    self._condition.notify_all()
        if pending.error is not None:
            raise pending.error
        return pending.inserted

    def _write(self, batch: list[_Pending]) -> None:
        try:
            try:
                self._write_together(batch)
            except Exception:
                if len(batch) == 1:
                    raise
                # One bad row (a value the database refuses) must not fail the others that
                # happened to share its transaction: write each row on its own instead.
                for pending in batch:
                    pending.inserted = False
                    try:
                        self._write_together([pending])
                    except Exception as error:  # noqa: BLE001 - handed to that row's caller
                        pending.error = error
        except BaseException as error:  # every row of the batch learns that it failed
            for pending in batch:
                pending.error = error
        finally:
            for pending in batch:
                pending.finished = True

    def _write_together(self, batch: list[_Pending]) -> None:
        with self.engine.begin() as connection:
            for pending in batch:
                try:
                    result = connection.execute(pending.statement, dict(pending.row))
                    pending.inserted = (
                        result.first() is not None if self._returns else result.rowcount == 1
                    )
                except sa.exc.IntegrityError:
                    if self.max_batch != 1:
                        raise
                    pending.inserted = False


def insert_ignoring_conflicts(engine: Engine, table: sa.Table) -> Any:
    """``INSERT ... ON CONFLICT DO NOTHING`` into ``table`` (``None``: the database has none)."""
    name = engine.dialect.name
    if name == "sqlite":
        from sqlalchemy.dialects.sqlite import insert as sqlite_insert

        return sqlite_insert(table).on_conflict_do_nothing()
    if name == "postgresql":
        from sqlalchemy.dialects.postgresql import insert as postgresql_insert

        key = list(table.primary_key.columns)
        return postgresql_insert(table).on_conflict_do_nothing().returning(*key)
    return None
