"""Request limits with Flask-Limiter, counted in storage that every server process shares.

Flask-Limiter (and the ``limits`` library under it) counts requests in fixed one-minute
windows. Its storage backends are memory (one process: two gunicorn workers would each allow
the full limit), Redis/Valkey, Memcached and MongoDB, each a separate service to run. A study
server is usually one machine, so the default here is a small ``limits`` storage of our own on
a SQLite file beside the study database (``tracktale-sqlite://PATH``): shared by every worker
on that machine, with no service to run, and kept out of the study database so that counting
requests never waits for, or delays, the durable commits of trials (the file is written in WAL
mode without fsync: losing counts in a power cut is harmless). For servers on several
machines, set ``rate_limits.storage_uri`` to a Memcached or Redis URI.

Counts are keyed by a keyed hash (HMAC under the app's secret key) of the address or session
token, never by the address or token itself: the counts file holds no IP address and no token
that could open a session.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import random
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from flask import Blueprint, Flask, current_app, request
from flask_limiter import Limiter
from limits import RateLimitItemPerMinute
from limits.storage import MemoryStorage
from limits.storage import Storage as LimitsStorage
from limits.strategies import FixedWindowRateLimiter

from tracktale.experiment.study.config import StudyConfig
from tracktale.experiment.study.validation import ApiError
from tracktale.settings import data_dir

SCHEME = "tracktale-sqlite"
_WRITES_SCOPE = "writes"
ADMIN_FAILURES_PER_MINUTE = 10
"""Wrong admin secrets (form or ``Authorization: Bearer``) allowed per address and minute."""


class SQLiteLimitsStorage(LimitsStorage):
    """A ``limits`` storage on a SQLite file (fixed windows): ``tracktale-sqlite:///path``."""

    STORAGE_SCHEME = [SCHEME]

    def __init__(self, uri: str, wrap_exceptions: bool = False, **options: Any) -> None:
        super().__init__(uri, wrap_exceptions=wrap_exceptions, **options)
        self.path = uri.removeprefix(f"{SCHEME}://")
        Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        self._local = threading.local()
        with self._using() as connection, connection:
            connection.execute(
                "CREATE TABLE IF NOT EXISTS counts "
                "(key TEXT PRIMARY KEY, count INTEGER NOT NULL, expires REAL NOT NULL)"
            )

    @property
    def base_exceptions(self) -> type[Exception]:
        """Errors the storage raises (Flask-Limiter lets requests through on them)."""
        return sqlite3.Error

    def _connection(self) -> sqlite3.Connection:
        connection = getattr(self._local, "connection", None)
        if connection is None:
            connection = sqlite3.connect(self.path, timeout=10, isolation_level=None)
            connection.execute("PRAGMA journal_mode=WAL")
            connection.execute("PRAGMA synchronous=OFF")
            self._local.connection = connection
        return connection

    @contextlib.contextmanager
    def _using(self) -> Iterator[sqlite3.Connection]:
        """This thread's connection; one that fails is closed, the next call opens another.

        SQLite opens a file it cannot write read-only and keeps it so: after a read-only
        window (or a full disk) the counts would stay unwritable for good.
        """
        connection = self._connection()
        try:
            yield connection
        except sqlite3.Error:
            self._local.connection = None
            with contextlib.suppress(sqlite3.Error):
                connection.close()
            raise

    def incr(self, key: str, expiry: int, amount: int = 1) -> int:
        """Add ``amount`` to the key's window (a new window once the last one expired)."""
        moment = time.time()
        with self._using() as connection, connection:
            (count,) = connection.execute(
                "INSERT INTO counts (key, count, expires) VALUES (?, ?, ?) "
                "ON CONFLICT(key) DO UPDATE SET "
                "count = CASE WHEN expires <= ? THEN excluded.count "
                "ELSE count + excluded.count END, "
                "expires = CASE WHEN expires <= ? THEN excluded.expires ELSE expires END "
                "RETURNING count",
                (key, amount, moment + expiry, moment, moment),
            ).fetchone()
            if random.random() < 0.01:  # forget expired windows (and their keys) now and then
                connection.execute("DELETE FROM counts WHERE expires <= ?", (moment,))
        return int(count)

    def get(self, key: str) -> int:
        """The key's count in its current window."""
        with self._using() as connection:
            row = connection.execute(
                "SELECT count FROM counts WHERE key = ? AND expires > ?", (key, time.time())
            ).fetchone()
        return int(row[0]) if row else 0

    def get_expiry(self, key: str) -> float:
        """When the key's current window ends (now if it has none)."""
        with self._using() as connection:
            row = connection.execute(
                "SELECT expires FROM counts WHERE key = ? AND expires > ?", (key, time.time())
            ).fetchone()
        return float(row[0]) if row else time.time()

    def check(self) -> bool:
        """Whether the file can be read."""
        try:
            with self._using() as connection:
                connection.execute("SELECT 1").fetchone()
        except sqlite3.Error:
            return False
        return True

    def reset(self) -> int | None:
        """Forget every count."""
        with self._using() as connection, connection:
            return connection.execute("DELETE FROM counts").rowcount

    def clear(self, key: str) -> None:
        """Forget one key's count."""
        with self._using() as connection, connection:
            connection.execute("DELETE FROM counts WHERE key = ?", (key,))


def default_storage_uri(config: StudyConfig, database_url: str) -> str:
    """Where the counts are kept: the study's setting, else a SQLite file beside the database."""
    if config.rate_limits.storage_uri:
        return config.rate_limits.storage_uri
    if database_url.startswith("sqlite:///") and ":memory:" not in database_url:
        database = Path(database_url.removeprefix("sqlite:///")).resolve()
        return f"{SCHEME}://{database}.ratelimits"
    return f"{SCHEME}://{(data_dir() / 'study' / config.study_id).resolve()}.ratelimits.sqlite"


def limits_prefix(config: StudyConfig) -> str:
    """The prefix of every count of this study (Flask-Limiter's ``key_prefix``)."""
    return f"tracktale:{config.study_id}"


def limit_key(kind: str, value: str | None) -> str:
    """The key a count is kept under: ``kind`` and an HMAC of the address or token."""
    secret = str(current_app.config["SECRET_KEY"]).encode()
    digest = hmac.new(secret, (value or "unknown").encode(), hashlib.sha256).hexdigest()[:24]
    return f"{kind}:{digest}"


def address_key() -> str:
    """The count key of the client's address."""
    return limit_key("ip", request.remote_addr)


def create_limiter(app: Flask, config: StudyConfig, database_url: str) -> Limiter:
    """Flask-Limiter for the app, keyed by the client's address unless a route says otherwise.

    Errors of the counting storage let requests through (``swallow_errors``): a study server
    must not refuse a trial because a counter could not be written (admin sign-in is the
    exception: :func:`admin_failures_exceeded` fails closed). ``X-RateLimit-*`` headers are
    not sent: they cost two more reads of the counts on every request, and the page does not
    use them; a refused request carries ``Retry-After`` (:func:`retry_after_breached`).
    """
    app.extensions[_FALLBACK] = FixedWindowRateLimiter(MemoryStorage())
    return Limiter(
        address_key,
        app=app,
        storage_uri=default_storage_uri(config, database_url),
        strategy="fixed-window",
        key_prefix=limits_prefix(config),
        headers_enabled=False,
        swallow_errors=True,
    )


def limit_writes(
    blueprint: Blueprint,
    limiter: Limiter,
    per_minute: int,
    key_func: Callable[[], str],
    endpoints: frozenset[str],
    prefix: str,
) -> None:
    """Count the participants' writes (``endpoints``) against one shared limit per key.

    The count is Flask-Limiter's own (its storage, strategy and key scheme) taken with one
    ``hit`` before the view; Flask-Limiter's per-request resolution of which limits apply,
    which cost more CPU than the count itself, is skipped for these endpoints. Like
    Flask-Limiter with ``swallow_errors``, a counter that cannot be written lets the request
    through (a trial must not be refused for a counter).
    """
    item = RateLimitItemPerMinute(per_minute)
    limiter.request_filter(lambda: request.endpoint in endpoints)

    @blueprint.before_request
    def count_write() -> None:
        if request.endpoint not in endpoints or not limiter.enabled:
            return
        key = key_func()
        try:
            allowed = limiter.limiter.hit(item, prefix, key, _WRITES_SCOPE)
        except Exception:  # noqa: BLE001 - fail open, as swallow_errors does
            limiter.logger.exception("Failed to count a write. Swallowing error")
            return
        if not allowed:
            try:
                reset_at = limiter.limiter.get_window_stats(item, prefix, key, _WRITES_SCOPE)[0]
            except Exception:  # noqa: BLE001
                reset_at = time.time() + item.get_expiry()
            raise ApiError(
                429,
                f"{item} exceeded",
                retry_after=max(1, round(reset_at - time.time())),
            )


def retry_after_breached(limiter: Limiter) -> int:
    """Seconds until the limit this request broke lets it through again (60 if unknown)."""
    breached = limiter.current_limit
    if breached is None:
        return 60
    try:
        reset_at = breached.reset_at
    except Exception:  # noqa: BLE001 - the counts are unreadable: the window's length
        return 60
    return max(1, round(reset_at - time.time()))


ADMIN_FAILURES = RateLimitItemPerMinute(ADMIN_FAILURES_PER_MINUTE)
_ADMIN_SCOPE = "admin-failures"
_FALLBACK = "tracktale_admin_failures_fallback"


def _fallback() -> FixedWindowRateLimiter:
    # Wrong secrets that the shared counts could not take are counted here (this process).
    return current_app.extensions[_FALLBACK]


def admin_failures_exceeded(limiter: Limiter, address: str | None) -> bool:
    """Whether this address has used up its wrong admin secrets for the minute.

    Fails closed: while the shared counts cannot be read, every admin secret is refused (the
    participants' limits fail open instead; a trial must never be refused for a counter).
    """
    key = limit_key("ip", address)
    if not _fallback().test(ADMIN_FAILURES, _ADMIN_SCOPE, key):
        return True
    try:
        return not limiter.limiter.test(ADMIN_FAILURES, _ADMIN_SCOPE, key)
    except Exception:  # noqa: BLE001 - unreadable counts must not open the door to guessing
        return True


def note_admin_failure(limiter: Limiter, address: str | None) -> None:
    """Count one wrong admin secret from this address (in this process if the counts fail)."""
    key = limit_key("ip", address)
    try:
        limiter.limiter.hit(ADMIN_FAILURES, _ADMIN_SCOPE, key)
    except Exception:  # noqa: BLE001 - still counted, per process, so guessing stays limited
        _fallback().hit(ADMIN_FAILURES, _ADMIN_SCOPE, key)


def retry_after_seconds(limiter: Limiter, address: str | None) -> int:
    """Seconds until the address may try an admin secret again."""
    key = limit_key("ip", address)
    resets = [_fallback().get_window_stats(ADMIN_FAILURES, _ADMIN_SCOPE, key).reset_time]
    try:
        resets.append(limiter.limiter.get_window_stats(ADMIN_FAILURES, _ADMIN_SCOPE, key)[0])
    except Exception:  # noqa: BLE001 - unreadable: a whole window
        resets.append(time.time() + ADMIN_FAILURES.get_expiry())
    return max(1, round(max(resets) - time.time()))
