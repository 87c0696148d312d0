"""Rows of the study database as the server uses them: participants and trials, read back.

Reading back survives what an older version (or a hand edit) left in the database: fields
added later read as their defaults, survey answers that are not JSON are kept as text, and
SQLite's naive datetimes are read as the UTC they were stored in.
"""

from __future__ import annotations

import datetime as dt
import functools
import json
from dataclasses import dataclass
from typing import Any

from tracktale.experiment.study.design import SessionPlan
from tracktale.schema.records import ParticipantStatus, Source
from tracktale.trial import TrialRecord

__all__ = ["Participant", "SaveResult", "clean_header", "participant_from_row", "utc"]


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


def participant_from_row(row: Any) -> Participant:
    """A participant from a row of ``participants`` (or the dict it was inserted from)."""
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
        created_at=utc(data["created_at"]),
        completed_at=utc(data["completed_at"]) if data["completed_at"] else None,
        browser=data.get("browser") or 1,
    )


def trial_from_row(names: list[str], row: Any) -> TrialRecord:
    """A trial record from the values of ``names`` in a row of ``trials``."""
    data = dict(zip(names, row, strict=True))
    # Rows stored before a field existed read back as its default.
    if data.get("flags") is None:
        data["flags"] = ""
    if data.get("restarts") is None:
        data["restarts"] = 0
    return TrialRecord(**data)


def answer_from_json(answer_json: str) -> Any:
    """A survey answer as stored (JSON); one that is not JSON (a hand edit) is kept as text."""
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


def utc(moment: dt.datetime) -> dt.datetime:
    """``moment`` in UTC (SQLite returns naive datetimes; everything was stored in UTC)."""
    return moment if moment.tzinfo else moment.replace(tzinfo=dt.UTC)
