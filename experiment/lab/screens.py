"""The lab's screens in a PsychoPy window, with frame-locked onsets and response times.

Every screen is drawn, then flipped; the flip's timestamp is the onset, and keys are timed on
the same PsychoPy clock, so reading and response times run from the frame the text appeared
on, and a key pressed before that frame never counts. Keys come from PsychoPy's ``Keyboard``
with the Psychtoolbox backend (timestamps from the key event itself) when it is available, else
from ``psychopy.event`` (timestamps at the frame the event was handled). A time limit ends a
screen on the frame nearest the limit. Typed answers use PsychoPy's ``TextBox2``.

Every screen's onset is written to PsychoPy's log (``screen=KIND trial=N``, stamped with the
flip time), and with ``screenshots`` the first frame of every kind of screen is saved as PNG
(captured from the back buffer before the flip, i.e. exactly what was shown).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from psychopy import event, logging, visual

from tracktale.errors import TracktaleError
from tracktale.experiment.lab.pages import paginate
from tracktale.experiment.lab.runner import Interrupted
from tracktale.experiment.lab.session import Reading, Response
from tracktale.experiment.study.locale import Catalogue, load_catalogue

BACKGROUND = "white"
TEXT_COLOR = "black"
FONT = "Noto Sans"  # shipped with PsychoPy: no font download, the same glyphs everywhere
TEXT_WIDTH = 1.15  # in units of the window's height; fits a 4:3 screen
LETTER_HEIGHT = 0.032
DOCUMENT_LETTER_HEIGHT = 0.026
KEYBOARDS = ("auto", "ptb", "event")
"""Keyboard backends: Psychtoolbox when it loads (``auto``), Psychtoolbox or fail, or
``psychopy.event``."""


class KeySource:
    """Key presses, timed on PsychoPy's clock (the one ``win.flip()`` reports).

    Uses ``psychopy.hardware.keyboard.Keyboard`` with the Psychtoolbox backend when it can be
    started (the key event's own timestamp), else ``psychopy.event`` (the time the event was
    handled, at a frame).
    """

    def __init__(self, backend: str = "auto") -> None:
        if backend not in KEYBOARDS:
            raise TracktaleError(
                f"unknown keyboard {backend!r} (choose from {', '.join(KEYBOARDS)})"
            )
        self.keyboard = None
        self.backend = "event"
        self._reported: list[Any] = []
        if backend == "event":
            return
        try:
            from psychopy.hardware import keyboard

            candidate = keyboard.Keyboard(backend="ptb")
            if candidate.getBackend() != "ptb":
                raise RuntimeError(f"PsychoPy chose the {candidate.getBackend()} backend")
            self.keyboard, self.backend = candidate, "ptb"
        except Exception as error:  # noqa: BLE001 - any failure means no Psychtoolbox keyboard
            if backend == "ptb":
                raise TracktaleError(
                    f"the Psychtoolbox keyboard is not available ({error}); on Debian/Ubuntu "
                    "install libjack-jackd2-0, or use --keyboard event"
                ) from None
            logging.warning(f"tracktale: Psychtoolbox keyboard unavailable ({error})")

    def clear(self) -> None:
        """Forget keys pressed so far."""
        if self.keyboard is not None:
            self.keyboard.clearEvents()
        event.clearEvents(eventType="keyboard")
        self._reported.clear()

    def poll(self, since: float) -> list[tuple[str, float]]:
        """Keys pressed at or after ``since``: (name, seconds after ``since``), in order."""
        if self.keyboard is None:
            pressed = event.getKeys(timeStamped=logging.defaultClock)
            return [(name, t - since) for name, t in pressed if t >= since]
        event.getKeys()  # keep pyglet's own key buffer from growing
        # A press whose release arrives in the same batch is only returned by the
        # waitRelease=True call; a press returned earlier comes back there once released.
        found = self.keyboard.getKeys(waitRelease=False) + self.keyboard.getKeys(waitRelease=True)
        keys = []
        for key in found:
            if any(key is seen for seen in self._reported):
                continue
            self._reported.append(key)
            # Releases can be matched to presses from before this screen: drop those.
            if key.tDown >= since:
                keys.append((key.name, float(key.tDown) - since))
        return sorted(keys, key=lambda pair: pair[1])


class PsychoPyDisplay:
    """The lab's screens in one PsychoPy window.

    Args:
        fullscreen: Full screen (the default in the lab) or a window.
        screen: Which physical screen to use.
        window_size: Size of the window when not full screen.
        screenshots: Folder for a PNG of the first frame of each kind of screen.
        frame_cap: Draw at most this many frames per second (for virtual screens that do not
            wait for the vertical blank); 0: as the display allows.
        keyboard: One of :data:`KEYBOARDS`.
        texts: The study's locale catalogue (the window's own words: page turns, hints).
        direction: ``rtl`` lays text out right to left (Hebrew, Arabic).
    """

    def __init__(
        self,
        *,
        fullscreen: bool = True,
        screen: int = 0,
        window_size: tuple[int, int] = (1024, 768),
        screenshots: Path | None = None,
        frame_cap: float = 0.0,
        keyboard: str = "auto",
        texts: Catalogue | None = None,
        direction: str = "ltr",
    ) -> None:
        self.words = texts or load_catalogue()
        self.language_style = "RTL" if direction == "rtl" else "LTR"
        self.keys = KeySource(keyboard)  # before the window: a refused backend opens nothing
        self.win = visual.Window(
            size=window_size,
            fullscr=fullscreen,
            screen=screen,
            units="height",
            color=BACKGROUND,
            colorSpace="named",
            allowGUI=not fullscreen,
            title="tracktale",
            checkTiming=True,
        )
        self.win.mouseVisible = False
        self.size = (int(self.win.size[0]), int(self.win.size[1]))
        self.frame_period = float(self.win.monitorFramePeriod or 1 / 60)
        self.min_interval = 1.0 / frame_cap if frame_cap > 0 else 0.0
        if self.min_interval:
            self.frame_period = max(self.frame_period, self.min_interval)
        self.screenshots = screenshots
        self._captured: set[str] = set()
        self._last_flip = 0.0
        self._blurs = 0
        self._hides = 0
        self._watch_focus()
        self._make_stimuli()

    @property
    def frame_rate(self) -> float:
        """Frames per second measured when the window opened (capped, if capped)."""
        return 1.0 / self.frame_period

    def close(self) -> None:
        """Close the window."""
        self.win.close()

    # building blocks ----------------------------------------------------------------

    def _watch_focus(self) -> None:
        handle = getattr(self.win, "winHandle", None)
        if handle is None or not hasattr(handle, "push_handlers"):
            return

        def deactivated() -> None:
            self._blurs += 1

        def hidden() -> None:
            self._hides += 1

        handle.push_handlers(on_deactivate=deactivated, on_hide=hidden)

    def focus_changes(self) -> tuple[int, int]:
        """Times the window lost focus and was hidden since the last call."""
        counts = (self._blurs, self._hides)
        self._blurs = self._hides = 0
        return counts

    def _text(self, **options: Any) -> visual.TextBox2:
        settings = {
            "font": FONT,
            "units": "height",
            "letterHeight": LETTER_HEIGHT,
            "color": TEXT_COLOR,
            "colorSpace": "named",
            "size": (TEXT_WIDTH, None),
            "alignment": "center",
            "formattingSyntax": "raw",
            "placeholder": "",
            "autoLog": False,
            "languageStyle": self.language_style,
        }
        settings.update(options)
        return visual.TextBox2(self.win, "", **settings)

    def _make_stimuli(self) -> None:
        self.body = self._text(pos=(0, 0.05), alignment="top-left", size=(TEXT_WIDTH, 0.75))
        self.body.anchor = "center"
        self.document_text = self._text(
            pos=(0, 0.03),
            alignment="top-left",
            size=(TEXT_WIDTH, 0.86),
            letterHeight=DOCUMENT_LETTER_HEIGHT,
            formattingSyntax="md",
        )
        self.prompt = self._text(pos=(0, 0.3), letterHeight=0.028, color="dimgray")
        self.question = self._text(pos=(0, 0.3))
        self.probe = self._text(pos=(0, 0.12))
        self.answer = self._text(
            pos=(0, 0.0),
            size=(0.6, 0.07),
            editable=True,
            borderColor="black",
            fillColor="white",
            alignment="center",
            placeholder="",
        )
        self.hint = self._text(pos=(0, -0.12), letterHeight=0.026, color="darkred")
        self.footer = self._text(pos=(0, -0.44), letterHeight=0.024, color="dimgray")
        self._lay_out_options(2)
        self.timer = visual.Rect(
            self.win, width=0.8, height=0.008, pos=(0, 0.46), fillColor="dimgray", lineWidth=0
        )

    def _lay_out_options(self, count: int) -> None:
        """Frames for ``count`` options side by side (and their keys under them)."""
        width = TEXT_WIDTH / count
        places = [-TEXT_WIDTH / 2 + width * (index + 0.5) for index in range(count)]
        self.options = [
            self._text(
                pos=(x, 0.0),
                size=(min(0.52, width - 0.08), 0.3),
                borderColor="black",
                padding=0.02,
            )
            for x in places
        ]
        self.option_keys = [self._text(pos=(x, -0.2), letterHeight=0.04) for x in places]

    def _draw_timer(self, elapsed: float, limit: float | None) -> None:
        if not limit:
            return
        left = max(0.0, 1.0 - elapsed / limit)
        if left > 0:
            self.timer.width = 0.8 * left
            self.timer.draw()

    def _flip(self) -> float:
        moment = self.win.flip()
        if self.min_interval:
            wait = self._last_flip + self.min_interval - time.perf_counter()
            if wait > 0:
                time.sleep(wait)
        self._last_flip = time.perf_counter()
        return float(moment)

    def _run(
        self,
        kind: str,
        draw: Callable[[float], None],
        handle: Callable[[list[tuple[str, float]], float], Any],
        *,
        limit_s: float | None = None,
        trial: int | None = None,
    ) -> tuple[Any, float, bool]:
        """Show a screen until ``handle`` returns a value or the limit passes.

        Returns:
            ``handle``'s value (``None`` on a timeout), the onset flip time, and whether the
            limit ran out.
        """
        self.keys.clear()
        draw(0.0)
        if self.screenshots is not None and kind not in self._captured:
            self._capture(self.screenshots, kind)
        label = f"tracktale screen={kind}" + (f" trial={trial}" if trial is not None else "")
        self.win.logOnFlip(label, level=logging.EXP)
        onset = self._flip()
        logging.flush()
        shown_until = onset
        while True:
            keys = self.keys.poll(onset)
            if any(name == "escape" for name, _ in keys):
                logging.exp(f"tracktale escape screen={kind}")
                logging.flush()
                raise Interrupted(kind)
            result = handle(keys, logging.defaultClock.getTime() - onset)
            if result is not None:
                return result, onset, False
            # End on the frame nearest the limit: the next flip is the next screen's onset.
            if limit_s is not None and shown_until - onset + 1.5 * self.frame_period > limit_s:
                return None, onset, True
            draw(shown_until - onset)
            shown_until = self._flip()

    def _capture(self, folder: Path, kind: str) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        image = self.win.getMovieFrame(buffer="back")
        self.win.movieFrames.clear()
        image.save(folder / f"{kind}.png")
        self._captured.add(kind)

    @staticmethod
    def _pressed(keys: list[tuple[str, float]], wanted: Sequence[str], after: float = 0.0):
        for name, moment in keys:
            if name in wanted and moment >= after:
                return name, moment
        return None

    # screens ------------------------------------------------------------------------

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
        self.body.text = text
        self.footer.text = footer

        def draw(_elapsed: float) -> None:
            self.body.draw()
            self.footer.draw()

        def handle(pressed: list[tuple[str, float]], _now: float) -> str | None:
            hit = self._pressed(pressed, keys)
            return hit[0] if hit else None

        result, _, _ = self._run(kind, draw, handle, limit_s=timeout_s)
        return result

    def document(self, kind: str, markdown: str, keys: Sequence[str], *, footer: str) -> str:
        """Show a long Markdown text page by page; the last page waits for one of ``keys``."""
        pages = paginate(markdown)
        number = 0
        while True:
            last = number == len(pages) - 1
            self.document_text.text = pages[number]
            words = self.words
            moves = words.text("lab.next_page") if not last else footer
            if number:
                moves += "   " + words.text("lab.previous_page")
            of = words.text("lab.page_of", n=number + 1, total=len(pages))
            self.footer.text = f"{moves}   {of}"
            wanted = [*keys, "backspace"] if last else ["space", "backspace"]

            def draw(_elapsed: float) -> None:
                self.document_text.draw()
                self.footer.draw()

            def handle(pressed: list[tuple[str, float]], _now: float, wanted=wanted) -> str | None:
                hit = self._pressed(pressed, wanted)
                return hit[0] if hit else None

            name = kind if number == 0 else f"{kind}-{number + 1}"
            key, _, _ = self._run(name, draw, handle)
            if key == "backspace":
                number = max(0, number - 1)
            elif not last:
                number += 1
            else:
                return key

    def read(
        self, story: str, limit_s: float, *, trial: int, minimum_s: float, footer: str
    ) -> Reading:
        """The story until SPACE (after ``minimum_s``) or the limit, ``footer`` under it."""
        self.body.text = story
        self.footer.text = footer

        def draw(elapsed: float) -> None:
            self._draw_timer(elapsed, limit_s)
            self.body.draw()
            self.footer.draw()

        def handle(pressed: list[tuple[str, float]], _now: float) -> float | None:
            hit = self._pressed(pressed, ["space"], after=minimum_s)
            return hit[1] if hit else None

        pressed_at, onset, timed_out = self._run(
            "reading", draw, handle, limit_s=limit_s, trial=trial
        )
        # On a timeout the reading time is fixed by the next screen's onset (see LabSession).
        return Reading(onset, None if timed_out else pressed_at * 1000, timed_out)

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
        """A typed answer in a text box, submitted with ENTER."""
        self.prompt.text = prompt
        self.probe.text = probe
        self.answer.text = ""
        self.answer.hasFocus = True
        self.hint.text = ""
        self.footer.text = ""
        enter_times: list[float] = []

        def draw(elapsed: float) -> None:
            self._draw_timer(elapsed, limit_s)
            for stimulus in (self.prompt, self.probe, self.answer, self.hint):
                stimulus.draw()

        def handle(pressed: list[tuple[str, float]], now: float) -> str | None:
            enter_times.extend(moment for name, moment in pressed if name in ("return", "enter"))
            raw = self.answer.text
            # ENTER reaches the box as a new line: that is the submission.
            submitted = "\n" in raw
            text = raw.replace("\n", "")
            if digits_only:
                text = "".join(character for character in text if character.isdigit())
            text = text[:max_length]
            if text != raw.replace("\n", ""):
                self.answer.text = text
            if not submitted:
                return None
            if not text.strip() and not allow_empty:
                self.answer.text = ""
                self.hint.text = self.words.text("lab.empty_answer")
                return None
            if not enter_times:
                enter_times.append(now)
            return text.strip()

        value, onset, _ = self._run(kind, draw, handle, limit_s=limit_s, trial=trial)
        self.answer.hasFocus = False
        if value is None:
            return Response(onset, None, None)
        return Response(onset, value, enter_times[-1] * 1000)

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
        """Options side by side, chosen with their keys.

        The choice is ``left``/``right`` of two options, else the option's number (``1``...).
        """
        self.question.text = question
        if len(self.options) != len(options):
            self._lay_out_options(len(options))
        for box, label, text, key in zip(
            self.options, self.option_keys, options, keys, strict=True
        ):
            box.text = text
            label.text = key.upper()
        if len(options) == 2:
            self.footer.text = self.words.text(
                "lab.choose_two", left=keys[0].upper(), right=keys[1].upper()
            )
        else:
            self.footer.text = self.words.text(
                "lab.choose_many", first=keys[0].upper(), last=keys[-1].upper()
            )
        names = ["left", "right"] if len(options) == 2 else [str(n + 1) for n in range(len(keys))]

        def draw(elapsed: float) -> None:
            self._draw_timer(elapsed, limit_s)
            self.question.draw()
            for stimulus in (*self.options, *self.option_keys):
                stimulus.draw()
            self.footer.draw()

        def handle(pressed: list[tuple[str, float]], _now: float) -> tuple[str, float] | None:
            hit = self._pressed(pressed, keys, after=minimum_s)
            if not hit:
                return None
            return names[list(keys).index(hit[0])], hit[1]

        chosen, onset, _ = self._run(kind, draw, handle, limit_s=limit_s, trial=trial)
        if chosen is None:
            return Response(onset, None, None)
        return Response(onset, chosen[0], chosen[1] * 1000)
