"""The human-study records, declared once: trials, participants and survey answers.

The browser study, lab mode and simulated participants all produce :class:`TrialRecord` rows;
the analysis reads them joined to the stimulus set on ``item_id``. The record holds what
happened in the trial; what the item was (complexity, focus, template, ...) stays in the
stimulus set and is never copied here.

Each field's annotation is its whole declaration (see :mod:`tracktale.schema.fields`): what
the API accepts from the browser, the SQL column, the export type and the JSON Schema the
front end is tested against are all derived from it (:mod:`tracktale.schema.derive`). Adding a
field is one edit here; a field added after the first release takes a default, so that the
study database can add its column to an existing table (``experiment.tables``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields
from typing import Annotated, Any, Literal, get_args

from tracktale.schema.fields import (
    FREE_TEXT,
    IDENTIFIER,
    MAX_MS,
    MAX_QUEUED_MS,
    Sent,
    Stored,
    number,
    probed_values,
    text,
)

TrialTask = Literal["explicit", "implicit", "comprehension"]
TRIAL_TASKS: tuple[str, ...] = get_args(TrialTask)
"""``explicit``: a typed one-word answer; ``implicit``: a choice between two continuations;
``comprehension``: a filler's question about a story detail."""
Source = Literal["online", "lab", "simulated", "preview"]
SOURCES: tuple[str, ...] = get_args(Source)
"""Where a session ran: the browser study, the PsychoPy lab mode, a simulated participant, or
the researcher's own test session through the study's preview link (left out of exports and
the analysis unless asked for)."""
PREVIEW_SOURCE = "preview"
"""The source of preview sessions (:data:`SOURCES`)."""
Role = Literal["main", "filler", "practice"]
ROLES: tuple[str, ...] = get_args(Role)
"""An item's role (the same as :data:`tracktale.item.ROLES`)."""
Side = Literal["left", "right"]
SIDES: tuple[str, ...] = get_args(Side)
"""Where the correct option of a two-alternative trial was."""
TIMING_FLAGS = (
    "faster_than_reported",
    "slower_than_reported",
    "later_than_limits",
    "times_over_limits",
    "overlapping_serve",
    "clock_skew",
)
"""The flags that say a trial's times cannot be trusted (``--exclude-flagged`` drops them)."""
TRIAL_FLAGS = ("several_answers", *TIMING_FLAGS)
"""What the server flags on a trial (stored, never dropped):

- ``several_answers``: a typed answer names more than one candidate answer (for narrative
  items, more than one container noun of the lexicon); scored incorrect by the default rule.
- ``faster_than_reported``: the answer arrived sooner after the trial was served than the
  browser's reading and response times add up to (with the time it says the answer waited in
  its queue): those times cannot be true.
- ``slower_than_reported``: the answer arrived much later after the trial was served than the
  browser's times and its queue time add up to: the story was on screen longer than claimed.
- ``later_than_limits``: the answer, less the time it waited in the browser's queue, arrived
  later after the trial was served than both time limits allow.
- ``times_over_limits``: the browser reports a reading or response time beyond its limit,
  which the page's own timers make impossible.
- ``overlapping_serve``: the trial's content was served before the previous trial ended in
  the browser (its answer's arrival less its queue time): the story could be read while the
  previous one was on screen, so its reading time says little.
- ``clock_skew``: the serve and the answer were timed by two servers whose clocks disagree;
  ``server_elapsed_ms`` is clamped at zero."""
ParticipantStatus = Literal["started", "completed", "returned", "screened_out"]
PARTICIPANT_STATUSES: tuple[str, ...] = get_args(ParticipantStatus)
Gender = Literal["female", "male", "non-binary", "other", "prefer not to say"]
GENDERS: tuple[str, ...] = get_args(Gender)
"""Answer options of the gender question."""

Count = Annotated[int, *number(minimum=0)]
Milliseconds = Annotated[float, *number(minimum=0)]


@dataclass(frozen=True)
class TrialRecord:
    """One trial of one participant.

    Attributes:
        client_trial_id: Id the front end gives the trial; saving it twice stores it once.
        participant_id: The study's pseudonymous participant id (never the Prolific PID).
        study_id: The study configuration's name.
        source: One of :data:`SOURCES`.
        stimulus_sha256: The stimulus set the item came from.
        item_id: The item shown.
        role: The item's role (``main``, ``filler``, ``practice``).
        task: One of :data:`TRIAL_TASKS`.
        list_id: The counterbalancing list the participant was assigned.
        block: Block number within the session (practice blocks included).
        trial_index: Position of the trial within the session, from 0.
        response: The typed answer or the chosen option's text; ``None`` after a timeout.
        correct: Scored against the item's answer; a timeout is incorrect.
        timed_out: The response window ran out.
        reading_time_ms: Time on the story screen.
        reading_timed_out: The reading window ran out (the probe followed regardless).
        response_time_ms: From probe onset to the response; ``None`` after a timeout.
        good_side: For two-alternative trials, where the correct option was (``left``/``right``).
        screen_width: Viewport width in pixels.
        screen_height: Viewport height in pixels.
        blur_count: Times the window lost focus during the trial.
        hidden_count: Times the page became hidden during the trial.
        restarts: Times the trial was shown before and interrupted (the page was reloaded
            mid-trial, so the story was seen again); 0 for an uninterrupted trial. Counted by
            the server: the times the trial was served, less one (a value the browser sends,
            from pages queued before the server counted, is accepted and ignored).
        correct_paper_rule: The paradigm's own judgement of the response (``score_response``:
            for narrative items the source paper's model rule, "contains the target word");
            ``correct`` is the study's rule, which may be stricter (``None``: not recorded).
        flags: What the server noticed, as ``;``-separated names from :data:`TRIAL_FLAGS`
            (empty: nothing). Flagged trials are stored, never dropped.
        browser: Which browser answered: 1 for the first, 2 after another browser took the
            session over, and so on (``None``: not recorded).
        served_at: When the server served the trial's content (ISO 8601, UTC).
        answered_at: When the server received the answer (ISO 8601, UTC).
        server_elapsed_ms: From ``served_at`` to ``answered_at`` as the server measured it; the
            browser's ``reading_time_ms`` and ``response_time_ms`` are kept beside it.
        intermediates: The intermediate values the participant typed on the way, where the
            study probes them (the arithmetic study's ``probe_values``): the JSON text of a
            list of ``{"variable": "S3", "value": "12"}`` objects, in the order asked, each
            value as typed (``""``: left empty); ``None``: nothing was probed.
        queued_ms: How long the answer waited in the page's outbox before the request that
            delivered it (offline, or the server unavailable), as the browser measured it
            (``None``: not sent). The timing flags count it as neither reading nor response.
    """

    client_trial_id: Annotated[str, Stored(64), Sent(*text(pattern=r"[A-Za-z0-9_-]{8,64}"))]
    participant_id: str
    study_id: str
    source: Source
    stimulus_sha256: str
    item_id: Annotated[str, Sent(*text(pattern=IDENTIFIER))]
    role: Role
    task: Annotated[TrialTask, Sent()]
    list_id: str
    block: Count
    trial_index: Annotated[Count, Sent(*number(maximum=10_000))]
    response: Annotated[str | None, FREE_TEXT, Sent(*text(max_length=200, blank=False))]
    correct: bool
    timed_out: Annotated[bool, Sent()]
    reading_time_ms: Annotated[Milliseconds, Sent(*number(maximum=MAX_MS))]
    reading_timed_out: Annotated[bool, Sent()]
    response_time_ms: Annotated[Milliseconds | None, Sent(*number(maximum=MAX_MS))]
    good_side: Side | None
    screen_width: Annotated[Count, Sent(*number(maximum=100_000))]
    screen_height: Annotated[Count, Sent(*number(maximum=100_000))]
    blur_count: Annotated[Count, Sent(*number(maximum=100_000))]
    hidden_count: Annotated[Count, Sent(*number(maximum=100_000))]
    restarts: Annotated[Count, Sent(*number(maximum=10_000))] = 0
    correct_paper_rule: bool | None = None
    flags: Annotated[str, Stored(256)] = ""
    browser: Count | None = None
    served_at: str | None = None
    answered_at: str | None = None
    server_elapsed_ms: Milliseconds | None = None
    intermediates: Annotated[str | None, FREE_TEXT, Sent(*probed_values())] = None
    queued_ms: Annotated[Milliseconds | None, Sent(*number(maximum=MAX_QUEUED_MS))] = None

    def to_dict(self) -> dict[str, Any]:
        """Plain data (a database or export row)."""
        # Every field is a plain value: a shallow copy equals asdict without its deep copies
        # (this runs on every saved trial).
        return {field.name: getattr(self, field.name) for field in fields(self)}

    @property
    def flag_set(self) -> frozenset[str]:
        """The flags as a set of names."""
        return frozenset(name for name in self.flags.split(";") if name)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> TrialRecord:
        """Validate plain data and build a record.

        Raises:
            TracktaleError: Naming the first missing, unknown or ill-typed field (fields with
                a default may be missing).
        """
        from tracktale.schema.derive import build_record  # derive imports this module

        record: TrialRecord = build_record(cls, data, what="trial field")
        return record


ReadingMode = Literal["self_paced", "maze"]
READING_MODES: tuple[str, ...] = get_args(ReadingMode)
"""How a story was read word by word: ``self_paced`` (a moving window, the space bar shows
the next word or region) or ``maze`` (each word against a distractor, chosen by key)."""


@dataclass(frozen=True)
class WordRecord:
    """One word (or region) of a trial read word by word: self-paced reading or Maze.

    Sent by the browser with its trial's answer (``words``, a list in the trial's body) and
    stored once per participant, trial and word, whatever the retries; exported as the
    ``words`` table. A word the participant never reached (a Maze trial ended by an error)
    has no record.

    Attributes:
        client_trial_id: The id of the trial whose story this word is part of.
        participant_id: The study's pseudonymous participant id.
        study_id: The study configuration's name.
        source: One of :data:`SOURCES`.
        item_id: The item whose story was read.
        trial_index: Position of the trial within the session, from 0.
        word_index: Position of the word (or, reading region by region, the region's first
            word) in the story, from 0, counting words separated by white space.
        region: The region the word belongs to, from 0 (its sentence, or the region column of an
            imported item table).
        word: The word as shown (a region: its words joined by single spaces).
        mode: One of :data:`READING_MODES`.
        rt_ms: Self-paced: from the word's onset to the key press that replaced it. Maze: from
            the onset of the pair to the (first, or with ``redo`` the correct) choice.
        choice: Maze: the side chosen first (``left``/``right``); ``None`` in self-paced.
        correct: Maze: whether the first choice was the real word; ``None`` in self-paced.
        distractor: Maze: the word shown against it; ``None`` in self-paced.
        errors: Maze with ``redo``: wrong choices before the right one; ``None`` otherwise.
        received_at: When the server received the trial's answer (ISO 8601, UTC).
    """

    client_trial_id: Annotated[str, Stored(64)]
    participant_id: str
    study_id: str
    source: Source
    item_id: str
    trial_index: Count
    word_index: Annotated[Count, Sent(*number(maximum=10_000))]
    region: Annotated[Count, Sent(*number(maximum=10_000))]
    word: Annotated[str, FREE_TEXT, Sent(*text(max_length=400, blank=False))]
    mode: Annotated[ReadingMode, Sent()]
    rt_ms: Annotated[Milliseconds, Sent(*number(maximum=MAX_MS))]
    choice: Annotated[Side | None, Sent()] = None
    correct: Annotated[bool | None, Sent()] = None
    distractor: Annotated[str | None, FREE_TEXT, Sent(*text(max_length=200, blank=False))] = None
    errors: Annotated[Count | None, Sent(*number(maximum=10_000))] = None
    received_at: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """Plain data (a database or export row)."""
        return {field.name: getattr(self, field.name) for field in fields(self)}


@dataclass(frozen=True)
class ParticipantRecord:
    """One participant's session as the analysis sees it (exports hold one row each).

    Attributes:
        participant_id: The pseudonymous id trial records refer to.
        study_id: The study configuration's name.
        source: One of :data:`SOURCES`.
        list_id: The counterbalancing list.
        status: One of :data:`PARTICIPANT_STATUSES`.
        attentive: Confirmed paying attention throughout (``None``: not asked yet).
        no_ai_assistance: Confirmed using no AI assistance (``None``: not asked yet).
        age: Age in years, if given.
        gender: As given (``"prefer not to say"`` allowed), if given.
        native_language: As given, if given.
        session_seed: The seed of the participant's trial order, filler positions and sides
            (with ``list_id`` and the study's design seed it rebuilds the session).
        stimulus_sha256: The stimulus set the participant's items came from.
        started_at: When the session started (ISO 8601, UTC).
        completed_at: When the server confirmed completion (ISO 8601, UTC), if it did.
        prolific_pid_hash: Salted hash of the Prolific id (exports; ``None`` elsewhere).
        browsers: How many browsers held the session (more than 1: it was taken over).
    """

    participant_id: str
    study_id: str
    source: Source
    list_id: str
    status: ParticipantStatus
    attentive: bool | None
    no_ai_assistance: bool | None
    age: int | None
    gender: str | None
    native_language: str | None
    session_seed: int | None = None
    stimulus_sha256: str | None = None
    started_at: str | None = None
    completed_at: str | None = None
    prolific_pid_hash: str | None = None
    browsers: int | None = None

    def to_dict(self) -> dict[str, Any]:
        """Plain data (a database or export row)."""
        return asdict(self)


@dataclass(frozen=True)
class SurveyAnswers:
    """The end-of-study questions, as the browser (or the lab mode) sends them.

    Stored one answer a row (``survey_answers``) and exported in :class:`ParticipantRecord`.

    Attributes:
        age: Age in years (``None``: not given).
        gender: One of :data:`GENDERS`.
        native_language: As typed.
        attentive: Paid attention throughout.
        no_ai_assistance: Used no AI assistance.
    """

    age: Annotated[int | None, Sent(*number(minimum=18, maximum=120))]
    gender: Annotated[Gender, Sent()]
    native_language: Annotated[str, Sent(*text(max_length=64, pattern=r"\S.*", blank=False))]
    attentive: Annotated[bool, Sent()]
    no_ai_assistance: Annotated[bool, Sent()]
