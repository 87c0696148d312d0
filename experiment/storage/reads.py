"""Reading the study database: participants, trials and survey answers, or all in one snapshot.

:class:`StorageReads` is the reading half of :class:`~tracktale.experiment.storage.Storage`.
Every read takes an optional connection, so that several reads can share one (a request that
reads several things) or one transaction (:meth:`StorageReads.snapshot`: an export, whose
tables must agree with each other while participants keep writing).
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
from collections.abc import Iterator
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from tracktale.experiment.storage.journal import Journal
from tracktale.experiment.storage.rows import (
    Participant,
    answer_from_json,
    participant_from_row,
    trial_from_row,
    utc,
)
from tracktale.experiment.storage.tables import participants, survey_answers, trials, words
from tracktale.schema import WordRecord
from tracktale.trial import ParticipantRecord, TrialRecord

__all__ = ["StorageReads"]

# Built once: these run on every request of a session, and building a statement costs more
# CPU than running it on SQLite.
_TRIAL_INDICES = (
    sa.select(trials.c.trial_index)
    .where(trials.c.participant_id == sa.bindparam("participant_id"))
    .order_by(trials.c.trial_index)
)
_ANSWERED_BEFORE = sa.select(sa.func.count()).where(
    trials.c.participant_id == sa.bindparam("participant_id"),
    trials.c.trial_index < sa.bindparam("trial_index"),
)
_ANSWER_TIME = sa.select(trials.c.received_at, trials.c.queued_ms).where(
    trials.c.participant_id == sa.bindparam("participant_id"),
    trials.c.trial_index == sa.bindparam("trial_index"),
)


class StorageReads:
    """The reads of the study database (a base of :class:`.storage.Storage`)."""

    engine: Engine
    journal: Journal

    def reading(self) -> sa.Connection:
        """A connection for several reads of one request (use it as a context manager)."""
        return self.engine.connect()

    @contextlib.contextmanager
    def snapshot(self) -> Iterator[sa.Connection]:
        """One transaction in which every read sees the database as of one moment.

        For reads that must agree with each other (an export: the participants and their
        trials) while participants keep writing. PostgreSQL: ``REPEATABLE READ``, read only;
        SQLite: a read transaction, which in WAL mode sees the database as of its first read
        while writers go on (Python's sqlite3 opens none for reads by itself).
        """
        with self.engine.connect() as connection:
            dialect = self.engine.dialect.name
            if dialect == "postgresql":
                connection.execution_options(
                    isolation_level="REPEATABLE READ", postgresql_readonly=True
                )
            with connection.begin():
                if dialect == "sqlite":
                    connection.exec_driver_sql("BEGIN")
                yield connection

    @contextlib.contextmanager
    def _on(self, connection: sa.Connection | None) -> Iterator[sa.Connection]:
        """``connection`` if given (a snapshot), else a connection of its own."""
        if connection is not None:
            yield connection
            return
        with self.engine.connect() as own:
            yield own

    def participants(
        self, study_id: str | None = None, connection: sa.Connection | None = None
    ) -> list[Participant]:
        """Every participant (of one study), oldest first (on ``connection`` if given)."""
        query = sa.select(participants).order_by(participants.c.created_at)
        if study_id is not None:
            query = query.where(participants.c.study_id == study_id)
        with self._on(connection) as reading:
            return [participant_from_row(row) for row in reading.execute(query)]

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
            return [trial_from_row(names, row) for row in connection.execute(query)]

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

    def answer_time(
        self, participant_id: str, trial_index: int, connection: sa.Connection
    ) -> tuple[dt.datetime, float] | None:
        """When the answer at a position arrived, and how long it waited in the outbox before.

        The wait is in ms (0 when the page did not say); ``None`` if there is no answer there.
        """
        row = connection.execute(
            _ANSWER_TIME, {"participant_id": participant_id, "trial_index": trial_index}
        ).first()
        return None if row is None else (utc(row.received_at), float(row.queued_ms or 0.0))

    def trial_indices(
        self, participant_id: str, connection: sa.Connection | None = None
    ) -> list[int]:
        """The positions a participant has answered, ascending."""
        if connection is None:
            with self.engine.connect() as own:
                return self.trial_indices(participant_id, own)
        rows = connection.execute(_TRIAL_INDICES, {"participant_id": participant_id})
        return [index for (index,) in rows]

    def trials(
        self, study_id: str | None = None, connection: sa.Connection | None = None
    ) -> Iterator[TrialRecord]:
        """Every stored trial as a record, by participant and position (on ``connection``)."""
        names = [field.name for field in dataclasses.fields(TrialRecord)]
        query = sa.select(*(trials.c[name] for name in names)).order_by(
            trials.c.participant_id, trials.c.trial_index
        )
        if study_id is not None:
            query = query.where(trials.c.study_id == study_id)
        with self._on(connection) as reading:
            for row in reading.execute(query):
                yield trial_from_row(names, row)

    def words(
        self, study_id: str | None = None, connection: sa.Connection | None = None
    ) -> Iterator[WordRecord]:
        """Every stored word, by participant, trial and position (on ``connection``)."""
        names = [field.name for field in dataclasses.fields(WordRecord)]
        query = sa.select(*(words.c[name] for name in names)).order_by(
            words.c.participant_id, words.c.trial_index, words.c.word_index
        )
        if study_id is not None:
            query = query.where(words.c.study_id == study_id)
        with self._on(connection) as reading:
            for row in reading.execute(query):
                yield WordRecord(**dict(zip(names, row, strict=True)))

    def trial_counts(self, study_id: str | None = None) -> dict[str, int]:
        """Stored trials per participant."""
        query = sa.select(trials.c.participant_id, sa.func.count()).group_by(
            trials.c.participant_id
        )
        if study_id is not None:
            query = query.where(trials.c.study_id == study_id)
        with self.engine.connect() as connection:
            return {pid: count for pid, count in connection.execute(query)}

    def survey(
        self, participant_id: str | None = None, connection: sa.Connection | None = None
    ) -> dict[str, dict[str, Any]]:
        """Survey answers by participant, then question (on ``connection`` if given)."""
        query = sa.select(
            survey_answers.c.participant_id, survey_answers.c.question, survey_answers.c.answer_json
        )
        if participant_id is not None:
            query = query.where(survey_answers.c.participant_id == participant_id)
        answers: dict[str, dict[str, Any]] = {}
        with self._on(connection) as reading:
            for pid, question, answer in reading.execute(query):
                answers.setdefault(pid, {})[question] = answer_from_json(answer)
        return answers

    def participant_records(
        self, study_id: str | None = None, connection: sa.Connection | None = None
    ) -> list[ParticipantRecord]:
        """Participants as the analysis reads them (survey answers joined in).

        Pass a :meth:`snapshot` as ``connection`` to read them consistently with other tables.
        """
        with self._on(connection) as reading:
            answers = self.survey(connection=reading)
            browser_counts = self.journal.browser_counts(connection=reading)
            people = self.participants(study_id, reading)
        records = []
        for person in people:
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
