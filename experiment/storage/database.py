"""The study database's engine: any SQLAlchemy URL, SQLite set up for durable writes."""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from tracktale.errors import TracktaleError


def create_storage_engine(url: str) -> Engine:
    """An engine for ``url``; SQLite gets WAL, full fsync, foreign keys and a busy timeout.

    Raises:
        TracktaleError: If the URL is malformed or its driver is missing.
    """
    try:
        parsed = sa.engine.make_url(url)
    except sa.exc.ArgumentError:
        raise TracktaleError(f"not a database URL: {url!r}") from None
    options: dict[str, Any] = {"pool_pre_ping": True}
    if parsed.get_backend_name() == "sqlite":
        database = parsed.database or ""
        if database and database != ":memory:":
            from pathlib import Path

            Path(database).parent.mkdir(parents=True, exist_ok=True)
        options = {"connect_args": {"timeout": 30, "check_same_thread": False}}
    try:
        engine = sa.create_engine(parsed, **options)
    except (ImportError, sa.exc.NoSuchModuleError) as error:
        raise TracktaleError(f"cannot use database {parsed.render_as_string()}: {error}") from None
    if parsed.get_backend_name() == "sqlite":
        sa.event.listen(engine, "connect", _sqlite_pragmas)
    return engine


def _sqlite_pragmas(connection: Any, _record: Any) -> None:
    cursor = connection.cursor()
    # WAL lets readers (admin, export) run while participants write; FULL syncs every commit,
    # so an acknowledged trial survives a power cut.
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=FULL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA busy_timeout=30000")
    cursor.close()
