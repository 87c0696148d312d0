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

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from tracktale.ethics import load_document
from tracktale.experiment.lab.session import LabSession, Reading, Response
from tracktale.experiment.study.config import StudyConfig
from tracktale.experiment.study.design import PlannedTrial
from tracktale.experiment.study.instructions import CHOICE_KEYS, GENDERS, instructions

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

    def read(self, story: str, limit_s: float, *, trial: int, minimum_s: float) -> Reading:
        """The story until SPACE or the limit."""

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
        """A choice between two options by key (``left``/``right``)."""

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
        self.timing = config.timing
        self.texts = instructions(self.timing.reading_ms, self.timing.response_ms, source="lab")
        seconds = {
            "reading_seconds": self.timing.reading_ms / 1000,
            "response_seconds": self.timing.response_ms / 1000,
        }
        self.documents = {
            name: load_document(f"lab_{name}", config.ethics, seconds).markdown
            for name in ("consent", "information", "debrief")
        }
        self.current: int | None = None
        self.completed = False

    def message(self, kind: str, paragraphs: Sequence[str], footer: str = "") -> None:
        self.display.page(
            kind,
            "\n\n".join(paragraphs),
            [CONTINUE],
            footer=footer or "Press the SPACE bar to continue.",
        )

    # consent --------------------------------------------------------------------------

    def consent(self) -> bool:
        footer = (
            "Press Y if you agree, N if you do not agree, "
            "or I to read the participant information sheet."
        )
        while True:
            key = self.display.document(
                "consent", self.documents["consent"], ["y", "n", "i"], footer=footer
            )
            if key != "i":
                break
            self.display.document(
                "information",
                self.documents["information"],
                [CONTINUE],
                footer="Press the SPACE bar to return to the consent form.",
            )
        agreed = key == "y"
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
                intro = ["Practice.", *intro]
            elif previous_role == "practice":
                intro = [*self.texts["main_start"], *intro]
            self.message("block-intro", intro, footer="Press the SPACE bar to start.")
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
        reading = self.display.read(
            shown["story"], limit_reading, trial=planned.trial_index, minimum_s=READING_MINIMUM_S
        )
        if planned.task == "explicit":
            response = self.display.type_word(
                "explicit",
                "Complete the sentence with one word and press ENTER.",
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
                keys=CHOICE_KEYS,
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

    def feedback(
        self, planned: PlannedTrial, shown: dict[str, Any], response: Response, correct: bool
    ) -> None:
        # The browser's wording (study.js feedbackHtml); the verdict is the study's own score.
        verdict = "Correct!" if correct else "Not quite."
        if response.timed_out:
            verdict = "Time is up."
        if planned.task == "explicit":
            detail = f"The answer was: {shown['feedback']['answer']}."
        else:
            detail = f"The {shown['feedback']['good_side']} sentence continues the story."
        self.display.page(
            "feedback",
            f"{verdict}\n\n{detail}",
            [CONTINUE],
            footer="Press the SPACE bar to continue.",
            timeout_s=self.timing.feedback_ms / 1000,
        )

    # the end --------------------------------------------------------------------------

    def survey(self) -> None:
        intro = " ".join(self.texts["survey"])
        age = self.display.type_word(
            "survey-age",
            intro,
            "Your age in years (leave it empty if you prefer not to say), then ENTER:",
            limit_s=None,
            max_length=3,
            allow_empty=True,
            digits_only=True,
        )
        while age.value and not 18 <= int(age.value) <= 120:
            age = self.display.type_word(
                "survey-age",
                "Please give an age between 18 and 120, or leave the box empty.",
                "Your age in years, then ENTER:",
                limit_s=None,
                max_length=3,
                allow_empty=True,
                digits_only=True,
            )
        numbered = "\n".join(f"{number}   {label}" for number, label in enumerate(GENDERS, 1))
        gender_key = self.display.page(
            "survey-gender",
            f"Gender:\n\n{numbered}",
            [str(number) for number in range(1, len(GENDERS) + 1)],
            footer=f"Press a number from 1 to {len(GENDERS)}.",
        )
        language = self.display.type_word(
            "survey-language",
            intro,
            "Your native language(s), then ENTER:",
            limit_s=None,
            max_length=64,
        )
        answers = {
            "age": int(age.value) if age.value else None,
            "gender": GENDERS[int(gender_key or 1) - 1],
            "native_language": (language.value or "").strip(),
            "attentive": self.yes_no(
                "survey-attentive", "Did you pay attention to the stories throughout the study?"
            ),
            "no_ai_assistance": self.yes_no(
                "survey-no-ai",
                "Did you complete the study without AI tools, notes or help from others?",
            ),
        }
        self.session.record_survey(answers)
        if self.recorder is not None:
            self.recorder.add_survey(answers)

    def yes_no(self, kind: str, question: str) -> bool:
        key = self.display.page(kind, question, ["y", "n"], footer="Press Y for yes or N for no.")
        return key == "y"


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
                "You did not consent, so the session ends here and none of your answers "
                "are recorded.\n\nPlease let the experimenter know.",
                [CONTINUE],
                footer="Press the SPACE bar to close.",
            )
            return RunResult("declined", 0, total)
        done = session.done()
        remaining = [trial for trial in session.trials if trial.trial_index not in done]
        if len(remaining) == total:
            runner.message("welcome", runner.texts["welcome"], "Press the SPACE bar to start.")
        elif remaining:
            runner.message("resume", runner.texts["resume"])
        runner.blocks(remaining)
        if not session.survey_done():
            runner.survey()
        display.document(
            "debrief", runner.documents["debrief"], [CONTINUE], footer="Press the SPACE bar."
        )
        session.complete()
        runner.completed = True
        display.page(
            "end",
            "Thank you! Your answers are saved and the session is complete.\n\n"
            "Please let the experimenter know.",
            [CONTINUE],
            footer="Press the SPACE bar to close.",
        )
    except Interrupted:
        stored = len(session.done())
        if runner.completed:
            return RunResult("completed", stored, total)
        if session.participant.consent is False:
            return RunResult("declined", 0, total)
        return RunResult("interrupted", stored, total, stopped_at=runner.current)
    return RunResult("completed", len(session.done()), total)
