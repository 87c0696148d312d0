"""Trials served one at a time and answered in order, timed by the server.

The protocol is the same for every paradigm: the browser (or the lab window) asks for the trial
at a position when it starts, and gets that item's content (its paradigm's ``served_content``,
:mod:`.paradigms`); the server records the serve first. An answer is accepted only for a served
position whose earlier positions are all answered; it is scored by the server, stored with the
time the server served the trial and received the answer, and flagged (never dropped) when
those times contradict the browser's or the limits (:func:`timing_flags`), or when its content
was served before the previous trial ended. The interval is measured on the monotonic clock
(:mod:`.clock`), so a step of the wall clock fails nothing. A body whose own flags contradict
its times is refused (:class:`.errors.InconsistentRequest`, which the web layer answers with
422). A position served again is a restart, counted by the server whatever the browser says.

The browser may ask for the next trials while answers to earlier ones still wait in its
offline queue (they arrive in order once the connection is back), but not more than
:data:`MAX_UNANSWERED` ahead of its answers.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from tracktale.errors import TracktaleError
from tracktale.experiment.storage import clock
from tracktale.experiment.storage.journal import Served
from tracktale.experiment.storage.store import Participant, SaveResult
from tracktale.experiment.study.config import Timing
from tracktale.experiment.study.design import PlannedTrial
from tracktale.experiment.study.errors import InconsistentRequest, WrongState
from tracktale.experiment.study.scoring import ScoredResponse
from tracktale.experiment.study.words import (
    check_words,
    reading_content,
    word_records,
)
from tracktale.schema.derive import request_model
from tracktale.trial import TrialRecord

if TYPE_CHECKING:
    from tracktale.experiment.paradigms import HumanStudy
    from tracktale.experiment.storage.store import Storage
    from tracktale.experiment.study.config import StudyConfig
    from tracktale.stimulus_set import StimulusSet

MAX_UNANSWERED = 5
"""Served trials that may wait for their answers before the next one is served."""
EARLY_TOLERANCE_MS = 500.0
"""An answer may arrive this much sooner than the browser's times add up to (clock rounding)."""
LATE_GRACE_MS = 10_000.0
"""An answer may arrive this much later than both limits allow (network, a slow device)."""
SLOW_GRACE_MS = 5_000.0
"""An answer may arrive this much later than the browser's times and its queue time add up to
(the content's way to the page, drawing the screens, the answer's way back)."""
OVERLAP_TOLERANCE_MS = 2_000.0
"""A trial may be served this much before the previous one ended by the server's account
(that answer's arrival less its queue time): both requests' time on the network."""
LIMIT_SLACK_MS = 1_000.0
"""A reported time may exceed its limit (or fall short of it, after a timeout) by this much
(timer and frame granularity)."""


_ENDED = {
    "completed": "this session is already completed",
    "returned": "the researcher has closed this session",
    "screened_out": "this session ended without consent",
}
"""Why a session that ended takes no more trials, in words for the participant."""


@dataclass(frozen=True)
class Answered:
    """An accepted answer: what the store did, and the practice feedback (practice only)."""

    result: SaveResult
    feedback: dict[str, Any] | None


def timing_flags(timing: Timing, data: Mapping[str, Any], elapsed_ms: float) -> list[str]:
    """What the server-side time says about the browser's times.

    Args:
        timing: The study's limits.
        data: The answer (``reading_time_ms``, ``response_time_ms``: ``None`` after a
            timeout; ``queued_ms``: how long it waited in the page's outbox, if sent).
        elapsed_ms: From serving the trial to receiving the answer, on the server's clock.

    Returns:
        Flag names (see :data:`tracktale.trial.TRIAL_FLAGS`), in that order.
    """
    reading = float(data["reading_time_ms"])
    response = data.get("response_time_ms")
    claimed = reading + (float(response) if response is not None else timing.response_ms)
    queued = float(data.get("queued_ms") or 0.0)
    flags = []
    if elapsed_ms + EARLY_TOLERANCE_MS < claimed + queued:
        flags.append("faster_than_reported")
    elif elapsed_ms - queued - claimed > SLOW_GRACE_MS:
        flags.append("slower_than_reported")
    if elapsed_ms - queued > timing.reading_ms + timing.response_ms + LATE_GRACE_MS:
        flags.append("later_than_limits")
    over_reading = reading > timing.reading_ms + LIMIT_SLACK_MS
    over_response = response is not None and float(response) > timing.response_ms + LIMIT_SLACK_MS
    if over_reading or over_response:
        flags.append("times_over_limits")
    return flags


class Study(Protocol):
    """What the trial desk needs of its study (:class:`.service.StudyService` has it).

    Declared here so that the desk and the service it serves do not import each other.
    """

    storage: Storage
    config: StudyConfig
    stimuli: StimulusSet
    human: HumanStudy

    def check_session_stimuli(self, participant: Participant) -> None:
        """Refuse a session whose stimulus set is not the one being served."""


class TrialDesk:
    """Serves and takes back the trials of one study.

    Args:
        service: The study.
    """

    def __init__(self, service: Study) -> None:
        self.service = service

    @property
    def _journal(self):
        return self.service.storage.journal

    def _check_open(self, participant: Participant) -> None:
        if participant.status in _ENDED:
            raise WrongState(
                _ENDED[participant.status],
                reason="closed",
                participant_status=participant.status,
            )
        if participant.status != "started" or not participant.consent:
            raise WrongState("trials are only served and saved after consent", reason="closed")
        self.service.check_session_stimuli(participant)

    def _planned_at(self, participant: Participant, index: int) -> PlannedTrial:
        trials = participant.plan.trials
        if index >= len(trials):
            raise InconsistentRequest(f"trial_index {index} is beyond this session's {len(trials)}")
        return trials[index]

    def serve(self, participant: Participant, index: int) -> dict[str, Any]:
        """Record that trial ``index`` starts and return its content.

        Raises:
            WrongState: Before consent, after the end, for an answered trial, or while too
                many served trials wait for their answers (``waiting_for`` lists them).
            InconsistentRequest: For a position beyond the plan or out of order.
        """
        self._check_open(participant)
        planned = self._planned_at(participant, index)
        storage = self.service.storage
        with storage.reading() as connection:
            stored = set(storage.trial_indices(participant.participant_id, connection))
            served = self._journal.served_counts(participant.participant_id, connection)
        if index in stored:
            raise WrongState(f"trial {index} is already answered", answered=True)
        if index not in served:
            missing = next((i for i in range(index) if i not in served), None)
            if missing is not None:
                raise InconsistentRequest(
                    f"trials are served in order: trial {missing} comes first"
                )
        waiting = sorted(i for i in served if i < index and i not in stored)
        if len(waiting) >= MAX_UNANSWERED:
            raise WrongState(
                "the answers to earlier trials have not arrived yet", waiting_for=waiting
            )
        self._journal.record_serve(participant.participant_id, index, participant.browser)
        times = served.get(index, 0) + 1
        item = self.service.stimuli.get(planned.item_id)
        content = self.service.human.served_content(item, planned)
        probes = self.service.config.probe_values
        if probes and planned.role == "main":
            # Only the arithmetic study takes the option (checked when the config is read).
            probed = self.service.human.probe_variables(item, probes)
            content["parameters"] = {**content["parameters"], "probe_variables": probed}
        mode = self.service.config.reading_mode
        if mode != "whole":
            # The Maze's sides: the same for this participant's trial whenever it is served.
            seed = (participant.session_seed * 31 + index) % 2_147_483_647
            units = self.service.human.reading_units(item)
            content.update(reading_content(item, units, mode, seed, self.service.config.maze_redo))
        return {"trial": content, "times_served": times, "restart": times > 1}

    def answer(
        self,
        participant: Participant,
        data: Mapping[str, Any],
        words: Sequence[Mapping[str, Any]] = (),
    ) -> Answered:
        """Check an answer against the plan and the serves, score it, flag it, store it once.

        Its words (a story read word by word) are stored once each after it, also when the
        answer was stored before (a retry whose first reply was lost stores them then).

        Args:
            participant: The authenticated participant.
            data: The validated request body (see ``validation.TRIAL_FIELDS``).
            words: The validated words it carries (``validation.validate_words``).

        Raises:
            WrongState: Before consent or after the end, or if the position holds another
                answer.
            InconsistentRequest: If the trial contradicts the plan, was not served, or an
                earlier trial is not answered yet.
        """
        self._check_open(participant)
        planned = self._planned_at(participant, data["trial_index"])
        served, previous_end = self._served_in_order(participant, planned, data)
        _check_response_given(data)
        _check_timeouts(self.service.config.timing, data)
        item = self.service.stimuli.get(planned.item_id)
        if words:
            config = self.service.config
            shown = self.service.human.reading_units(item).words
            check_words(words, config.reading_mode, shown, config.maze_redo)
        try:
            scored = self.service.human.score_trial(
                item, planned, data.get("response"), self.service.config.typed_answer_rule
            )
        except TracktaleError as error:
            raise InconsistentRequest(str(error)) from None
        answered = _Answer.now(self.service.storage.now(), served, previous_end)
        record = self._record(participant, planned, data, item.item_id, scored, answered)
        # A position holding another answer is a ConflictError (409, already_recorded).
        result = self.service.storage.save_trial(record, received_at=answered.at)
        if words:
            self.service.storage.save_words(word_records(record, words, answered.at.isoformat()))
        feedback = None
        if planned.role == "practice":
            feedback = self.service.human.practice_feedback(
                item, planned, scored.correct, data["timed_out"]
            )
        return Answered(result, feedback)

    def _served_in_order(
        self, participant: Participant, planned: PlannedTrial, data: Mapping[str, Any]
    ) -> tuple[Served, dt.datetime | None]:
        """The serve an answer belongs to, and when the previous trial ended.

        Only once the answer fits the plan and the answers before it. The previous trial ended,
        by the server's account, when its answer arrived less its queue time (and less
        :data:`OVERLAP_TOLERANCE_MS`); ``None`` for the first trial.

        Raises:
            InconsistentRequest: If the position was not served, shows another item or task than the
                answer names, or an earlier position is not answered yet.
        """
        # Not served first: a forged answer must not learn which item a position holds.
        index = planned.trial_index
        storage = self.service.storage
        with storage.reading() as connection:
            served = self._journal.served(participant.participant_id, index, connection).get(index)
            answered = storage.answered_before(participant.participant_id, index, connection)
            previous = storage.answer_time(participant.participant_id, index - 1, connection)
        if served is None:
            raise InconsistentRequest(f"trial {index} was not served")
        if (data["item_id"], data["task"]) != (planned.item_id, planned.task):
            raise InconsistentRequest(f"trial {index} shows another item or task")
        if answered != index:
            stored = set(storage.trial_indices(participant.participant_id))
            missing = next(i for i in range(index) if i not in stored)
            raise InconsistentRequest(
                f"trial {missing} is not answered yet (answers are accepted in order)"
            )
        if previous is None:
            return served, None
        arrived, queued_ms = previous
        return served, arrived - dt.timedelta(milliseconds=queued_ms + OVERLAP_TOLERANCE_MS)

    def _record(
        self,
        participant: Participant,
        planned: PlannedTrial,
        data: Mapping[str, Any],
        item_id: str,
        scored: ScoredResponse,
        answered: _Answer,
    ) -> TrialRecord:
        """The trial as stored: the page's fields, the server's score, times and flags."""
        timing = timing_flags(self.service.config.timing, data, answered.elapsed_ms)
        return TrialRecord.from_dict(
            {
                **_record_fields(participant, planned, data, item_id),
                "response": scored.response,
                "correct": scored.correct,
                "correct_paper_rule": scored.correct_paper_rule,
                "restarts": answered.served.times - 1,
                "flags": ";".join([*scored.flags, *timing, *answered.flags]),
                "browser": participant.browser,
                "served_at": answered.served.last_served_at.isoformat(),
                "answered_at": answered.at.isoformat(),
                "server_elapsed_ms": round(answered.elapsed_ms, 3),
            }
        )


@dataclass(frozen=True)
class _Answer:
    """When an answer arrived, for the serve it belongs to, and what the times say.

    Attributes:
        at: The wall clock when it arrived.
        served: The serve.
        elapsed_ms: From the serve, on the monotonic clock where it can be (:mod:`.clock`).
        flags: ``overlapping_serve`` (served before the previous trial ended) and
            ``clock_skew`` (two servers' wall clocks disagreed), where they apply.
    """

    at: dt.datetime
    served: Served
    elapsed_ms: float
    flags: tuple[str, ...]

    @classmethod
    def now(cls, at: dt.datetime, served: Served, previous_end: dt.datetime | None) -> _Answer:
        """An answer arriving now (``at``: the wall clock, read by the caller)."""
        served_at = served.last_served_at
        elapsed, skewed = clock.elapsed_ms(
            served_at, served.last_mono_ns, served.clock, at, clock.monotonic_ns()
        )
        flags = []
        if previous_end is not None and served_at < previous_end:
            flags.append("overlapping_serve")
        if skewed:
            flags.append("clock_skew")
        return cls(at, served, elapsed, tuple(flags))


def _check_response_given(data: Mapping[str, Any]) -> None:
    """A timed-out answer has neither a response nor its time; any other answer has both.

    Raises:
        InconsistentRequest: Where the answer mixes them.
    """
    response = data.get("response")
    if data["timed_out"] != (response is None):
        raise InconsistentRequest("a timed-out trial has no response, any other trial has one")
    if (response is None) != (data.get("response_time_ms") is None):
        raise InconsistentRequest("response_time_ms must be given exactly when there is a response")


def _check_timeouts(timing: Timing, data: Mapping[str, Any]) -> None:
    """A reading that timed out lasted its limit: a body that says otherwise contradicts itself.

    Raises:
        InconsistentRequest: Naming the contradiction.
    """
    reading = float(data["reading_time_ms"])
    if data["reading_timed_out"] and reading < timing.reading_ms - LIMIT_SLACK_MS:
        raise InconsistentRequest(
            f"reading_timed_out is true, but reading_time_ms ({reading:.0f}) is shorter than "
            f"the reading limit ({timing.reading_ms} ms)",
        )


def _record_fields(
    participant: Participant,
    planned: PlannedTrial,
    data: Mapping[str, Any],
    item_id: str,
    record: type = TrialRecord,
) -> dict[str, Any]:
    """The record's fields from the page (as validated) and from the server's own facts.

    Every field the record declares :class:`~tracktale.schema.fields.Sent` is taken from the
    request as it is, so a field added to the declaration needs no edit here; one the page
    may leave out is ``None`` when it has no default. The server's facts come last and win.
    ``record`` is the record's class (a test extends the declaration with a field).
    """
    required = {
        f.name
        for f in dataclasses.fields(record)
        if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
    }
    sent = {
        name: data.get(name)
        for name in request_model(record).model_fields
        if name in data or name in required
    }
    return {
        **sent,
        "participant_id": participant.participant_id,
        "study_id": participant.study_id,
        "source": participant.source,
        "stimulus_sha256": participant.stimulus_sha256,
        "item_id": item_id,
        "role": planned.role,
        "task": planned.task,
        "list_id": participant.list_id,
        "block": planned.block,
        "trial_index": planned.trial_index,
        "good_side": planned.good_side,
    }
