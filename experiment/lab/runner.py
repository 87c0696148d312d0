"""The participant's path in the lab, independent of how screens are drawn.

:func:`run_session` walks the same path as the browser study (``static/study.js``): consent
(with the information sheet), the welcome or resume screen, per block an introduction and its
trials (practice trials with feedback), the end-of-study questions, the debrief and completion.
It draws through a :class:`Display` (the PsychoPy window in :mod:`.screens`, or a scripted
stand-in in tests) and writes through a :class:`~.session.LabSession`, so the rules, storage and
scoring are the study's own. Escape at any screen raises :class:`Interrupted` in the display;
the run then stops, keeping everything stored, and the same participant id resumes.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from tracktale.experiment.lab.session import LabSession, Reading, Response
from tracktale.experiment.study.config import StudyConfig
from tracktale.experiment.study.design import PlannedTrial
from tracktale.experiment.study.instructions import CHOICE_KEYS, GENDERS, session_screens

CONTINUE = "space"
"""The key that moves on from a text screen (and ends the reading screen)."""
READING_MINIMUM_S = 0.3
CHOICE_MINIMUM_S = 0.2
MAX_TYPED = 40


class Interrupted(Exception):
    """Escape was pressed: stop the run, keep what is stored."""


class Display(Protocol):
    """What the runner needs from a screen; every method raises :class:`Interrupted` on Escape.

    ``kind`` names the screen (for the log and screenshots); ``trial`` its position, if any.
    """

    size: tuple[int, int]

    def page(
        self,
        kind: str,
        text: str,
        keys: Sequence[str],
        *,
        footer: str = "",
        timeout_s: float | None = None,
    ) -> str | None:
        """Show text until one of ``keys`` (returned) or the timeout (``None``)."""

    def document(self, kind: str, markdown: str, keys: Sequence[str], *, footer: str) -> str:
        """Show a long Markdown text page by page; the last page waits for one of ``keys``."""

    def read(
        self, story: str, limit_s: float, *, trial: int, minimum_s: float, footer: str
    ) -> Reading:
        """The story until SPACE or the limit, ``footer`` under it."""

    def type_word(
        self,
        kind: str,
        prompt: str,
        probe: str,
        *,
        limit_s: float | None,
        max_length: int,
        allow_empty: bool = False,
        digits_only: bool = False,
        trial: int | None = None,
    ) -> Response:
        """A typed answer, submitted with ENTER."""

    def choose(
        self,
        kind: str,
        question: str,
        options: Sequence[str],
        *,
        limit_s: float,
        keys: Sequence[str],
        trial: int,
        minimum_s: float,
    ) -> Response:
        """A choice by key: ``left``/``right`` of two options, else the option's number."""

    def focus_changes(self) -> tuple[int, int]:
        """Times the window lost focus and was hidden since the last call."""


@dataclass(frozen=True)
class RunResult:
    """How a run ended: ``completed``, ``declined`` or ``interrupted``, with what is stored."""

    outcome: str
    stored: int
    total: int
    stopped_at: int | None = None


class Recorder(Protocol):
    """Keeps a copy of what a run stored (PsychoPy's data file: :mod:`.datafile`)."""

    def add_trial(
        self, planned: PlannedTrial, reading: Reading, response: Response, stored: dict[str, Any]
    ) -> None:
        """A trial was stored: ``stored`` has the stored ``response`` and ``correct``."""

    def add_survey(self, answers: dict[str, Any]) -> None:
        """The survey answers were stored."""


class _Runner:
    def __init__(self, session: LabSession, display: Display, recorder: Recorder | None) -> None:
        self.session = session
        self.display = display
        self.recorder = recorder
        config: StudyConfig = session.service.config
        human = session.service.human
        self.timing = config.timing
        # Every word comes from the study's locale catalogue, around the paradigm's own texts.
        self.words = session.service.texts
        self.keys = {
            name: self.words.text(f"lab.keys.{name}") for name in ("yes", "no", "information")
        }
        self.noun = human.nouns()["singular"]
        self.texts = {
            **human.instructions(self.timing.reading_ms, self.timing.response_ms, "lab"),
            **session_screens(self.words),
        }
        seconds = {
            "reading_seconds": self.timing.reading_ms / 1000,
            "response_seconds": self.timing.response_ms / 1000,
        }
        self.documents = {
            name: config.document(f"lab_{name}", human.lab_documents[name], seconds).markdown
            for name in ("consent", "information", "debrief")
        }
        self.current: int | None = None
        self.completed = False

    def message(self, kind: str, paragraphs: Sequence[str], footer: str = "") -> None:
        self.display.page(
            kind,
            "\n\n".join(paragraphs),
            [CONTINUE],
            footer=footer or self.words.text("lab.press_continue"),
        )

    # consent --------------------------------------------------------------------------

    def consent(self) -> bool:
        keys = self.keys
        footer = self.words.text("lab.consent", **{name: key.upper() for name, key in keys.items()})
        wanted = [keys["yes"], keys["no"], keys["information"]]
        while True:
            key = self.display.document("consent", self.documents["consent"], wanted, footer=footer)
            if key != keys["information"]:
                break
            self.display.document(
                "information",
                self.documents["information"],
                [CONTINUE],
                footer=self.words.text("lab.back_to_consent"),
            )
        agreed = key == keys["yes"]
        self.session.record_consent(agreed)
        return agreed

    # trials ---------------------------------------------------------------------------

    def blocks(self, remaining: Sequence[PlannedTrial]) -> None:
        previous_role = None
        for block, fmt in enumerate(self.session.block_formats):
            trials = [trial for trial in remaining if trial.block == block]
            if not trials:
                continue
            practice = any(trial.role == "practice" for trial in trials)
            intro = list(self.texts[fmt])
            if practice:
                intro = [self.words.text("page.practice"), *intro]
            elif previous_role == "practice":
                intro = [*self.texts["main_start"], *intro]
            self.message("block-intro", intro, footer=self.words.text("lab.press_start"))
            for planned in trials:
                self.trial(planned)
            previous_role = "practice" if practice else "main"

    def trial(self, planned: PlannedTrial) -> None:
        shown = self.session.shown(planned)
        limit_reading = self.timing.reading_ms / 1000
        limit_response = self.timing.response_ms / 1000
        self.current = planned.trial_index
        self.session.begin_trial(planned.trial_index)
        self.display.focus_changes()  # count only what happens during this trial
        reading = self.read(shown, limit_reading, planned.trial_index)
        if planned.task == "explicit":
            response = self.display.type_word(
                "explicit",
                self.texts.get("typed_prompt") or self.words.text("lab.typed_prompt"),
                shown["probe"],
                limit_s=limit_response,
                max_length=MAX_TYPED,
                trial=planned.trial_index,
            )
        else:
            response = self.display.choose(
                planned.task,
                shown["probe"],
                shown["options"],
                limit_s=limit_response,
                keys=shown.get("keys") or CHOICE_KEYS,
                trial=planned.trial_index,
                minimum_s=CHOICE_MINIMUM_S,
            )
        blurs, hides = self.display.focus_changes()
        scored = self.session.save_trial(
            planned,
            reading,
            response,
            screen=self.display.size,
            blur_count=blurs,
            hidden_count=hides,
        )
        self.current = None
        if self.recorder is not None:
            stored = {"response": scored.response, "correct": scored.correct}
            self.recorder.add_trial(planned, reading, response, stored)
        if "feedback" in shown:
            self.feedback(planned, shown, response, scored.correct)

    def read(self, shown: dict[str, Any], limit_s: float, trial: int) -> Reading:
        """The text, or its screens one after another sharing the reading time."""
        screens = shown.get("screens") or [shown["story"]]
        footer = self.words.text("lab.reading", noun=self.noun)
        first: Reading | None = None
        spent_ms = 0.0
        for screen in screens:
            left_s = limit_s - spent_ms / 1000
            part = self.display.read(
                screen, left_s, trial=trial, minimum_s=READING_MINIMUM_S, footer=footer
            )
            first = first or part
            if part.timed_out or part.time_ms is None:
                # Timed out: the time is fixed from the first onset to the question's.
                return Reading(first.onset, None, True)
            spent_ms += part.time_ms
        assert first is not None
        return Reading(first.onset, spent_ms, False)

    def feedback(
        self, planned: PlannedTrial, shown: dict[str, Any], response: Response, correct: bool
    ) -> None:
        # The browser's wording (trials.js feedbackHtml); the verdict is the study's own score.
        words = self.words
        verdict = words.text("feedback.correct" if correct else "feedback.wrong")
        if response.timed_out:
            verdict = words.text("feedback.timed_out")
        given = shown["feedback"]
        if given.get("detail"):
            detail = str(given["detail"])
        elif "answer" in given:
            detail = words.text("feedback.answer", answer=given["answer"])
        else:
            detail = words.text(f"feedback.{given['good_side']}_continues")
        self.display.page(
            "feedback",
            f"{verdict}\n\n{detail}",
            [CONTINUE],
            footer=words.text("lab.press_continue"),
            timeout_s=self.timing.feedback_ms / 1000,
        )

    # the end --------------------------------------------------------------------------

    def survey(self) -> None:
        words = self.words
        intro = " ".join(self.texts["survey"])
        age = self.display.type_word(
            "survey-age",
            intro,
            words.text("lab.age"),
            limit_s=None,
            max_length=3,
            allow_empty=True,
            digits_only=True,
        )
        while age.value and not 18 <= int(age.value) <= 120:
            age = self.display.type_word(
                "survey-age",
                words.text("lab.age_again"),
                words.text("lab.age_short"),
                limit_s=None,
                max_length=3,
                allow_empty=True,
                digits_only=True,
            )
        labels = [words.text("survey.genders." + re.sub(r"\W+", "_", value)) for value in GENDERS]
        numbered = "\n".join(f"{number}   {label}" for number, label in enumerate(labels, 1))
        gender_key = self.display.page(
            "survey-gender",
            f"{words.text('lab.gender')}\n\n{numbered}",
            [str(number) for number in range(1, len(GENDERS) + 1)],
            footer=words.text("lab.gender_keys", n=len(GENDERS)),
        )
        language = self.display.type_word(
            "survey-language",
            intro,
            words.text("lab.native_language"),
            limit_s=None,
            max_length=64,
        )
        nouns = self.session.service.human.nouns()["plural"]
        answers = {
            "age": int(age.value) if age.value else None,
            "gender": GENDERS[int(gender_key or 1) - 1],
            "native_language": (language.value or "").strip(),
            "attentive": self.yes_no(
                "survey-attentive", words.text("survey.attentive", nouns=nouns)
            ),
            "no_ai_assistance": self.yes_no("survey-no-ai", words.text("survey.no_ai")),
        }
        self.session.record_survey(answers)
        if self.recorder is not None:
            self.recorder.add_survey(answers)

    def yes_no(self, kind: str, question: str) -> bool:
        yes, no = self.keys["yes"], self.keys["no"]
        footer = self.words.text("lab.yes_no", yes=yes.upper(), no=no.upper())
        key = self.display.page(kind, question, [yes, no], footer=footer)
        return key == yes


def run_session(
    session: LabSession, display: Display, *, recorder: Recorder | None = None
) -> RunResult:
    """Run (or resume) a lab participant's session to its end or to Escape.

    Args:
        session: The participant's session (started or resumed).
        display: Draws the screens and measures the answers.
        recorder: Keeps a copy of each stored trial and the survey (PsychoPy's data file).

    Returns:
        ``completed`` (every trial and answer stored, status completed), ``declined`` (no
        consent: screened out, nothing recorded) or ``interrupted`` (Escape; resume later).
    """
    runner = _Runner(session, display, recorder)
    total = len(session.trials)
    try:
        if not session.participant.consent and not runner.consent():
            display.page(
                "declined",
                "\n\n".join(runner.words.paragraphs("lab.declined")),
                [CONTINUE],
                footer=runner.words.text("lab.press_close"),
            )
            return RunResult("declined", 0, total)
        done = session.done()
        remaining = [trial for trial in session.trials if trial.trial_index not in done]
        if len(remaining) == total:
            runner.message("welcome", runner.texts["welcome"], runner.words.text("lab.press_start"))
        elif remaining:
            runner.message("resume", runner.texts["resume"])
        runner.blocks(remaining)
        if not session.survey_done():
            runner.survey()
        display.document(
            "debrief",
            runner.documents["debrief"],
            [CONTINUE],
            footer=runner.words.text("lab.press_space"),
        )
        session.complete()
        runner.completed = True
        display.page(
            "end",
            "\n\n".join(runner.words.paragraphs("lab.end")),
            [CONTINUE],
            footer=runner.words.text("lab.press_close"),
        )
    except Interrupted:
        stored = len(session.done())
        if runner.completed:
            return RunResult("completed", stored, total)
        if session.participant.consent is False:
            return RunResult("declined", 0, total)
        return RunResult("interrupted", stored, total, stopped_at=runner.current)
    return RunResult("completed", len(session.done()), total)
