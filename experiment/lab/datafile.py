"""PsychoPy's own data files for each lab run: the ExperimentHandler CSV and the log.

The study database is the record the analysis reads; these files are for labs that use
PsychoPy's tools. Each run (a session, or each part of an interrupted one) gets its own pair,
named the PsychoPy way (``<participant>_<study>_<date>.csv`` and ``.log``), in the lab data
folder. The CSV holds one row per trial of the run (with the flip-time onsets that the
database does not keep) and, at the end, a row with the survey answers; it is rewritten
atomically after every trial, so a crash leaves every finished trial in it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from psychopy import data, logging

from tracktale.experiment.lab.session import LabSession, Reading, Response
from tracktale.experiment.study.design import PlannedTrial


class LabDataFile:
    """The ExperimentHandler CSV and PsychoPy log of one run.

    Args:
        folder: Where the files go (created if needed).
        session: The participant's session.
        extra: Run information added to every row (frame rate, keyboard backend, ...).
    """

    def __init__(self, folder: Path, session: LabSession, extra: dict[str, Any]) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        participant = session.participant
        stem = (
            f"{session.key}_{participant.study_id}_{data.getDateStr(format='%Y-%m-%d_%Hh%M.%S.%f')}"
        )
        self.path = folder / f"{stem}.csv"
        self.log_path = folder / f"{stem}.log"
        self.log = logging.LogFile(str(self.log_path), level=logging.EXP, filemode="w")
        info = {
            "participant": session.key,
            "participant_id": participant.participant_id,
            "study_id": participant.study_id,
            "list_id": participant.list_id,
            "session_seed": participant.session_seed,
            "stimulus_sha256": participant.stimulus_sha256,
            "run": session.runs(),
            **extra,
        }
        self.handler = data.ExperimentHandler(
            name=participant.study_id,
            extraInfo=info,
            savePickle=False,
            saveWideText=False,
            dataFileName=str(folder / stem),
            autoLog=False,
        )
        self.rows = 0

    def add_trial(
        self, planned: PlannedTrial, reading: Reading, response: Response, stored: dict[str, Any]
    ) -> None:
        """Add a finished trial and rewrite the CSV."""
        reading_ms = reading.time_ms
        if reading_ms is None:
            reading_ms = (response.onset - reading.onset) * 1000
        row = {
            "trial_index": planned.trial_index,
            "block": planned.block,
            "role": planned.role,
            "task": planned.task,
            "item_id": planned.item_id,
            "good_side": planned.good_side,
            "story_onset_s": round(reading.onset, 6),
            "reading_time_ms": round(reading_ms, 3),
            "reading_timed_out": reading.timed_out,
            "probe_onset_s": round(response.onset, 6),
            "key_or_text": response.value,
            "response": stored["response"],
            "correct": stored["correct"],
            "timed_out": response.timed_out,
            "response_time_ms": None if response.time_ms is None else round(response.time_ms, 3),
        }
        self._add(row)

    def add_survey(self, answers: dict[str, Any]) -> None:
        """Add the survey answers as a last row."""
        self._add({"role": "survey", **answers})

    def _add(self, row: dict[str, Any]) -> None:
        for name, value in row.items():
            self.handler.addData(name, "" if value is None else value)
        self.handler.nextEntry()
        self.rows += 1
        self.save()

    def save(self) -> None:
        """Rewrite the CSV under a temporary name, then rename it into place."""
        temporary = self.path.with_name(f".{self.path.stem}.partial.csv")
        written = self.handler.saveAsWideText(
            str(temporary), delim=",", fileCollisionMethod="overwrite", sortColumns=False
        )
        with open(written or temporary, "rb") as stream:
            os.fsync(stream.fileno())
        os.replace(written or temporary, self.path)
        logging.flush()

    def close(self) -> None:
        """Write the last state and stop the handler from saving again at exit."""
        if self.rows:
            self.save()
        self.handler.abort()
        logging.flush()
