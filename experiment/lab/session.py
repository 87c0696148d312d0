"""A lab participant's session as the study sees it: :class:`StudyService`, nothing else.

:class:`LabSession` registers or resumes the participant the experimenter names (marked
``source="lab"``), and turns what the PsychoPy window measured into exactly the trial, consent
and survey writes the browser sends: the same validation (``api.TRIAL_FIELDS``), the same
checks against the stored plan, the same scoring and the same idempotent, durable saves.

Each trial is served through the study's rules before it is shown (the server's record of
what was served, and when), so a session stopped with Escape or killed in the middle of a
trial shows that trial again when it resumes, and the server counts the second serve in
``restarts``, as it does for a reload in the browser. The database also remembers which trial
was on screen, to say so when the session resumes. Nothing here needs PsychoPy.
"""

from __future__ import annotations

import json
import re
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from tracktale.errors import TracktaleError
from tracktale.experiment.storage.store import Participant
from tracktale.experiment.study.design import PlannedTrial
from tracktale.experiment.study.errors import StudyRefusal
from tracktale.experiment.study.scoring import ScoredResponse
from tracktale.experiment.study.service import SURVEY_QUESTIONS, StudyService
from tracktale.experiment.study.validation import (
    IDENTIFIER,
    SURVEY_FIELDS,
    TRIAL_FIELDS,
    ApiError,
    validate,
)

_REFUSALS = {
    "completed": "has already completed this study",
    "screened_out": "did not consent and cannot start again",
    "returned": "returned this study and cannot start again",
}


@dataclass(frozen=True)
class Reading:
    """The story screen as measured: onset and offset are flip times (PsychoPy's clock, s).

    Attributes:
        onset: Flip that put the story on screen.
        time_ms: From that flip to the key press, or to the flip that replaced the story
            (filled in by :meth:`LabSession.save_trial` from the probe's onset on a timeout).
        timed_out: The reading limit ran out.
    """

    onset: float
    time_ms: float | None
    timed_out: bool


@dataclass(frozen=True)
class Response:
    """The probe screen as measured.

    Attributes:
        onset: Flip that put the probe on screen (PsychoPy's clock, s).
        value: The typed text, or ``left``/``right`` for a choice; ``None`` after a timeout.
        time_ms: From the onset flip to the key that answered; ``None`` after a timeout.
    """

    onset: float
    value: str | None
    time_ms: float | None

    @property
    def timed_out(self) -> bool:
        """No answer within the limit."""
        return self.value is None


def check_participant_key(key: str) -> str:
    """The experimenter's participant id, checked like a Prolific id.

    Raises:
        TracktaleError: Naming the option and value when it is not 1-64 letters, digits, _ or -.
    """
    if not re.fullmatch(IDENTIFIER, key or ""):
        raise TracktaleError(
            f"--participant {key!r}: use 1 to 64 letters, digits, '_' or '-' (e.g. LAB-001)"
        )
    return key


class LabSession:
    """One lab participant's session, started or resumed.

    Args:
        service: The study.
        participant_key: The id the experimenter gives (stored where online sessions keep the
            Prolific id; hashed in exports like one).
        user_agent: What runs the session (PsychoPy version, platform), stored with it.

    Raises:
        TracktaleError: If the id is malformed, belongs to an online participant, has
            completed, declined or returned the study, or started on other stimuli.
    """

    def __init__(
        self, service: StudyService, participant_key: str, *, user_agent: str | None = None
    ) -> None:
        self.service = service
        self.key = check_participant_key(participant_key)
        try:
            started = service.start_lab_session(self.key, user_agent=user_agent)
        except StudyRefusal as error:
            status = error.details.get("participant_status")
            if status in _REFUSALS and "not in the lab" not in error.message:
                raise TracktaleError(f"participant {self.key!r} {_REFUSALS[status]}") from None
            raise TracktaleError(error.message) from None
        self.participant: Participant = started.participant
        self.resumed = started.resumed
        if self.participant.stimulus_sha256 != service.stimuli.sha256:
            raise TracktaleError(
                f"participant {self.key!r} started on another stimulus set (sha256 "
                f"{self.participant.stimulus_sha256[:12]}...); run the study on that set"
            )
        self._progress_key = f"lab_progress:{self.participant.participant_id}"
        self.progress = self._load_progress()
        self.restarted = self._note_interrupted()

    # the plan --------------------------------------------------------------------------

    @property
    def trials(self) -> tuple[PlannedTrial, ...]:
        """Every planned trial, in order."""
        return self.participant.plan.trials

    @property
    def block_formats(self) -> tuple[str, ...]:
        """The response format of each block."""
        return self.participant.plan.block_formats

    def shown(self, planned: PlannedTrial) -> dict[str, Any]:
        """What the trial shows (story, probe, options) and, in practice, the feedback's answer."""
        item = self.service.stimuli.get(planned.item_id)
        shown = self.service.human.served_content(item, planned)
        if planned.role == "practice":
            shown["feedback"] = self.service.human.practice_feedback(item, planned, False, False)
        return shown

    def done(self) -> set[int]:
        """Positions already stored."""
        return set(self.service.storage.trial_indices(self.participant.participant_id))

    def survey_done(self) -> bool:
        """Every end-of-study question is answered."""
        storage = self.service.storage
        given = storage.survey(self.participant.participant_id).get(
            self.participant.participant_id, {}
        )
        return all(question in given for question in SURVEY_QUESTIONS)

    def runs(self) -> int:
        """How many times this session was opened (1 for a fresh start)."""
        return int(self.progress.get("runs", 1))

    # progress: which trial is on screen ------------------------------------------------

    def _load_progress(self) -> dict[str, Any]:
        stored = self.service.storage.get_meta(self._progress_key)
        progress = json.loads(stored) if stored else {}
        progress["runs"] = int(progress.get("runs", 0)) + 1
        self._write_progress(progress)
        return progress

    def _write_progress(self, progress: Mapping[str, Any]) -> None:
        self.service.storage.put_meta(self._progress_key, json.dumps(progress, sort_keys=True))

    def _note_interrupted(self) -> int | None:
        # A trial that was on screen when the last run stopped, and is not stored, was seen
        # and lost: it is shown again (and the server counts the second serve as a restart).
        interrupted = self.progress.pop("in_progress", None)
        restarted = None
        if interrupted is not None and interrupted not in self.done():
            restarted = int(interrupted)
        self._write_progress(self.progress)
        return restarted

    def restarts(self, trial_index: int) -> int:
        """Times this trial was shown before and interrupted (as the server counts serves)."""
        served = self.service.storage.journal.served(self.participant.participant_id)
        if trial_index not in served:
            return 0
        times = served[trial_index].times
        return times - 1 if trial_index in self.done() else times

    def begin_trial(self, trial_index: int) -> None:
        """Serve the trial through the study's rules and note (durably) that it is on screen.

        Raises:
            TracktaleError: If the study refuses to serve it (which would be a bug).
        """
        self._call(self.service.serve_trial, self.participant, trial_index)
        self.progress["in_progress"] = trial_index
        self._write_progress(self.progress)

    # writes ----------------------------------------------------------------------------

    def _refresh(self) -> None:
        fresh = self.service.storage.get_participant(self.participant.study_id, self.key)
        if fresh is None:
            raise TracktaleError(f"participant {self.key!r} vanished from the study database")
        self.participant = fresh

    def record_consent(self, consent: bool) -> None:
        """Store the consent decision (declining screens the participant out)."""
        self._call(self.service.record_consent, self.participant, consent)
        self._refresh()

    def save_trial(
        self,
        planned: PlannedTrial,
        reading: Reading,
        response: Response,
        *,
        screen: tuple[int, int],
        blur_count: int = 0,
        hidden_count: int = 0,
    ) -> ScoredResponse:
        """Store a finished trial through the study's rules, then clear the on-screen mark.

        Returns:
            The response as stored and scored (for practice feedback).

        Raises:
            TracktaleError: If the study refuses the trial (which would be a bug).
        """
        reading_ms = reading.time_ms
        if reading_ms is None:
            reading_ms = (response.onset - reading.onset) * 1000
        body = {
            "client_trial_id": "lab-" + secrets.token_hex(12),
            "trial_index": planned.trial_index,
            "item_id": planned.item_id,
            "task": planned.task,
            "response": response.value,
            "timed_out": response.timed_out,
            "reading_time_ms": round(max(reading_ms, 0.0), 3),
            "reading_timed_out": reading.timed_out,
            "response_time_ms": None
            if response.time_ms is None
            else round(max(response.time_ms, 0.0), 3),
            "screen_width": int(screen[0]),
            "screen_height": int(screen[1]),
            "blur_count": blur_count,
            "hidden_count": hidden_count,
        }
        self._call(
            lambda: self.service.record_trial(self.participant, validate(body, TRIAL_FIELDS))
        )
        self.progress.pop("in_progress", None)
        self._write_progress(self.progress)
        item = self.service.stimuli.get(planned.item_id)
        rule = self.service.config.typed_answer_rule
        return self.service.human.score_trial(item, planned, response.value, rule)

    def record_survey(self, answers: Mapping[str, Any]) -> None:
        """Store the end-of-study answers (validated as the API validates them)."""
        self._call(
            lambda: self.service.record_survey(
                self.participant, validate(dict(answers), SURVEY_FIELDS)
            )
        )

    def complete(self) -> None:
        """Mark the session completed (every trial and answer must be stored)."""
        self._call(self.service.complete, self.participant)
        self._refresh()

    @staticmethod
    def _call(function: Any, *args: Any) -> Any:
        try:
            return function(*args)
        except (ApiError, StudyRefusal) as error:
            raise TracktaleError(f"the study refused a lab write: {error.message}") from None
