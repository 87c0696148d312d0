"""The study's rules, independent of HTTP: sessions, consent, trials, survey, completion.

The Flask API is a thin layer over :class:`StudyService`; the lab mode can call it directly.
Every write is checked against the participant's stored plan (the right item at the right
position, the right kind of response) and scored here, never by the client. Trials are served
one at a time and answered in order (:mod:`.trialflow`); a second browser that takes a session
over is recorded, and the first one's token is refused with ``reason: taken_over``.
"""

from __future__ import annotations

import dataclasses
import hmac
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tracktale.errors import ConflictError, TracktaleError
from tracktale.experiment.paradigms import HumanStudy, get_human_study
from tracktale.experiment.storage.pseudonyms import (
    personal_completion_code,
    session_seed,
    study_salt,
)
from tracktale.experiment.storage.store import Participant, Storage, hash_token
from tracktale.experiment.study.config import StudyConfig
from tracktale.experiment.study.design import SessionPlan
from tracktale.experiment.study.errors import (
    InvalidRequest,
    NotAuthenticated,
    NotPermitted,
    UnknownParticipant,
    WrongState,
)
from tracktale.experiment.study.instructions import GENDERS
from tracktale.experiment.study.links import is_preview_key
from tracktale.experiment.study.trialflow import Answered, TrialDesk
from tracktale.experiment.study.words import check_reading_mode
from tracktale.schema.records import PREVIEW_SOURCE
from tracktale.stimulus_set import StimulusSet, is_stimulus_set, read_stimulus_set

SURVEY_QUESTIONS = ("age", "gender", "native_language", "attentive", "no_ai_assistance")
"""Every question the end-of-study survey asks (all must be answered to complete)."""
FINAL_STATUSES = ("completed", "screened_out", "returned")
"""Statuses a participant cannot leave without the admin's explicit confirmation."""


@dataclass(frozen=True)
class SessionStart:
    """A started or resumed session."""

    participant: Participant
    token: str | None
    resumed: bool


def load_stimuli(config: StudyConfig) -> StimulusSet:
    """The study's stimulus set; the default human set is generated when missing.

    Raises:
        TracktaleError: If a configured set is missing or unsuitable for the study.
    """
    folder = config.stimulus_dir()
    if config.stimuli is None and not is_stimulus_set(folder):
        from tracktale.stimulus_set import write_stimulus_set

        generated = get_human_study(config.paradigm).generate_stimuli(config.stimulus_seed)
        try:
            write_stimulus_set(generated, folder)
        except TracktaleError:
            if not is_stimulus_set(folder):  # else another server process wrote it first
                raise
    stimulus_set = read_stimulus_set(folder)
    check_stimuli(stimulus_set, config, str(folder))
    return stimulus_set


def check_stimuli(stimulus_set: StimulusSet, config: StudyConfig, where: str = "stimuli") -> None:
    """Refuse a set the study cannot run.

    No main items, another paradigm's items, or what the paradigm's study checks (missing
    probes or practice items, a design that cannot be built).
    """
    main = stimulus_set.select(role="main")
    if not main:
        raise TracktaleError(f"{where}: no main items (use a human-protocol stimulus set)")
    other = next((item for item in stimulus_set if item.paradigm != config.paradigm), None)
    if other is not None:
        raise TracktaleError(
            f"{where}: item {other.item_id} is a {other.paradigm} item, "
            f"but the study's paradigm is {config.paradigm}"
        )
    get_human_study(config.paradigm).check_stimuli(stimulus_set, config.design, where)


class StudyService:
    """One study: its config, stimulus set and database.

    Args:
        config: The study configuration.
        storage: The database.
        stimulus_set: The human-protocol set the study shows.
        salt: The secret salt of seeds and pseudonyms (default: the one kept in the database;
            see :mod:`.pseudonyms`).
    """

    def __init__(
        self,
        config: StudyConfig,
        storage: Storage,
        stimulus_set: StimulusSet,
        salt: str | None = None,
    ) -> None:
        self.config = config
        self.storage = storage
        self.stimuli = stimulus_set
        self._salt = salt
        self.texts = config.catalogue()
        self.human: HumanStudy = get_human_study(config.paradigm).bind(stimulus_set, self.texts)
        self.desk = TrialDesk(self)
        check_stimuli(stimulus_set, config)
        check_reading_mode(stimulus_set, config.reading_mode, self.human.reading_units)
        self.list_ids = self.human.list_ids(stimulus_set)

    @property
    def salt(self) -> str:
        """The study's secret salt (made and kept in the database on first use)."""
        if self._salt is None:
            self._salt = study_salt(self.storage)
        return self._salt

    def plan(self, list_id: str, session_seed: int) -> SessionPlan:
        """The session a list and seed give (the same one every time)."""
        return self.human.build_session(self.stimuli, list_id, session_seed, self.config.design)

    # sessions ----------------------------------------------------------------------------

    def start_session(
        self,
        prolific_pid: str,
        *,
        prolific_study_id: str | None = None,
        prolific_session_id: str | None = None,
        source: str = "online",
        token: str | None = None,
        user_agent: str | None = None,
        preview: str | None = None,
    ) -> SessionStart:
        """Start a session, or resume the one this Prolific id already has.

        A session resumes with its token (the same browser) or with the same Prolific session
        id (another browser, which takes the session over: a new token is issued, the old one
        is revoked and the takeover recorded). A completed, screened-out or returned
        participant cannot start again; a completed one who returns with the same browser's
        token is told the completion code again. A start with the study's preview key
        (:mod:`.links`) is a preview session: ``source="preview"``, kept out of the data.

        Raises:
            WrongState: If the participant may not continue.
            NotPermitted: If the session cannot be proven to be theirs, the link names another
                Prolific study or the preview key is not the study's.
        """
        if preview is not None:
            if not is_preview_key(self.storage, self.config.study_id, preview):
                raise NotPermitted(
                    "this preview link is not valid for this study; ask the researcher for it",
                    reason="bad_preview",
                )
            source = PREVIEW_SOURCE
        expected_study = self.config.prolific.study_id
        if source == "online" and expected_study and prolific_study_id != expected_study:
            raise NotPermitted(
                "this link belongs to another study; please open the study from Prolific",
                reason="wrong_study",
            )
        existing = self.storage.get_participant(self.config.study_id, prolific_pid)
        if existing is None:
            return self._register(
                prolific_pid,
                prolific_study_id=prolific_study_id,
                prolific_session_id=prolific_session_id,
                source=source,
                user_agent=user_agent,
            )
        if (existing.source == PREVIEW_SOURCE) != (source == PREVIEW_SOURCE):
            # A preview never turns into data, nor a participant's session into a preview.
            raise WrongState(
                "this id belongs to another kind of session; open the study from its own link",
                participant_status=existing.status,
                reason="other_source",
            )
        same_browser = bool(token) and hmac.compare_digest(
            hash_token(token or ""), existing.token_hash
        )
        self._refuse_finished(existing, show_code=same_browser)
        if same_browser:
            return SessionStart(existing, token, resumed=True)
        if prolific_session_id and prolific_session_id == existing.prolific_session_id:
            fresh, browser = self.storage.new_token(existing.participant_id, user_agent)
            # The session as this takeover left it: another browser may take it over in the
            # next moment (its token then answers 401 taken_over), but this start succeeded.
            taken = dataclasses.replace(existing, token_hash=hash_token(fresh), browser=browser)
            return SessionStart(taken, fresh, True)
        raise NotPermitted(
            "this study was started in another browser; please continue there "
            "(or contact the researcher)",
            reason="other_browser",
        )

    def start_lab_session(
        self, participant_key: str, *, user_agent: str | None = None
    ) -> SessionStart:
        """Start or resume a session in the lab, where the experimenter names the participant.

        The experimenter's participant id takes the place of the Prolific id (and is hashed in
        exports like one); the session is marked ``source="lab"``. No token is needed to resume:
        whoever runs the lab machine may continue a lab participant's session.

        Raises:
            WrongState: If the id belongs to an online participant or may not continue.
        """
        existing = self.storage.get_participant(self.config.study_id, participant_key)
        if existing is None:
            return self._register(participant_key, source="lab", user_agent=user_agent)
        if existing.source != "lab":
            raise WrongState(
                f"participant {participant_key!r} took part {existing.source}, not in the lab",
                participant_status=existing.status,
            )
        self._refuse_finished(existing)
        return SessionStart(existing, None, resumed=True)

    def _register(
        self,
        participant_key: str,
        *,
        prolific_study_id: str | None = None,
        prolific_session_id: str | None = None,
        source: str,
        user_agent: str | None,
    ) -> SessionStart:
        study_id = self.config.study_id
        seed = session_seed(self.salt, self.config.design.seed, study_id, participant_key)
        try:
            participant, token = self.storage.create_participant(
                study_id=study_id,
                prolific_pid=participant_key,
                prolific_study_id=prolific_study_id,
                prolific_session_id=prolific_session_id,
                source=source,
                stimulus_sha256=self.stimuli.sha256,
                make_plan=lambda list_id: self.plan(list_id, seed),
                user_agent=user_agent,
                list_ids=self.list_ids,
            )
        except ConflictError:
            # Two requests for the same new participant raced; the other one won.
            raise WrongState(
                "this session is being started in another window", reason="starting_elsewhere"
            ) from None
        return SessionStart(participant, token, resumed=False)

    def completion_code(self, participant: Participant) -> str:
        """The participant's completion code: the study's, or their own.

        With ``prolific.completion_codes: per_participant`` each participant gets a code of
        their own (a keyed hash of their id under the study's salt), which the raw-ids
        participants export lists beside their Prolific id, so that a code passed on to
        someone who did not take part matches nobody else's submission.
        """
        prolific = self.config.prolific
        if prolific.completion_codes == "static":
            return prolific.completion_code
        return personal_completion_code(self.salt, participant.participant_id)

    def _refuse_finished(self, participant: Participant, show_code: bool = False) -> None:
        messages = {
            "completed": "you have already completed this study",
            "screened_out": "you did not consent to this study and cannot start it again",
            "returned": "this study was returned and cannot be started again",
        }
        if participant.status not in messages:
            return
        extra: dict[str, Any] = {
            "participant_status": participant.status,
            "reason": participant.status,
        }
        if participant.status == "completed" and show_code:
            # Only the browser that completed (its token) is told the code again.
            code = self.completion_code(participant)
            extra["completion_code"] = code
            extra["redirect"] = self.config.prolific.redirect(code)
        raise WrongState(messages[participant.status], **extra)

    def authenticate(self, token: str | None) -> Participant:
        """The participant whose session token this is.

        Raises:
            NotAuthenticated: Without a valid token; ``reason: taken_over`` when the token was
                replaced because another browser took the session over.
        """
        participant = self.storage.participant_by_token(token) if token else None
        if participant is None or participant.study_id != self.config.study_id:
            if token and self.storage.journal.revoked(hash_token(token)):
                raise NotAuthenticated(
                    "this study was opened in another browser or window; please continue there",
                    reason="taken_over",
                )
            raise NotAuthenticated("unknown or expired session; reload the page", reason="expired")
        return participant

    def check_session_stimuli(self, participant: Participant) -> None:
        """Refuse a session that started on another stimulus set (:class:`WrongState`)."""
        self._check_stimuli(participant)

    def _check_stimuli(self, participant: Participant) -> None:
        if participant.stimulus_sha256 != self.stimuli.sha256:
            raise WrongState(
                "the study's stimuli changed since this session started; "
                "please contact the researcher",
                reason="stimuli_changed",
            )

    def session_state(self, participant: Participant) -> dict[str, Any]:
        """What the front end needs to (re)build the session: the plan's outline, no content.

        Each trial is given by position, block, task and role only; its story, question and
        options are served when it starts (:meth:`serve_trial`).
        """
        self._check_stimuli(participant)
        plan = participant.plan
        return {
            "participant_id": participant.participant_id,
            "list_id": participant.list_id,
            "preview": participant.source == PREVIEW_SOURCE,
            "status": participant.status,
            "consent": participant.consent,
            "browser": participant.browser,
            "done": self.storage.trial_indices(participant.participant_id),
            "survey_done": self._survey_done(participant),
            "stimulus_sha256": participant.stimulus_sha256,
            "block_formats": list(plan.block_formats),
            "timing": {
                "reading_ms": self.config.timing.reading_ms,
                "response_ms": self.config.timing.response_ms,
            },
            "n_trials": len(plan.trials),
            "trials": [
                {
                    "index": planned.trial_index,
                    "block": planned.block,
                    "task": planned.task,
                    "role": planned.role,
                }
                for planned in plan.trials
            ],
        }

    def serve_trial(self, participant: Participant, trial_index: int) -> dict[str, Any]:
        """Serve a trial's content as it starts (see :meth:`.TrialDesk.serve`)."""
        return self.desk.serve(participant, trial_index)

    # writes ------------------------------------------------------------------------------

    def record_consent(self, participant: Participant, consent: bool) -> str | None:
        """Record the consent decision; returns the screen-out redirect when it is no.

        The first decision wins: the same decision again (a retry) is accepted, the other one
        is refused, also when two tabs send them at once (the storage decides).

        Raises:
            WrongState: After the end, or to withdraw consent given earlier.
            ConflictError: ``decided``, when another tab's opposite decision came first.
        """
        if participant.consent is None or participant.consent != consent:
            self._refuse_finished(participant)
            if participant.consent:
                raise WrongState(
                    "consent was already given; to withdraw, return the study",
                    reason="decided",
                )
        self.storage.set_consent(participant.participant_id, consent)
        return (
            None if consent else self.config.prolific.redirect(self.config.prolific.screenout_code)
        )

    def record_trial(
        self,
        participant: Participant,
        data: Mapping[str, Any],
        words: Sequence[Mapping[str, Any]] = (),
    ) -> Answered:
        """Check, score, flag and store an answer and its words (:meth:`.TrialDesk.answer`)."""
        return self.desk.answer(participant, data, words)

    def record_survey(self, participant: Participant, answers: Mapping[str, Any]) -> int:
        """Store the end-of-study answers (validated by the API); returns how many were new.

        Raises:
            WrongState: Before consent or after the end.
            InvalidRequest: For a gender the survey does not offer.
            ConflictError: ``already_recorded``, when different answers are stored already
                (another tab's): the first survey wins, whole.
        """
        self._refuse_finished(participant)
        if not participant.consent:
            raise WrongState("the survey can only be answered after consent")
        gender = answers.get("gender")
        if gender is not None and gender not in GENDERS:
            raise InvalidRequest("field 'gender' has an unknown value")
        return self.storage.save_survey(participant.participant_id, answers)

    def _survey_done(self, participant: Participant) -> bool:
        given = self.storage.survey(participant.participant_id).get(participant.participant_id, {})
        return all(question in given for question in SURVEY_QUESTIONS)

    def missing_trials(self, participant: Participant) -> list[int]:
        """Planned positions the server has not stored yet."""
        stored = set(self.storage.trial_indices(participant.participant_id))
        return [
            trial.trial_index
            for trial in participant.plan.trials
            if trial.trial_index not in stored
        ]

    def change_status(
        self, participant_id: str, status: str, *, confirmed: bool, by: dict[str, Any]
    ) -> None:
        """Mark a participant ``returned``, or reopen one (``started``), as the admin asks.

        Leaving a final status (completed, screened out, returned) needs ``confirmed``; every
        change is recorded as a ``status`` event with who asked.

        Raises:
            InvalidRequest: For another status or a reopening without confirmation.
            UnknownParticipant: For a participant of another study.
        """
        if status not in ("returned", "started"):
            raise InvalidRequest("the status can only be set to returned or started")
        people = self.storage.participants(self.config.study_id)
        person = next((p for p in people if p.participant_id == participant_id), None)
        if person is None:
            raise UnknownParticipant(f"no participant {participant_id!r} in this study")
        if status == "started" and person.status in FINAL_STATUSES and not confirmed:
            raise InvalidRequest(f"reopening a {person.status} participant needs confirmation")
        self.storage.set_status(participant_id, status)
        self.storage.journal.record_event(
            self.config.study_id,
            participant_id,
            "status",
            {"from": person.status, "to": status, **by},
        )

    def complete(self, participant: Participant) -> str:
        """Mark the session completed once every trial and survey answer is stored.

        Returns:
            The Prolific completion redirect (again, if it was completed before).

        Raises:
            WrongState: Naming what is still missing, or if the participant was screened out.
        """
        prolific = self.config.prolific
        if participant.status == "completed":
            return prolific.redirect(self.completion_code(participant))
        self._refuse_finished(participant)
        missing = self.missing_trials(participant)
        if missing:
            raise WrongState(f"{len(missing)} trial(s) not saved yet", missing=missing)
        if not self._survey_done(participant):
            raise WrongState("the final questions are not saved yet", missing=["survey"])
        self.storage.set_status(participant.participant_id, "completed")
        return prolific.redirect(self.completion_code(participant))
