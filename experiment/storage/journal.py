"""The server's own record of a session: trials served, browsers, events, admin sessions.

Every time a trial's content is served, a row says when and to which browser (durably, before
the content leaves the server, so an answer always finds the serve it belongs to). Every
session token issued is kept by its hash with the browser number it stands for; when another
browser takes the session over, the old token is revoked (not forgotten), so the first
browser can be told why it was stopped. Events (a takeover, consent, a status change by the
admin) are kept with their details, and admin sign-ins are server-side sessions that signing
out revokes.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from tracktale.experiment.storage import clock as server_clock
from tracktale.experiment.storage.groupcommit import GroupCommitter
from tracktale.experiment.storage.tables import admin_sessions, browsers, events, trial_serves

ADMIN_SESSION_HOURS = 12
"""An admin sign-in lasts this long (or until signing out)."""


# Built once: these run on every serve and answer, and building a statement costs more CPU
# than running it on SQLite.
_SERVES = (
    sa.select(
        trial_serves.c.trial_index,
        trial_serves.c.served_at,
        trial_serves.c.served_mono_ns,
        trial_serves.c.clock,
    )
    .where(trial_serves.c.participant_id == sa.bindparam("participant_id"))
    .order_by(trial_serves.c.id)
)
_SERVES_AT = _SERVES.where(trial_serves.c.trial_index == sa.bindparam("trial_index"))
_SERVED_COUNTS = (
    sa.select(trial_serves.c.trial_index, sa.func.count())
    .where(trial_serves.c.participant_id == sa.bindparam("participant_id"))
    .group_by(trial_serves.c.trial_index)
)


@dataclass(frozen=True)
class Served:
    """What the server served of one trial position.

    Attributes:
        trial_index: The position.
        times: How many times it was served (more than once: a restart).
        last_served_at: The latest serve (the one an answer belongs to).
        last_mono_ns: The monotonic clock at the latest serve (``None``: not recorded).
        clock: Which monotonic clock that was (:data:`.clock.DOMAIN`).
    """

    trial_index: int
    times: int
    last_served_at: dt.datetime
    last_mono_ns: int | None = None
    clock: str | None = None


@dataclass(frozen=True)
class Event:
    """One recorded event: ``kind`` (``started``, ``consent``, ``takeover``, ``status``, ...)."""

    participant_id: str | None
    kind: str
    at: dt.datetime
    detail: dict[str, Any]


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def _utc(moment: dt.datetime) -> dt.datetime:
    return moment if moment.tzinfo else moment.replace(tzinfo=dt.UTC)


class Journal:
    """The record kept beside the study data.

    Args:
        engine: The study database.
        clock: The current time in UTC.
        writer: The group committer serves are written through (shared with the trials, so
            that a serve and an answer at the same moment share one commit).
    """

    def __init__(
        self, engine: Engine, clock: Callable[[], dt.datetime], writer: GroupCommitter
    ) -> None:
        self.engine = engine
        self.clock = clock
        self._writer = writer

    # serves ------------------------------------------------------------------------------

    def record_serve(self, participant_id: str, trial_index: int, browser: int) -> dt.datetime:
        """Record (durably) that a trial's content is being served; returns the time."""
        moment = self.clock()
        row = {
            "participant_id": participant_id,
            "trial_index": trial_index,
            "served_at": moment,
            "browser": browser,
            "served_mono_ns": server_clock.monotonic_ns(),
            "clock": server_clock.DOMAIN,
        }
        self._writer.insert(row, table=trial_serves.name)
        return moment

    def served(
        self,
        participant_id: str,
        trial_index: int | None = None,
        connection: sa.Connection | None = None,
    ) -> dict[int, Served]:
        """The positions served to a participant (or just ``trial_index``), by position.

        Runs on ``connection`` when given (several reads of one request share it).
        """
        if connection is None:
            with self.engine.connect() as own:
                return self.served(participant_id, trial_index, own)
        if trial_index is None:
            rows = connection.execute(_SERVES, {"participant_id": participant_id})
        else:
            rows = connection.execute(
                _SERVES_AT, {"participant_id": participant_id, "trial_index": trial_index}
            )
        served: dict[int, Served] = {}
        for index, at, mono, name in rows:  # oldest first: the last one stays
            times = served[index].times + 1 if index in served else 1
            served[index] = Served(index, times, _utc(at), mono, name)
        return served

    def served_counts(self, participant_id: str, connection: sa.Connection) -> dict[int, int]:
        """How many times each position was served to a participant (no times read)."""
        rows = connection.execute(_SERVED_COUNTS, {"participant_id": participant_id})
        return dict(rows.all())

    # browsers ----------------------------------------------------------------------------

    def add_browser(
        self,
        connection: sa.Connection,
        participant_id: str,
        token_hash: str,
        browser: int,
        user_agent: str | None,
    ) -> None:
        """Register a token for a browser, revoking every earlier one (in ``connection``)."""
        moment = self.clock()
        connection.execute(
            browsers.update()
            .where(browsers.c.participant_id == participant_id, browsers.c.revoked_at.is_(None))
            .values(revoked_at=moment)
        )
        connection.execute(
            browsers.insert().values(
                token_hash=token_hash,
                participant_id=participant_id,
                browser=browser,
                issued_at=moment,
                revoked_at=None,
                user_agent=user_agent,
            )
        )

    def revoked(self, token_hash: str) -> bool:
        """Whether this token was issued and then replaced by another browser's."""
        with self.engine.connect() as connection:
            revoked_at = connection.execute(
                sa.select(browsers.c.revoked_at).where(browsers.c.token_hash == token_hash)
            ).first()
        return revoked_at is not None and revoked_at[0] is not None

    def browser_counts(
        self, participant_ids: list[str] | None = None, connection: sa.Connection | None = None
    ) -> dict[str, int]:
        """How many browsers held each participant's session (on ``connection`` if given)."""
        query = sa.select(browsers.c.participant_id, sa.func.count()).group_by(
            browsers.c.participant_id
        )
        if participant_ids is not None:
            query = query.where(browsers.c.participant_id.in_(participant_ids))
        if connection is not None:
            return dict(connection.execute(query).all())
        with self.engine.connect() as own:
            return dict(own.execute(query).all())

    # events ------------------------------------------------------------------------------

    def record_event(
        self,
        study_id: str,
        participant_id: str | None,
        kind: str,
        detail: dict[str, Any] | None = None,
        connection: sa.Connection | None = None,
    ) -> None:
        """Keep an event (in ``connection``'s transaction when given)."""
        row = {
            "study_id": study_id,
            "participant_id": participant_id,
            "kind": kind,
            "at": self.clock(),
            "detail_json": json.dumps(detail or {}, sort_keys=True),
        }
        if connection is not None:
            connection.execute(events.insert().values(**row))
            return
        with self.engine.begin() as own:
            own.execute(events.insert().values(**row))

    def events(
        self, participant_id: str | None = None, *, study_id: str | None = None, limit: int = 500
    ) -> list[Event]:
        """Events of a participant or a study, oldest first (the latest ``limit``)."""
        query = sa.select(events).order_by(events.c.id.desc()).limit(limit)
        if participant_id is not None:
            query = query.where(events.c.participant_id == participant_id)
        if study_id is not None:
            query = query.where(events.c.study_id == study_id)
        with self.engine.connect() as connection:
            rows = connection.execute(query).all()
        return [
            Event(row.participant_id, row.kind, _utc(row.at), _detail(row.detail_json))
            for row in reversed(rows)
        ]

    # admin sessions ----------------------------------------------------------------------

    def open_admin_session(self) -> str:
        """Start an admin session; returns its secret id (kept in the signed cookie)."""
        token = secrets.token_urlsafe(24)
        with self.engine.begin() as connection:
            connection.execute(
                admin_sessions.insert().values(
                    session_hash=_digest(token),
                    created_at=self.clock(),
                    revoked_at=None,
                )
            )
        return token

    def admin_session_valid(self, token: str | None) -> bool:
        """Whether an admin session is open: not signed out and not older than its limit."""
        if not token:
            return False
        with self.engine.connect() as connection:
            row = connection.execute(
                sa.select(admin_sessions.c.created_at, admin_sessions.c.revoked_at).where(
                    admin_sessions.c.session_hash == _digest(token)
                )
            ).first()
        if row is None or row.revoked_at is not None:
            return False
        return self.clock() - _utc(row.created_at) < dt.timedelta(hours=ADMIN_SESSION_HOURS)

    def close_admin_session(self, token: str | None) -> None:
        """Revoke an admin session (signing out)."""
        if not token:
            return
        with self.engine.begin() as connection:
            connection.execute(
                admin_sessions.update()
                .where(admin_sessions.c.session_hash == _digest(token))
                .values(revoked_at=self.clock())
            )


def _detail(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except (TypeError, ValueError):
        return {"unreadable": True}
    return value if isinstance(value, dict) else {"value": value}
