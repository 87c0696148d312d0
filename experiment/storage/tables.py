"""The study database's tables (SQLAlchemy Core) and the upgrade of older databases.

``participants``, ``trials`` (exactly the :class:`~tracktale.trial.TrialRecord` fields,
derived from its declaration, plus ``received_at``), ``words`` (the words of stories read
word by word, :class:`~tracktale.schema.WordRecord`), ``survey_answers`` and ``meta`` hold the
data; ``trial_serves`` (one row per time a trial's content was served), ``browsers`` (every
session token issued, and when another browser took over), ``events`` (takeovers, status
changes, reopenings) and ``admin_sessions`` are the server's own record of what happened.
Columns added since a database was created are added to it when it is opened (all of them
nullable), so an older study database keeps working.
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Engine
from sqlalchemy.types import TypeDecorator

from tracktale.schema import TrialRecord, WordRecord, columns

metadata = sa.MetaData()

_NUL_MARK = "\\tracktale-nul:"


class FreeText(TypeDecorator):
    """Text that may hold NUL characters, stored exactly on every database.

    PostgreSQL's text type cannot hold NUL; there (only), a value with a NUL, or one that
    starts with the marker, is stored escaped behind a marker and read back exactly.
    """

    impl = sa.Text
    cache_ok = True

    def process_bind_param(self, value: Any, dialect: Any) -> Any:
        """The value as written to the database."""
        if value is None or dialect.name != "postgresql":
            return value
        if "\x00" not in value and not value.startswith(_NUL_MARK):
            return value
        return _NUL_MARK + value.replace("\\", "\\\\").replace("\x00", "\\0")

    def process_result_value(self, value: Any, dialect: Any) -> Any:
        """The value as read back."""
        if value is None or dialect.name != "postgresql" or not value.startswith(_NUL_MARK):
            return value
        body, out, index = value[len(_NUL_MARK) :], [], 0
        while index < len(body):
            char = body[index]
            if char == "\\" and index + 1 < len(body):
                out.append("\x00" if body[index + 1] == "0" else body[index + 1])
                index += 2
            else:
                out.append(char)
                index += 1
        return "".join(out)


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
    sa.Column("token_hash", sa.String(64), nullable=False, index=True),
    sa.Column("user_agent", sa.String(512)),
    sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("completed_at", sa.DateTime(timezone=True)),
    sa.Column("browser", sa.Integer),
    sa.UniqueConstraint("study_id", "prolific_pid", name="uq_participant_pid"),
)


_SQL_TYPES = {bool: sa.Boolean, int: sa.Integer, float: sa.Float}


def record_columns(record: type) -> list[sa.Column]:
    """The columns of a record declared in :mod:`tracktale.schema`, derived from its fields.

    Text is ``String`` of the declared length (128 by default) or :class:`FreeText`; fields
    with a default came after the first release and are nullable, so that
    :func:`add_missing_columns` can add them to an existing database.
    """
    result = []
    for column in columns(record):
        if column.free_text:
            kind: Any = FreeText
        elif column.kind is str:
            kind = sa.String(column.length or 128)
        else:
            kind = _SQL_TYPES[column.kind]
        result.append(sa.Column(column.name, kind, nullable=column.nullable))
    return result


def trials_table(target: sa.MetaData, record: type = TrialRecord) -> sa.Table:
    """The ``trials`` table: the record's columns, plus an id and when the trial arrived."""
    return sa.Table(
        "trials",
        target,
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        *record_columns(record),
        sa.Column("received_at", sa.DateTime(timezone=True), nullable=False),
        sa.UniqueConstraint("client_trial_id", name="uq_trial_client_id"),
        sa.UniqueConstraint("participant_id", "trial_index", name="uq_trial_position"),
        sa.ForeignKeyConstraint(["participant_id"], ["participants.participant_id"]),
    )


trials = trials_table(metadata)

words = sa.Table(
    "words",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    *record_columns(WordRecord),
    # One record per participant, trial and word: a retried answer stores its words once.
    sa.UniqueConstraint("participant_id", "trial_index", "word_index", name="uq_word_position"),
    sa.ForeignKeyConstraint(["participant_id"], ["participants.participant_id"]),
)
"""One row per word read word by word (:class:`~tracktale.schema.WordRecord`)."""

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

trial_serves = sa.Table(
    "trial_serves",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("participant_id", sa.String(32), nullable=False),
    sa.Column("trial_index", sa.Integer, nullable=False),
    sa.Column("served_at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("browser", sa.Integer, nullable=False),
    # The monotonic clock at the serve, and which clock that was (.clock): elapsed times are
    # measured on it when the answer reaches a process that reads the same clock.
    sa.Column("served_mono_ns", sa.BigInteger),
    sa.Column("clock", sa.String(96)),
    sa.Index("ix_trial_serves_position", "participant_id", "trial_index"),
    sa.ForeignKeyConstraint(["participant_id"], ["participants.participant_id"]),
)

browsers = sa.Table(
    "browsers",
    metadata,
    sa.Column("token_hash", sa.String(64), primary_key=True),
    sa.Column("participant_id", sa.String(32), nullable=False, index=True),
    sa.Column("browser", sa.Integer, nullable=False),
    sa.Column("issued_at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("revoked_at", sa.DateTime(timezone=True)),
    sa.Column("user_agent", sa.String(512)),
)

events = sa.Table(
    "events",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("study_id", sa.String(64), nullable=False, index=True),
    sa.Column("participant_id", sa.String(32), index=True),
    sa.Column("kind", sa.String(32), nullable=False),
    sa.Column("at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("detail_json", sa.Text, nullable=False),
)

admin_sessions = sa.Table(
    "admin_sessions",
    metadata,
    sa.Column("session_hash", sa.String(64), primary_key=True),
    sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("revoked_at", sa.DateTime(timezone=True)),
)


def add_missing_columns(engine: Engine, tables: sa.MetaData = metadata) -> list[str]:
    """Add columns a database created by an older version lacks (all nullable).

    Args:
        engine: The database.
        tables: The tables as this version declares them.

    Returns:
        ``table.column`` for every column added.
    """
    inspector = sa.inspect(engine)
    existing_tables = set(inspector.get_table_names())
    added = []
    for table in tables.sorted_tables:
        if table.name not in existing_tables:
            continue
        present = {column["name"] for column in inspector.get_columns(table.name)}
        for column in table.columns:
            if column.name in present:
                continue
            kind = column.type.compile(dialect=engine.dialect)
            with engine.begin() as connection:
                connection.exec_driver_sql(
                    f'ALTER TABLE {table.name} ADD COLUMN "{column.name}" {kind}'
                )
            added.append(f"{table.name}.{column.name}")
    return added
