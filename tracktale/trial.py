"""The trial-record contract: one human trial as stored, exported and analysed.

The browser study, lab mode and simulated participants all produce :class:`TrialRecord` rows;
the analysis reads them joined to the stimulus set on ``item_id``. The record holds what
happened in the trial; what the item was (complexity, focus, template, ...) stays in the
stimulus set and is never copied here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import MISSING, asdict, dataclass, fields
from typing import Any

from tracktale.errors import TracktaleError

TRIAL_TASKS = ("explicit", "implicit", "comprehension")
"""``explicit``: a typed one-word answer; ``implicit``: a choice between two continuations;
``comprehension``: a filler's question about a story detail."""
SOURCES = ("online", "lab", "simulated")
"""Where a session ran: the browser study, the PsychoPy lab mode, or a simulated participant."""
TRIAL_FLAGS = (
    "several_answers",
    "faster_than_reported",
    "later_than_limits",
    "times_over_limits",
)
"""What the server flags on a trial (stored, never dropped):

- ``several_answers``: a typed answer names more than one candidate answer (for narrative
  items, more than one container noun of the lexicon); scored incorrect by the default rule.
- ``faster_than_reported``: the answer arrived sooner after the trial was served than the
  browser's reading and response times add up to: those times cannot be true.
- ``later_than_limits``: the answer arrived later after the trial was served than both time
  limits allow (an answer delivered late from the browser's offline queue, or one given
  after the limits).
- ``times_over_limits``: the browser reports a reading or response time beyond its limit,
  which the page's own timers make impossible."""


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
            the server: the times the trial was served, less one.
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
    """

    client_trial_id: str
    participant_id: str
    study_id: str
    source: str
    stimulus_sha256: str
    item_id: str
    role: str
    task: str
    list_id: str
    block: int
    trial_index: int
    response: str | None
    correct: bool
    timed_out: bool
    reading_time_ms: float
    reading_timed_out: bool
    response_time_ms: float | None
    good_side: str | None
    screen_width: int
    screen_height: int
    blur_count: int
    hidden_count: int
    restarts: int = 0
    correct_paper_rule: bool | None = None
    flags: str = ""
    browser: int | None = None
    served_at: str | None = None
    answered_at: str | None = None
    server_elapsed_ms: float | None = None

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
        required = [f.name for f in fields(cls) if f.default is MISSING]
        names = [f.name for f in fields(cls) if f.name in data]
        unknown = sorted(set(data) - {f.name for f in fields(cls)})
        if unknown:
            raise TracktaleError(f"unknown trial field {unknown[0]!r}")
        for name in required:
            if name not in data:
                raise TracktaleError(f"trial field {name!r} is missing")
        for name in names:
            _check(name, data[name])
        return cls(**{name: data[name] for name in names})


_TYPES: dict[str, tuple[type, ...]] = {
    "block": (int,),
    "trial_index": (int,),
    "screen_width": (int,),
    "screen_height": (int,),
    "blur_count": (int,),
    "hidden_count": (int,),
    "restarts": (int,),
    "correct": (bool,),
    "correct_paper_rule": (bool, type(None)),
    "browser": (int, type(None)),
    "served_at": (str, type(None)),
    "answered_at": (str, type(None)),
    "server_elapsed_ms": (int, float, type(None)),
    "timed_out": (bool,),
    "reading_timed_out": (bool,),
    "reading_time_ms": (int, float),
    "response_time_ms": (int, float, type(None)),
    "response": (str, type(None)),
    "good_side": (str, type(None)),
}
_CHOICES = {
    "source": SOURCES,
    "task": TRIAL_TASKS,
    "role": ("main", "filler", "practice"),
    "good_side": ("left", "right", None),
}


def _check(name: str, value: Any) -> None:
    allowed = _TYPES.get(name, (str,))
    is_bool = isinstance(value, bool)
    if not isinstance(value, allowed) or (is_bool and bool not in allowed):
        raise TracktaleError(f"trial field {name!r} has the wrong type ({type(value).__name__})")
    if name in _CHOICES and value not in _CHOICES[name]:
        raise TracktaleError(f"trial field {name!r} must be one of {_CHOICES[name]}")
    if isinstance(value, int | float) and not is_bool and value < 0:
        raise TracktaleError(f"trial field {name!r} must not be negative")


PARTICIPANT_STATUSES = ("started", "completed", "returned", "screened_out")


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
    source: str
    list_id: str
    status: str
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
