"""Storage of the human study: participants, trials and survey answers (SQLAlchemy Core).

SQLite in WAL mode is the embedded default; any SQLAlchemy URL works, PostgreSQL is tested.
Trials are unique on ``client_trial_id`` and on ``(participant_id, trial_index)``, so a trial
saved twice (a retry after a lost acknowledgement) is stored once, and a trial can never be
recorded twice under different ids. The browser study and the lab mode write through the same
:class:`Storage`.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import functools
import hashlib
import json
import secrets
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from tracktale.errors import TracktaleError
from tracktale.experiment.design import SessionPlan, assign_list
from tracktale.experiment.groupcommit import GroupCommitter
from tracktale.trial import PARTICIPANT_STATUSES, ParticipantRecord, TrialRecord

metadata = sa.MetaData()

participants = sa.Table(
    "participants",
    metadata,
    sa.Column("participant_id", sa.String(32), primary_key=True),
    sa.Column("study_id", sa.String(64), nullable=False),
    sa.Column("prolific_pid", sa.String(64), nullable=False),
    sa.Column("prolific_study_id", sa.String(64)),
    sa.Column("prolific_session_id", sa.String(64)),
    sa.Column("source", sa.String(16), nullable=False),
    sa.Column("list_id", sa.String(16), nullable=False),
    sa.Column("session_seed", sa.BigInteger, nullable=False),
    sa.Column("plan_json", sa.Text, nullable=False),
    sa.Column("stimulus_sha256", sa.String(64), nullable=False),
    sa.Column("status", sa.String(16), nullable=False),
    sa.Column("consent", sa.Boolean),
    sa.Column("token_hash", sa.String(64), nullable=False),
    sa.Column("user_agent", sa.String(512)),
    sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("completed_at", sa.DateTime(timezone=True)),
    sa.UniqueConstraint("study_id", "prolific_pid", name="uq_participant_pid"),
)


def _trial_columns() -> list[sa.Column]:
    columns = []
    hints = {
        "response": sa.Text,
        "reading_time_ms": sa.Float,
        "response_time_ms": sa.Float,
        "client_trial_id": sa.String(64),
    }
    for field in dataclasses.fields(TrialRecord):
        kind = hints.get(field.name)
        if kind is None:
            base = str(field.type).split("|")[0].strip()
            kind = {"bool": sa.Boolean, "int": sa.Integer, "float": sa.Float}.get(
                base, sa.String(128)
            )
        nullable = "None" in str(field.type)
        columns.append(sa.Column(field.name, kind, nullable=nullable))
    return columns


trials = sa.Table(
    "trials",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    *_trial_columns(),
    sa.Column("received_at", sa.DateTime(timezone=True), nullable=False),
    sa.UniqueConstraint("client_trial_id", name="uq_trial_client_id"),
    sa.UniqueConstraint("participant_id", "trial_index", name="uq_trial_position"),
    sa.ForeignKeyConstraint(["participant_id"], ["participants.participant_id"]),
)

survey_answers = sa.Table(
    "survey_answers",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("participant_id", sa.String(32), nullable=False),
    sa.Column("question", sa.String(64), nullable=False),
    sa.Column("answer_json", sa.Text, nullable=False),
    sa.Column("received_at", sa.DateTime(timezone=True), nullable=False),
    sa.UniqueConstraint("participant_id", "question", name="uq_survey_answer"),
    sa.ForeignKeyConstraint(["participant_id"], ["participants.participant_id"]),
)

meta = sa.Table(
    "meta",
    metadata,
    sa.Column("key", sa.String(64), primary_key=True),
    sa.Column("value", sa.Text, nullable=False),
)


_ASSIGNMENT_LOCK = "list_assignment_lock"


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
    source: str
    list_id: str
    session_seed: int
    plan: SessionPlan
    stimulus_sha256: str
    status: str
    consent: bool | None
    token_hash: str
    created_at: dt.datetime
    completed_at: dt.datetime | None


@dataclass(frozen=True)
class SaveResult:
    """What happened to a saved trial: ``stored`` (new) or ``duplicate`` (already there)."""

    outcome: str
    client_trial_id: str


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
        self._trial_writer = GroupCommitter(self.engine, trials)

    def _create_tables(self) -> None:
        # Several server processes may start at once on a new database; creating a table that
        # another process just created fails, and the next attempt finds it there.
        for attempt in range(10):
            try:
                metadata.create_all(self.engine)
                return
            except sa.exc.DatabaseError as error:
                if attempt == 9:
                    raise TracktaleError(f"cannot open the study database: {error.orig}") from None
                time.sleep(0.1 * (attempt + 1))

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

    def participant_by_token(self, token: str) -> Participant | None:
        """The participant a session token belongs to, if any."""
        with self.engine.connect() as connection:
            row = connection.execute(
                sa.select(participants).where(participants.c.token_hash == hash_token(token))
            ).first()
        return _participant(row) if row else None

    def list_counts(self, study_id: str) -> dict[str, int]:
        """Participants per list who still take part (started or completed)."""
        with self.engine.connect() as connection:
            return self._list_counts(connection, study_id)

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
            counts = self._list_counts(connection, study_id)
            plan: SessionPlan = make_plan(assign_list(counts))
            row = {
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
                "user_agent": (user_agent or "")[:512] or None,
                "created_at": moment,
                "updated_at": moment,
                "completed_at": None,
            }
            try:
                connection.execute(participants.insert().values(**row))
            except sa.exc.IntegrityError:
                raise TracktaleError(
                    f"participant {prolific_pid!r} is already registered"
                ) from None
        return _participant(row), token

    @staticmethod
    def _list_counts(connection: sa.Connection, study_id: str) -> dict[str, int]:
        rows = connection.execute(
            sa.select(participants.c.list_id, sa.func.count())
            .where(
                participants.c.study_id == study_id,
                participants.c.status.in_(("started", "completed")),
            )
            .group_by(participants.c.list_id)
        ).all()
        return {list_id: count for list_id, count in rows}

    def new_token(self, participant_id: str) -> str:
        """Issue a fresh session token (a participant resuming in another browser)."""
        token = secrets.token_urlsafe(24)
        self._update(participant_id, token_hash=hash_token(token))
        return token

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

    def save_trial(self, record: TrialRecord) -> SaveResult:
        """Store a trial once.

        Returns:
            ``stored`` for a new trial, ``duplicate`` when this ``client_trial_id`` is already
            stored for the same participant and position.

        Raises:
            TracktaleError: If the id belongs to another participant or position, or the
                position already holds a trial with another id.
        """
        row = {**record.to_dict(), "received_at": now()}
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
            return [
                TrialRecord(**dict(zip(names, row, strict=True)))
                for row in connection.execute(query)
            ]

    def trial_indices(self, participant_id: str) -> list[int]:
        """The positions a participant has answered, ascending."""
        with self.engine.connect() as connection:
            rows = connection.execute(
                sa.select(trials.c.trial_index)
                .where(trials.c.participant_id == participant_id)
                .order_by(trials.c.trial_index)
            )
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
                yield TrialRecord(**dict(zip(names, row, strict=True)))

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
                answers.setdefault(pid, {})[question] = json.loads(answer)
        return answers

    def participant_records(self, study_id: str | None = None) -> list[ParticipantRecord]:
        """Participants as the analysis reads them (survey answers joined in)."""
        answers = self.survey()
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
    )


@functools.lru_cache(maxsize=4096)
def _parse_plan(plan_json: str) -> SessionPlan:
    # Plans never change once stored, and every write looks one up: parse each once.
    return SessionPlan.from_dict(json.loads(plan_json))


def _utc(moment: dt.datetime) -> dt.datetime:
    # SQLite returns naive datetimes; everything was stored in UTC.
    return moment if moment.tzinfo else moment.replace(tzinfo=dt.UTC)
