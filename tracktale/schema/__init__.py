"""One typed schema for the records every stage shares (pydantic v2).

Records are declared once, as frozen dataclasses whose annotations carry every rule
(:mod:`.fields`, :mod:`.records`); validators, database columns, export types and the JSON
Schema the study's front end is tested against are derived from them (:mod:`.derive`). Why
pydantic and not msgspec: ``benchmarks/bench_schema.py`` and the README.
"""

from tracktale.schema.derive import (
    Column,
    Problem,
    build_record,
    columns,
    first_problem,
    json_schema,
    record_model,
    request_model,
)
from tracktale.schema.records import (
    GENDERS,
    PARTICIPANT_STATUSES,
    READING_MODES,
    SOURCES,
    TIMING_FLAGS,
    TRIAL_FLAGS,
    TRIAL_TASKS,
    ParticipantRecord,
    SurveyAnswers,
    TrialRecord,
    WordRecord,
)

__all__ = [
    "GENDERS",
    "PARTICIPANT_STATUSES",
    "READING_MODES",
    "SOURCES",
    "TIMING_FLAGS",
    "TRIAL_FLAGS",
    "TRIAL_TASKS",
    "Column",
    "ParticipantRecord",
    "Problem",
    "SurveyAnswers",
    "TrialRecord",
    "WordRecord",
    "build_record",
    "columns",
    "first_problem",
    "json_schema",
    "record_model",
    "request_model",
]
