"""The study database's engine: any SQLAlchemy URL, SQLite set up for durable writes.

What the database cannot do for a while (a read-only filesystem, a full disk, a lock held too
long, a lost PostgreSQL connection) becomes :class:`~tracktale.errors.StorageUnavailable`,
which the web layer answers with 503 and ``Retry-After``, so that the page's outbox tries
again. Connections that met a read-only or I/O error are discarded, so the server recovers by
itself once the file can be written again.

SQLite opens a database it cannot write silently read-only (``mode=rw`` in the URI does not
prevent it: SQLite's own fallback) and keeps such a connection read-only for good. So a new
connection to a file that cannot be written now is refused instead (503), and never pooled. Its
WAL needs the database's folder writable (it creates ``<name>-wal`` and ``<name>-shm`` there)
and both files writable; :func:`unwritable` says which of them is not. The check uses
``access(2)`` and never opens the files: closing any descriptor of a file drops every POSIX lock
the process holds on it, which SQLite's locking relies on.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sqlite3
import time
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from tracktale.errors import StorageUnavailable, TracktaleError

_log = logging.getLogger("tracktale.experiment")

# SQLite's primary result codes that say "not now" rather than "not this request".
_SQLITE_BUSY = {5, 6}  # SQLITE_BUSY, SQLITE_LOCKED
_SQLITE_UNWRITABLE = {8, 10, 14}  # SQLITE_READONLY, SQLITE_IOERR, SQLITE_CANTOPEN
_SQLITE_FULL = 13
_WAL_ATTEMPTS = 100  # 5 s of 0.05 s waits
_SQLITE_DAMAGED = {11, 26}  # SQLITE_CORRUPT, SQLITE_NOTADB


def create_storage_engine(url: str, *, writable: bool = True) -> Engine:
    """An engine for ``url``; SQLite gets WAL, full fsync, foreign keys and a busy timeout.

    Args:
        url: The SQLAlchemy URL.
        writable: Refuse new SQLite connections while the file cannot be written (the
            server); ``False`` for readers such as the export command.

    Raises:
        TracktaleError: If the URL is malformed or its driver is missing.
    """
    try:
        parsed = sa.engine.make_url(url)
    except sa.exc.ArgumentError:
        raise TracktaleError(f"not a database URL: {url!r}") from None
    options: dict[str, Any] = {"pool_pre_ping": True}
    database = sqlite_path(parsed)
    if parsed.get_backend_name() == "sqlite":
        if database is not None:
            database.parent.mkdir(parents=True, exist_ok=True)
        options = {"connect_args": {"timeout": 30, "check_same_thread": False}}
    try:
        engine = sa.create_engine(parsed, **options)
    except (ImportError, sa.exc.NoSuchModuleError) as error:
        raise TracktaleError(f"cannot use database {parsed.render_as_string()}: {error}") from None
    if parsed.get_backend_name() == "sqlite":
        sa.event.listen(engine, "connect", _sqlite_pragmas)
        if writable and database is not None:
            sa.event.listen(engine, "do_connect", _refuse_unwritable(database))
    sa.event.listen(engine, "handle_error", _classify(engine.dialect.name, database))
    return engine


def sqlite_path(url: Any) -> Path | None:
    """The file of a SQLite URL (``None`` for other databases and in-memory SQLite)."""
    parsed = sa.engine.make_url(url) if isinstance(url, str) else url
    if parsed.get_backend_name() != "sqlite" or parsed.database in (None, "", ":memory:"):
        return None
    return Path(parsed.database)


def unwritable(database: Path) -> str | None:
    """Why SQLite could not write ``database`` now (``None``: it could), naming the file."""
    files = [database, Path(f"{database}-wal"), Path(f"{database}-shm")]
    for path in files:
        if path.exists() and not os.access(path, os.W_OK, effective_ids=True):
            return f"{path} cannot be written ({_why(path)})"
    folder = database.parent
    if not all(path.exists() for path in files) and not os.access(
        folder, os.W_OK | os.X_OK, effective_ids=True
    ):
        return f"the folder {folder} cannot be written ({_why(folder)})"
    return None


def _why(path: Path) -> str:
    try:
        read_only = bool(os.statvfs(path).f_flag & os.ST_RDONLY)
    except OSError as error:
        return error.strerror or "cannot be checked"
    return "read-only filesystem" if read_only else "not permitted"


def report_unwritable(database: Path) -> str | None:
    """Log (once) why SQLite could not write ``database`` now; returns it (``None``: it could)."""
    problem = unwritable(database)
    _note(database, problem)
    return problem


def _unwritable_message(problem: str) -> str:
    return (
        f"the study database cannot be written: {problem}; SQLite's WAL needs the database's "
        "folder and its -wal and -shm files writable (writes answer 503 until they are)"
    )


def _refuse_unwritable(database: Path) -> Any:
    def check(_dialect: Any, _record: Any, _args: Any, _params: Any) -> None:
        problem = unwritable(database)
        if problem is not None:
            _note(database, problem)
            raise StorageUnavailable(_unwritable_message(problem))
        _note(database, None)

    return check


_noted: dict[str, str | None] = {}


def _note(database: Path, problem: str | None) -> None:
    """Log a problem with the file once, when it appears (and once when it is gone)."""
    key = str(database)
    if _noted.get(key) == problem:
        return
    if problem is not None:
        _log.warning("tracktale: warning: %s", _unwritable_message(problem))
    elif _noted.get(key) is not None:
        _log.warning("tracktale: the study database %s can be written again", database)
    _noted[key] = problem


def _classify(dialect: str, database: Path | None) -> Any:
    """A ``handle_error`` hook: database faults that pass become StorageUnavailable."""

    def handle(context: Any) -> Any:
        if context.is_pre_ping:
            return None
        error = context.original_exception
        if dialect == "sqlite":
            unavailable = _sqlite_fault(error, database)
            code = getattr(error, "sqlite_errorcode", 0) & 0xFF
            if unavailable is not None and code in _SQLITE_UNWRITABLE:
                context.is_disconnect = True  # a read-only connection stays read-only: discard
            return unavailable
        if dialect == "postgresql":
            return _postgresql_fault(context, error)
        return None

    return handle


def _sqlite_fault(error: BaseException, database: Path | None) -> StorageUnavailable | None:
    code = getattr(error, "sqlite_errorcode", None)
    if code is None:
        return None
    primary = code & 0xFF
    if primary in _SQLITE_BUSY:
        return StorageUnavailable(f"the study database is busy ({error})", retry_after=2)
    if primary == _SQLITE_FULL:
        return StorageUnavailable(f"the study database's disk is full ({error})", retry_after=30)
    if primary in _SQLITE_UNWRITABLE:
        problem = unwritable(database) if database is not None else None
        if problem is not None and database is not None:
            _note(database, problem)
            return StorageUnavailable(_unwritable_message(problem))
        return StorageUnavailable(f"the study database cannot be written just now ({error})")
    if primary in _SQLITE_DAMAGED:
        where = database or "the study database"
        _log.error("tracktale: the study database %s is damaged (%s)", where, error)
        return StorageUnavailable(f"the study database is damaged ({error})", retry_after=60)
    return None


def _postgresql_fault(context: Any, error: BaseException) -> StorageUnavailable | None:
    state = getattr(error, "sqlstate", None) or ""
    if state.startswith("53"):  # insufficient resources: disk full, out of memory, connections
        return StorageUnavailable(f"the study database is out of resources ({error})", 30)
    if state == "25006" or state.startswith(("57P", "08")) or context.is_disconnect:
        # read-only (a standby after failover), shut down, or the connection is gone
        context.is_disconnect = True
        return StorageUnavailable(f"the study database is unreachable just now ({error})")
    return None


def _sqlite_pragmas(connection: Any, _record: Any) -> None:
    cursor = connection.cursor()
    # WAL lets readers (admin, export) run while participants write; FULL syncs every commit,
    # so an acknowledged trial survives a power cut.
    _enter_wal(cursor)
    cursor.execute("PRAGMA synchronous=FULL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA busy_timeout=30000")
    cursor.close()


def _enter_wal(cursor: Any) -> None:
    # Switching a new file to WAL needs an exclusive lock, and SQLite answers "locked" at once,
    # without its busy handler, while another process makes the same switch (servers starting
    # together; about 1 start in 200 with six). WAL stays on the file, so a short wait suffices.
    for _ in range(_WAL_ATTEMPTS - 1):
        try:
            cursor.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as error:
            if "locked" not in str(error) and "busy" not in str(error):
                raise
            time.sleep(0.05)
    cursor.execute("PRAGMA journal_mode=WAL")


def check_integrity(engine: Engine) -> None:
    """Refuse a damaged SQLite database (``PRAGMA quick_check``); other databases pass.

    Raises:
        TracktaleError: Naming the file, the first problem found and what to do.
    """
    database = sqlite_path(engine.url)
    if database is None or not database.exists():
        return
    try:
        with engine.connect() as connection:
            rows = connection.exec_driver_sql("PRAGMA quick_check(3)").scalars().all()
    except StorageUnavailable as error:
        if "damaged" not in str(error):
            raise
        rows = [str(error)]
    except sa.exc.DatabaseError as error:
        rows = [str(error.orig)]
    if rows != ["ok"]:
        found = " ".join(" ".join(rows).replace("*** in database main ***", "").split())
        raise TracktaleError(damaged_message(database, found[:200]))


def damaged_message(database: Path, problem: str) -> str:
    """The one line that refuses a damaged database."""
    return (
        f"the study database {database} is damaged ({problem}); stop every server on it, "
        "restore the latest backup (`tracktale experiment backup` makes one) and start again"
    )


def backup_sqlite(database: Path, target: Path) -> None:
    """Copy a SQLite study database while servers go on writing to it, and check the copy.

    SQLite's online backup API copies one consistent state of the database (its WAL
    included); copying the file itself (or its ``-wal`` and ``-shm``) while a server runs can
    give a damaged copy, and truncating or replacing ``-shm`` kills the server (SIGBUS). The
    copy is written beside ``target`` and renamed over it once complete and checked.

    Raises:
        TracktaleError: If the database cannot be read, or the copy is damaged.
    """
    import tempfile

    if not database.is_file():
        raise TracktaleError(f"no study database at {database}")
    fd, name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    os.close(fd)
    partial = Path(name)
    try:
        with (
            contextlib.closing(sqlite3.connect(database, timeout=30)) as source,
            contextlib.closing(sqlite3.connect(partial)) as copy,
        ):
            source.backup(copy)
            found = copy.execute("PRAGMA quick_check(3)").fetchall()
        if found != [("ok",)]:
            raise TracktaleError(damaged_message(database, str(found[0][0])))
        _sync(partial)
        partial.replace(target)
        _sync(target.parent)
    except sqlite3.Error as error:
        if getattr(error, "sqlite_errorcode", 0) & 0xFF in _SQLITE_DAMAGED:
            raise TracktaleError(damaged_message(database, str(error))) from None
        raise TracktaleError(f"cannot back up {database}: {error}") from None
    finally:
        partial.unlink(missing_ok=True)


def _sync(path: Path) -> None:
    descriptor = os.open(path, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)
