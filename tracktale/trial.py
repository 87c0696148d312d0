"""The trial-record contract: one human trial as stored, exported and analysed.

The records are declared in :mod:`tracktale.schema.records` (with everything derived from them
in :mod:`tracktale.schema`); this module keeps the names every stage imports.
"""

from tracktale.schema.records import (
    PARTICIPANT_STATUSES,
    SOURCES,
    TIMING_FLAGS,
    TRIAL_FLAGS,
    TRIAL_TASKS,
    ParticipantRecord,
    TrialRecord,
)

__all__ = [
    "PARTICIPANT_STATUSES",
    "SOURCES",
    "TIMING_FLAGS",
    "TRIAL_FLAGS",
    "TRIAL_TASKS",
    "ParticipantRecord",
    "TrialRecord",
]
