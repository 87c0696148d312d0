"""Storage of the human study: participants, trials and survey answers (SQLAlchemy Core).

SQLite in WAL mode is the embedded default; any SQLAlchemy URL works, PostgreSQL is tested.
Trials are unique on ``client_trial_id`` and on ``(participant_id, trial_index)``, so a trial
saved twice (a retry after a lost acknowledgement) is stored once, and a trial can never be
recorded twice under different ids. The browser study and the lab mode write through the same
:class:`Storage`; its :attr:`Storage.journal` is the server's record of what was served to
which browser (:mod:`.journal`). The tables are defined in :mod:`.tables`.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import secrets
import time
from collections.abc import Mapping, Sequence
from typing import Any

import sqlalchemy as sa
import tenacity

from tracktale.errors import ConflictError, StorageUnavailable, TracktaleError
from tracktale.experiment.storage.database import (
    check_integrity,
    create_storage_engine,
    report_unwritable,
    sqlite_path,
)
from tracktale.experiment.storage.groupcommit import GroupCommitter, insert_ignoring_conflicts
from tracktale.experiment.storage.journal import Journal
from tracktale.experiment.storage.reads import StorageReads
from tracktale.experiment.storage.rows import (
    Participant,
    SaveResult,
    clean_header,
    participant_from_row,
)
from tracktale.experiment.storage.tables import (
    add_missing_columns,
    meta,
    metadata,
    participants,
    survey_answers,
    trial_serves,
    trials,
    words,
)
from tracktale.experiment.study.design import LIST_IDS, SessionPlan, assign_list
from tracktale.schema import WordRecord
from tracktale.trial import PARTICIPANT_STATUSES, TrialRecord

__all__ = ["Participant", "SaveResult", "Storage", "clean_header", "hash_token", "metadata", "now"]


_ASSIGNMENT_LOCK = "list_assignment_lock"
_SEPARATE_POOLS = ("simulated", "preview")
"""Sources balanced over the lists among themselves, never counted with real participants."""

# Built once: this runs on every request of a session, and building a statement costs more
# CPU than running it on SQLite.
_BY_TOKEN = sa.select(participants).where(participants.c.token_hash == sa.bindparam("token_hash"))


def now() -> dt.datetime:
    """The current time in UTC (every timestamp is stored in UTC)."""
    return dt.datetime.now(dt.UTC)


def new_participant_id(study_id: str, prolific_pid: str, source: str) -> str:
    """A new participant's id: ``P`` and 16 hex digits.

    Random for people; for simulated participants a digest of the study and their made-up
    Prolific id, so the same simulation seed gives the same ids (and the same report: ids
    order the rows of every table and the seeded bootstrap). A real participant's id never
    derives from their Prolific id, which it stands in for.
    """
    if source != "simulated":
        return "P" + secrets.token_hex(8)
    digest = hashlib.sha256(f"simulated|{study_id}|{prolific_pid}".encode()).hexdigest()
    return "P" + digest[:16]


def hash_token(token: str) -> str:
    """What is stored of a session token: its sha256 (the token itself is never stored)."""
    return hashlib.sha256(token.encode()).hexdigest()


class Storage(StorageReads):
    """The study database.

    Args:
        url: SQLAlchemy URL (``sqlite:///path``, ``postgresql+psycopg://...``).
        create: Create missing tables.
    """

    def __init__(self, url: str, *, create: bool = True) -> None:
        self.url = url
        self.engine = create_storage_engine(url, writable=create)
        if create:
            self._open_for_writing()
        self._trial_writer = GroupCommitter(self.engine, trials, trial_serves)
        self.journal = Journal(self.engine, lambda: now(), self._trial_writer)

    @staticmethod
    def now() -> dt.datetime:
        """The current time in UTC (the clock every server-side time is read from)."""
        return now()

    def _open_for_writing(self) -> None:
        """Check the file and create what is missing, as a server starts.

        A damaged SQLite file is refused. One that cannot be written just now is not: the
        server starts, answers 503 until it can be written, and says why (the database
        module logs the file it cannot write).

        Raises:
            TracktaleError: If the database is damaged or cannot be opened.
        """
        database = sqlite_path(self.engine.url)
        if database is not None and report_unwritable(database) is not None:
            return  # the tables are there (or made at the first start that can write)
        check_integrity(self.engine)
        self._create_tables()
        self.meta_value(_ASSIGNMENT_LOCK, lambda: "0")

    def _create_tables(self) -> None:
        # Several server processes may start at once on a new database; creating a table that
        # another process just created fails, and the next attempt finds it there. Ten
        # attempts, 0.1 s more wait after each failure.
        retrying = tenacity.Retrying(
            stop=tenacity.stop_after_attempt(10),
            wait=tenacity.wait_incrementing(start=0.1, increment=0.1),
            # (a lock held too long by the other process is StorageUnavailable: busy)
            retry=tenacity.retry_if_exception_type((sa.exc.DatabaseError, StorageUnavailable)),
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
        return participant_from_row(row) if row else None

    def participant_by_token(
        self, token: str, connection: sa.Connection | None = None
    ) -> Participant | None:
        """The participant a session token belongs to, if any (on ``connection`` if given)."""
        if connection is None:
            with self.engine.connect() as own:
                return self.participant_by_token(token, own)
        row = connection.execute(_BY_TOKEN, {"token_hash": hash_token(token)}).first()
        return participant_from_row(row) if row else None

    def list_counts(self, study_id: str, *, source: str = "online") -> dict[str, int]:
        """Participants per list who still take part (started or completed).

        Simulated participants and preview sessions are each balanced among themselves and
        never counted with real ones (``source`` names whose counts: ``simulated``,
        ``preview``, or any other source for the real participants).
        """
        with self.engine.connect() as connection:
            return self._list_counts(connection, study_id, source)

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
            source: ``online``, ``lab``, ``simulated`` or ``preview`` (simulated and preview
                sessions are balanced among their own kind: they never take a list from
                the real participants).
            stimulus_sha256: The stimulus set the plan draws from.
            make_plan: Called with the chosen list id; returns the :class:`SessionPlan`.
            user_agent: The browser's user-agent string.
            list_ids: The study's lists, in order (the least-filled one is chosen).

        Returns:
            The participant and their session token (shown once, stored hashed).

        Raises:
            ConflictError: If the Prolific id is already registered (a concurrent start).
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
            counts = self._list_counts(connection, study_id, source)
            plan: SessionPlan = make_plan(assign_list(counts, list_ids))
            row: dict[str, Any] = {
                "participant_id": new_participant_id(study_id, prolific_pid, source),
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
        return participant_from_row(row), token

    def _insert_participant(self, connection: sa.Connection, row: dict[str, Any]) -> None:
        """Store a new participant's row, its first browser and its "started" event.

        Raises:
            ConflictError: If the Prolific id is already registered (a concurrent start).
        """
        try:
            connection.execute(participants.insert().values(**row))
        except sa.exc.IntegrityError:
            raise ConflictError(
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
        connection: sa.Connection, study_id: str, source: str = "online"
    ) -> dict[str, int]:
        column = participants.c.source
        # Sessions that are not data (simulated, preview) count only among their own kind.
        own_pool = column == source if source in _SEPARATE_POOLS else column.notin_(_SEPARATE_POOLS)
        rows = connection.execute(
            sa.select(participants.c.list_id, sa.func.count())
            .where(
                participants.c.study_id == study_id,
                participants.c.status.in_(("started", "completed")),
                own_pool,
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
            # Counted up by the database itself: takeovers at the same moment each get their
            # own number (a read, then a write, handed out the same number to several).
            row = connection.execute(
                participants.update()
                .where(participants.c.participant_id == participant_id)
                .values(
                    token_hash=hash_token(token),
                    browser=sa.func.coalesce(participants.c.browser, 1) + 1,
                    updated_at=now(),
                )
                .returning(participants.c.study_id, participants.c.browser)
            ).first()
            if row is None:
                raise TracktaleError(f"no participant {participant_id!r}")
            browser = row.browser
            self.journal.add_browser(connection, participant_id, hash_token(token), browser, agent)
            self.journal.record_event(
                row.study_id,
                participant_id,
                "takeover",
                {"browser": browser, "user_agent": agent},
                connection=connection,
            )
        return token, browser

    def set_consent(self, participant_id: str, consent: bool) -> bool:
        """Record the consent decision once; declining screens the participant out.

        The first decision wins, whichever tab sent it; the same decision again is accepted.

        Returns:
            ``True`` if this call recorded it (with its ``consent`` event), ``False`` if the
            same decision was already recorded.

        Raises:
            ConflictError: ``decided``, if the other decision is recorded.
        """
        changes: dict[str, Any] = {"consent": consent, "updated_at": now()}
        if not consent:
            changes["status"] = "screened_out"
        with self.engine.begin() as connection:
            decided = connection.execute(
                participants.update()
                .where(
                    participants.c.participant_id == participant_id,
                    participants.c.consent.is_(None),
                )
                .values(**changes)
                .returning(participants.c.study_id)
            ).first()
            if decided is not None:
                self.journal.record_event(
                    decided.study_id,
                    participant_id,
                    "consent",
                    {"consent": consent},
                    connection=connection,
                )
                return True
            stored = connection.execute(
                sa.select(participants.c.consent).where(
                    participants.c.participant_id == participant_id
                )
            ).first()
        if stored is None:
            raise TracktaleError(f"no participant {participant_id!r}")
        if bool(stored.consent) == consent:
            return False
        given = "given" if stored.consent else "declined"
        raise ConflictError(f"consent was already {given} (in another window)", "decided")

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

    def save_trial(self, record: TrialRecord, received_at: dt.datetime | None = None) -> SaveResult:
        """Store a trial once.

        Returns:
            ``stored`` for a new trial, ``duplicate`` when this ``client_trial_id`` is already
            stored for the same participant and position.

        Raises:
            ConflictError: ``already_recorded``, if the id belongs to another participant or
                position, or the position already holds a trial with another id.
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
            raise ConflictError(f"trial id {record.client_trial_id!r} is already used")
        raise ConflictError(f"trial {record.trial_index} is already recorded")

    def save_words(self, records: Sequence[WordRecord]) -> int:
        """Store the words of an answered trial, each once, in one transaction.

        A word already stored for its participant, trial and position is left as it is (the
        trial's answer was sent again), so calling this again with the same words stores
        nothing.

        Returns:
            How many words were new.
        """
        if not records:
            return 0
        rows = [record.to_dict() for record in records]
        statement = insert_ignoring_conflicts(self.engine, words)
        with self.engine.begin() as connection:
            if statement is None:  # neither SQLite nor PostgreSQL: one savepoint a word
                return sum(_insert_unless_present(connection, row) for row in rows)
            before = connection.execute(sa.select(sa.func.count()).select_from(words)).scalar()
            connection.execute(statement, rows)
            after = connection.execute(sa.select(sa.func.count()).select_from(words)).scalar()
        return int(after or 0) - int(before or 0)

    def save_survey(self, participant_id: str, answers: Mapping[str, Any]) -> int:
        """Store the end-of-study answers, all in one transaction.

        The first survey stored wins, whole: sending it again (a retry) is harmless, and
        answers to questions not stored yet complete it; a survey that contradicts it is
        refused (two tabs sending different answers are never mixed).

        Returns:
            How many answers were new.

        Raises:
            ConflictError: ``already_recorded``, if a stored answer differs.
        """
        given = {question: json.loads(json.dumps(answer)) for question, answer in answers.items()}
        moment = now()
        for _attempt in range(2):
            try:
                with self.engine.begin() as connection:
                    stored = self.survey(participant_id, connection).get(participant_id, {})
                    _check_same_survey(stored, given)
                    new = [
                        {
                            "participant_id": participant_id,
                            "question": question,
                            "answer_json": json.dumps(answer),
                            "received_at": moment,
                        }
                        for question, answer in given.items()
                        if question not in stored
                    ]
                    if new:
                        connection.execute(survey_answers.insert(), new)
                    return len(new)
            except sa.exc.IntegrityError:
                continue  # another tab's survey was stored meanwhile: compare with it
        raise ConflictError("the final questions are being saved from another window")

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


def _check_same_survey(stored: Mapping[str, Any], given: Mapping[str, Any]) -> None:
    """Refuse answers that contradict the stored ones (the first survey wins).

    Raises:
        ConflictError: ``already_recorded``, naming the first question answered differently.
    """
    for question, answer in given.items():
        if question in stored and stored[question] != answer:
            raise ConflictError(
                f"the final questions were already answered (differently: {question!r}), "
                "in another window"
            )


def _insert_unless_present(connection: sa.Connection, row: Mapping[str, Any]) -> bool:
    try:
        with connection.begin_nested():
            connection.execute(words.insert(), [row])
    except sa.exc.IntegrityError:
        return False
    return True
