"""Storage of the human study: participants, trials and survey answers (SQLAlchemy Core).

SQLite in WAL mode is the embedded default; any SQLAlchemy URL works, PostgreSQL is tested.
Trials are unique on ``client_trial_id`` and on ``(participant_id, trial_index)``, so a trial
saved twice (a retry after a lost acknowledgement) is stored once, and a trial can never be
recorded twice under different ids. The browser study and the lab mode write through the same
:class:`Storage`; its :attr:`Storage.journal` is the server's record of what was served to
which browser (:mod:`.journal`). The tables are defined in :mod:`.tables`.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import functools
import hashlib
import json
import secrets
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa
import tenacity

from tracktale.errors import TracktaleError
from tracktale.experiment.storage.database import create_storage_engine
from tracktale.experiment.storage.groupcommit import GroupCommitter
from tracktale.experiment.storage.journal import Journal
from tracktale.experiment.storage.tables import (
    add_missing_columns,
    meta,
    metadata,
    participants,
    survey_answers,
    trial_serves,
    trials,
)
from tracktale.experiment.study.design import LIST_IDS, SessionPlan, assign_list
from tracktale.schema.records import ParticipantStatus, Source
from tracktale.trial import PARTICIPANT_STATUSES, ParticipantRecord, TrialRecord

__all__ = ["Participant", "SaveResult", "Storage", "hash_token", "metadata", "now"]

_ASSIGNMENT_LOCK = "list_assignment_lock"

# Built once: these run on every request of a session, and building a statement costs more
# CPU than running it on SQLite.
_BY_TOKEN = sa.select(participants).where(participants.c.token_hash == sa.bindparam("token_hash"))
_TRIAL_INDICES = (
    sa.select(trials.c.trial_index)
    .where(trials.c.participant_id == sa.bindparam("participant_id"))
    .order_by(trials.c.trial_index)
)
_ANSWERED_BEFORE = sa.select(sa.func.count()).where(
    trials.c.participant_id == sa.bindparam("participant_id"),
    trials.c.trial_index < sa.bindparam("trial_index"),
)


def now() -> dt.datetime:
    """The current time in UTC (every timestamp is stored in UTC)."""
    return dt.datetime.now(dt.UTC)


def hash_token(token: str) -> str:
    """What is stored of a session token: its sha256 (the token itself is never stored)."""
    return hashlib.sha256(token.encode()).hexdigest()


@dataclass(frozen=True)
class Participant:
    """A participant row as the server uses it."""

    participant_id: str
    study_id: str
    prolific_pid: str
    prolific_study_id: str | None
    prolific_session_id: str | None
    source: Source
    list_id: str
    session_seed: int
    plan: SessionPlan
    stimulus_sha256: str
    status: ParticipantStatus
    consent: bool | None
    token_hash: str
    created_at: dt.datetime
    completed_at: dt.datetime | None
    browser: int = 1
    """The browser now holding the session (1, then 2 after a takeover, ...)."""


@dataclass(frozen=True)
class SaveResult:
    """What happened to a saved trial: ``stored`` (new) or ``duplicate`` (already there)."""

    outcome: str
    client_trial_id: str


class Storage:
    """The study database.

    Args:
        url: SQLAlchemy URL (``sqlite:///path``, ``postgresql+psycopg://...``).
        create: Create missing tables.
    """

    def __init__(self, url: str, *, create: bool = True) -> None:
        self.url = url
        self.engine = create_storage_engine(url)
        if create:
            self._create_tables()
            self.meta_value(_ASSIGNMENT_LOCK, lambda: "0")
        self._trial_writer = GroupCommitter(self.engine, trials, trial_serves)
        self.journal = Journal(self.engine, lambda: now(), self._trial_writer)

    @staticmethod
    def now() -> dt.datetime:
        """The current time in UTC (the clock every server-side time is read from)."""
        return now()

    def _create_tables(self) -> None:
        # Several server processes may start at once on a new database; creating a table that
        # another process just created fails, and the next attempt finds it there. Ten
        # attempts, 0.1 s more wait after each failure.
        retrying = tenacity.Retrying(
            stop=tenacity.stop_after_attempt(10),
            wait=tenacity.wait_incrementing(start=0.1, increment=0.1),
            retry=tenacity.retry_if_exception_type(sa.exc.DatabaseError),
            sleep=lambda seconds: time.sleep(seconds),
            reraise=True,
        )
        try:
            for attempt in retrying:
                with attempt:
                    metadata.create_all(self.engine)
                    add_missing_columns(self.engine)
        except sa.exc.DatabaseError as error:
            raise TracktaleError(f"cannot open the study database: {error.orig}") from None

    def close(self) -> None:
        """Release the connections."""
        self.engine.dispose()

    # participants ------------------------------------------------------------------------

    def get_participant(self, study_id: str, prolific_pid: str) -> Participant | None:
        """The participant with this Prolific id in this study, if any."""
        with self.engine.connect() as connection:
            row = connection.execute(
                sa.select(participants).where(
                    participants.c.study_id == study_id,
                    participants.c.prolific_pid == prolific_pid,
                )
            ).first()
        return _participant(row) if row else None

    def participant_by_token(
        self, token: str, connection: sa.Connection | None = None
    ) -> Participant | None:
        """The participant a session token belongs to, if any (on ``connection`` if given)."""
        if connection is None:
            with self.engine.connect() as own:
                return self.participant_by_token(token, own)
        row = connection.execute(_BY_TOKEN, {"token_hash": hash_token(token)}).first()
        return _participant(row) if row else None

    def reading(self) -> sa.Connection:
        """A connection for several reads of one request (use it as a context manager)."""
        return self.engine.connect()

    def list_counts(self, study_id: str, *, simulated: bool = False) -> dict[str, int]:
        """Participants per list who still take part (started or completed).

        Simulated participants are balanced among themselves and never counted with real
        ones (``simulated=True`` gives their counts).
        """
        with self.engine.connect() as connection:
            return self._list_counts(connection, study_id, simulated)

    def create_participant(
        self,
        *,
        study_id: str,
        prolific_pid: str,
        prolific_study_id: str | None,
        prolific_session_id: str | None,
        source: str,
        stimulus_sha256: str,
        make_plan: Any,
        user_agent: str | None,
        list_ids: Sequence[str] = LIST_IDS,
    ) -> tuple[Participant, str]:
        """Register a new participant on the least-filled list.

        Args:
            study_id: The study.
            prolific_pid: Prolific's participant id.
            prolific_study_id: Prolific's study id, if given.
            prolific_session_id: Prolific's session id, if given.
            source: ``online``, ``lab`` or ``simulated``.
            stimulus_sha256: The stimulus set the plan draws from.
            make_plan: Called with the chosen list id; returns the :class:`SessionPlan`.
            user_agent: The browser's user-agent string.
            list_ids: The study's lists, in order (the least-filled one is chosen).

        Returns:
            The participant and their session token (shown once, stored hashed).

        Raises:
            TracktaleError: If the Prolific id is already registered (a concurrent start).
        """
        token = secrets.token_urlsafe(24)
        moment = now()
        with self.engine.begin() as connection:
            # Taking the lock row first serialises list assignment (a row lock in PostgreSQL,
            # the write lock in SQLite), so people who start at the same moment are still
            # spread evenly over the lists.
            connection.execute(
                meta.update().where(meta.c.key == _ASSIGNMENT_LOCK).values(value=meta.c.value)
            )
            counts = self._list_counts(connection, study_id, source == "simulated")
            plan: SessionPlan = make_plan(assign_list(counts, list_ids))
            row: dict[str, Any] = {
                "participant_id": "P" + secrets.token_hex(8),
                "study_id": study_id,
                "prolific_pid": prolific_pid,
                "prolific_study_id": prolific_study_id,
                "prolific_session_id": prolific_session_id,
                "source": source,
                "list_id": plan.list_id,
                "session_seed": plan.session_seed,
                "plan_json": json.dumps(plan.to_dict(), separators=(",", ":")),
                "stimulus_sha256": stimulus_sha256,
                "status": "started",
                "consent": None,
                "token_hash": hash_token(token),
                "user_agent": clean_header(user_agent),
                "created_at": moment,
                "updated_at": moment,
                "completed_at": None,
                "browser": 1,
            }
            self._insert_participant(connection, row)
        return _participant(row), token

    def _insert_participant(self, connection: sa.Connection, row: dict[str, Any]) -> None:
        """Store a new participant's row, its first browser and its "started" event.

        Raises:
            TracktaleError: If the Prolific id is already registered (a concurrent start).
        """
        try:
            connection.execute(participants.insert().values(**row))
        except sa.exc.IntegrityError:
            raise TracktaleError(
                f"participant {row['prolific_pid']!r} is already registered"
            ) from None
        self.journal.add_browser(
            connection, row["participant_id"], row["token_hash"], 1, row["user_agent"]
        )
        self.journal.record_event(
            row["study_id"],
            row["participant_id"],
            "started",
            {"source": row["source"], "list_id": row["list_id"], "user_agent": row["user_agent"]},
            connection=connection,
        )

    @staticmethod
    def _list_counts(
        connection: sa.Connection, study_id: str, simulated: bool = False
    ) -> dict[str, int]:
        source = participants.c.source
        rows = connection.execute(
            sa.select(participants.c.list_id, sa.func.count())
            .where(
                participants.c.study_id == study_id,
                participants.c.status.in_(("started", "completed")),
                source == "simulated" if simulated else source != "simulated",
            )
            .group_by(participants.c.list_id)
        ).all()
        return {list_id: count for list_id, count in rows}

    def new_token(self, participant_id: str, user_agent: str | None = None) -> tuple[str, int]:
        """Issue a fresh session token to another browser, which takes the session over.

        The earlier token is revoked (and remembered as such) and the takeover is recorded.

        Returns:
            The token and the new browser's number.
        """
        token = secrets.token_urlsafe(24)
        agent = clean_header(user_agent)
        with self.engine.begin() as connection:
            row = connection.execute(
                sa.select(participants.c.study_id, participants.c.browser).where(
                    participants.c.participant_id == participant_id
                )
            ).first()
            if row is None:
                raise TracktaleError(f"no participant {participant_id!r}")
            browser = (row.browser or 1) + 1
            connection.execute(
                participants.update()
                .where(participants.c.participant_id == participant_id)
                .values(token_hash=hash_token(token), browser=browser, updated_at=now())
            )
            self.journal.add_browser(connection, participant_id, hash_token(token), browser, agent)
            self.journal.record_event(
                row.study_id,
                participant_id,
                "takeover",
                {"browser": browser, "user_agent": agent},
                connection=connection,
            )
        return token, browser

    def set_consent(self, participant_id: str, consent: bool) -> None:
        """Record the consent decision; declining screens the participant out."""
        changes: dict[str, Any] = {"consent": consent}
        if not consent:
            changes["status"] = "screened_out"
        self._update(participant_id, **changes)

    def set_status(self, participant_id: str, status: str) -> None:
        """Change a participant's status (e.g. ``returned`` after a return on Prolific)."""
        if status not in PARTICIPANT_STATUSES:
            raise TracktaleError(f"unknown participant status {status!r}")
        changes: dict[str, Any] = {"status": status}
        if status == "completed":
            changes["completed_at"] = now()
        self._update(participant_id, **changes)

    def _update(self, participant_id: str, **changes: Any) -> None:
        with self.engine.begin() as connection:
            result = connection.execute(
                participants.update()
                .where(participants.c.participant_id == participant_id)
                .values(**changes, updated_at=now())
            )
        if result.rowcount != 1:
            raise TracktaleError(f"no participant {participant_id!r}")

    def participants(self, study_id: str | None = None) -> list[Participant]:
        """Every participant (of one study), oldest first."""
        query = sa.select(participants).order_by(participants.c.created_at)
        if study_id is not None:
            query = query.where(participants.c.study_id == study_id)
        with self.engine.connect() as connection:
            return [_participant(row) for row in connection.execute(query)]

    # trials ------------------------------------------------------------------------------

    def save_trial(self, record: TrialRecord, received_at: dt.datetime | None = None) -> SaveResult:
        """Store a trial once.

        Returns:
            ``stored`` for a new trial, ``duplicate`` when this ``client_trial_id`` is already
            stored for the same participant and position.

        Raises:
            TracktaleError: If the id belongs to another participant or position, or the
                position already holds a trial with another id.
        """
        row = {**record.to_dict(), "received_at": received_at or now()}
        if self._trial_writer.insert(row):
            return SaveResult("stored", record.client_trial_id)
        with self.engine.connect() as connection:
            existing = connection.execute(
                sa.select(trials.c.participant_id, trials.c.trial_index).where(
                    trials.c.client_trial_id == record.client_trial_id
                )
            ).first()
        if existing is not None and tuple(existing) == (record.participant_id, record.trial_index):
            return SaveResult("duplicate", record.client_trial_id)
        if existing is not None:
            raise TracktaleError(f"trial id {record.client_trial_id!r} is already used")
        raise TracktaleError(f"trial {record.trial_index} is already recorded")

    def recent_trials(self, study_id: str, limit: int = 50) -> list[TrialRecord]:
        """The last trials received, newest first."""
        names = [field.name for field in dataclasses.fields(TrialRecord)]
        query = (
            sa.select(*(trials.c[name] for name in names))
            .where(trials.c.study_id == study_id)
            .order_by(trials.c.id.desc())
            .limit(limit)
        )
        with self.engine.connect() as connection:
            return [_trial(names, row) for row in connection.execute(query)]

    def answered_before(
        self, participant_id: str, trial_index: int, connection: sa.Connection | None = None
    ) -> int:
        """How many of the positions before ``trial_index`` hold an answer."""
        if connection is None:
            with self.engine.connect() as own:
                return self.answered_before(participant_id, trial_index, own)
        return connection.execute(
            _ANSWERED_BEFORE, {"participant_id": participant_id, "trial_index": trial_index}
        ).scalar_one()

    def trial_indices(
        self, participant_id: str, connection: sa.Connection | None = None
    ) -> list[int]:
        """The positions a participant has answered, ascending."""
        if connection is None:
            with self.engine.connect() as own:
                return self.trial_indices(participant_id, own)
        rows = connection.execute(_TRIAL_INDICES, {"participant_id": participant_id})
        return [index for (index,) in rows]

    def trials(self, study_id: str | None = None) -> Iterator[TrialRecord]:
        """Every stored trial as a record, by participant and position."""
        names = [field.name for field in dataclasses.fields(TrialRecord)]
        query = sa.select(*(trials.c[name] for name in names)).order_by(
            trials.c.participant_id, trials.c.trial_index
        )
        if study_id is not None:
            query = query.where(trials.c.study_id == study_id)
        with self.engine.connect() as connection:
            for row in connection.execute(query):
                yield _trial(names, row)

    def trial_counts(self, study_id: str | None = None) -> dict[str, int]:
        """Stored trials per participant."""
        query = sa.select(trials.c.participant_id, sa.func.count()).group_by(
            trials.c.participant_id
        )
        if study_id is not None:
            query = query.where(trials.c.study_id == study_id)
        with self.engine.connect() as connection:
            return {pid: count for pid, count in connection.execute(query)}

    # survey ------------------------------------------------------------------------------

    def save_survey(self, participant_id: str, answers: Mapping[str, Any]) -> int:
        """Store survey answers; an answer already given is kept (saving again is harmless).

        Returns:
            How many answers were new.
        """
        stored = 0
        moment = now()
        for question, answer in answers.items():
            row = {
                "participant_id": participant_id,
                "question": question,
                "answer_json": json.dumps(answer),
                "received_at": moment,
            }
            try:
                with self.engine.begin() as connection:
                    connection.execute(survey_answers.insert().values(**row))
                stored += 1
            except sa.exc.IntegrityError:
                continue
        return stored

    def survey(self, participant_id: str | None = None) -> dict[str, dict[str, Any]]:
        """Survey answers by participant, then question."""
        query = sa.select(
            survey_answers.c.participant_id, survey_answers.c.question, survey_answers.c.answer_json
        )
        if participant_id is not None:
            query = query.where(survey_answers.c.participant_id == participant_id)
        answers: dict[str, dict[str, Any]] = {}
        with self.engine.connect() as connection:
            for pid, question, answer in connection.execute(query):
                answers.setdefault(pid, {})[question] = _answer(answer)
        return answers

    def participant_records(self, study_id: str | None = None) -> list[ParticipantRecord]:
        """Participants as the analysis reads them (survey answers joined in)."""
        answers = self.survey()
        browser_counts = self.journal.browser_counts()
        records = []
        for person in self.participants(study_id):
            given = answers.get(person.participant_id, {})
            records.append(
                ParticipantRecord(
                    participant_id=person.participant_id,
                    study_id=person.study_id,
                    source=person.source,
                    list_id=person.list_id,
                    status=person.status,
                    attentive=given.get("attentive"),
                    no_ai_assistance=given.get("no_ai_assistance"),
                    age=given.get("age"),
                    gender=given.get("gender"),
                    native_language=given.get("native_language"),
                    session_seed=person.session_seed,
                    stimulus_sha256=person.stimulus_sha256,
                    started_at=person.created_at.isoformat(),
                    completed_at=person.completed_at.isoformat() if person.completed_at else None,
                    browsers=browser_counts.get(person.participant_id, person.browser),
                )
            )
        return records

    # meta --------------------------------------------------------------------------------

    def meta_value(self, key: str, make: Any) -> str:
        """A value kept in the database, made by ``make()`` on first use (e.g. a salt)."""
        with self.engine.connect() as connection:
            value = connection.execute(sa.select(meta.c.value).where(meta.c.key == key)).scalar()
        if value is not None:
            return value
        try:
            with self.engine.begin() as connection:
                connection.execute(meta.insert().values(key=key, value=make()))
        except sa.exc.IntegrityError:
            pass  # another process made it first; use theirs
        with self.engine.connect() as connection:
            return connection.execute(sa.select(meta.c.value).where(meta.c.key == key)).scalar_one()

    def get_meta(self, key: str) -> str | None:
        """A value kept in the database, or ``None``."""
        with self.engine.connect() as connection:
            return connection.execute(sa.select(meta.c.value).where(meta.c.key == key)).scalar()

    def put_meta(self, key: str, value: str) -> None:
        """Keep ``value`` under ``key``, replacing what was there (committed durably)."""
        with self.engine.begin() as connection:
            updated = connection.execute(meta.update().where(meta.c.key == key).values(value=value))
            if updated.rowcount == 0:
                connection.execute(meta.insert().values(key=key, value=value))


def _participant(row: Any) -> Participant:
    data = dict(row._mapping) if hasattr(row, "_mapping") else dict(row)
    return Participant(
        participant_id=data["participant_id"],
        study_id=data["study_id"],
        prolific_pid=data["prolific_pid"],
        prolific_study_id=data["prolific_study_id"],
        prolific_session_id=data["prolific_session_id"],
        source=data["source"],
        list_id=data["list_id"],
        session_seed=data["session_seed"],
        plan=_parse_plan(data["plan_json"]),
        stimulus_sha256=data["stimulus_sha256"],
        status=data["status"],
        consent=data["consent"],
        token_hash=data["token_hash"],
        created_at=_utc(data["created_at"]),
        completed_at=_utc(data["completed_at"]) if data["completed_at"] else None,
        browser=data.get("browser") or 1,
    )


def _trial(names: list[str], row: Any) -> TrialRecord:
    data = dict(zip(names, row, strict=True))
    # Rows stored before a field existed read back as its default.
    if data.get("flags") is None:
        data["flags"] = ""
    if data.get("restarts") is None:
        data["restarts"] = 0
    return TrialRecord(**data)


def _answer(answer_json: str) -> Any:
    # An answer that is not JSON (a database edited by hand) is kept as its text.
    try:
        return json.loads(answer_json)
    except (TypeError, ValueError):
        return answer_json


def clean_header(value: str | None, limit: int = 512) -> str | None:
    """A request header as stored: control characters dropped, at most ``limit`` characters."""
    if not value:
        return None
    cleaned = "".join(char for char in value if char.isprintable())
    return cleaned[:limit] or None


@functools.lru_cache(maxsize=4096)
def _parse_plan(plan_json: str) -> SessionPlan:
    # Plans never change once stored, and every write looks one up: parse each once.
    return SessionPlan.from_dict(json.loads(plan_json))


def _utc(moment: dt.datetime) -> dt.datetime:
    # SQLite returns naive datetimes; everything was stored in UTC.
    return moment if moment.tzinfo else moment.replace(tzinfo=dt.UTC)
