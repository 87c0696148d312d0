"""The participant-facing instructions, as plain paragraphs (shared by every front end).

Consent and debrief come from :mod:`tracktale.ethics`; everything else a participant reads is
here, with the study's time limits filled in, so the browser and the lab mode say the same.
"""

from __future__ import annotations

from typing import Any

from tracktale.experiment.study.locale import Catalogue, load_catalogue
from tracktale.schema import GENDERS

__all__ = [
    "CHOICE_KEYS",
    "CONTINUE_KEY",
    "GENDERS",
    "instructions",
    "session_screens",
    "word_by_word_welcome",
]

CHOICE_KEYS = ("f", "j")
"""Keys for the left and right option of a two-alternative trial."""
CONTINUE_KEY = " "
"""Key that ends the reading screen early."""


def instructions(reading_ms: int, response_ms: int, *, source: str = "online") -> dict[str, Any]:
    """Every instruction text, keyed by screen.

    Args:
        reading_ms: The reading time limit.
        response_ms: The response time limit.
        source: ``online`` (the browser: keys or buttons) or ``lab`` (the PsychoPy window:
            keys only, no window to keep open).

    Returns:
        ``welcome``, ``explicit``, ``implicit``, ``main_start``, ``resume``, ``survey``,
        ``saving`` and ``completed_before``: lists of paragraphs (plain text); ``keys``: the
        response keys.
    """
    reading = _seconds(reading_ms)
    response = _seconds(response_ms)
    left, right = (key.upper() for key in CHOICE_KEYS)
    online = source != "lab"
    click_continue = " or click Continue" if online else ""
    click_button = ", or click the button under it" if online else ""
    keep_open = ["Please keep this window open and in the foreground until the end."]
    return {
        "welcome": [
            "In this study you will read short stories, one at a time, and answer a question "
            "after each.",
            f"Each story stays on the screen for at most {reading}. When you have read it, "
            f"press the SPACE bar{click_continue}. The story then disappears and a question "
            f"appears, which you must answer within {response} (reading the question "
            "included). The questions come in two kinds; each part starts with two practice "
            "stories.",
            "Please read each story carefully, as you would read any story, and answer as "
            "accurately as you can. Do not take notes and do not use AI tools or other help.",
            *(keep_open if online else []),
        ],
        "explicit": [
            "In this part, a sentence about the story will appear with its last word missing, "
            "for example: The key is in the ...",
            "Type the missing word (one word, such as where an object is now) and press "
            f"ENTER{' or click Submit' if online else ''}.",
            f"You have {response} for each answer.",
        ],
        "implicit": [
            "In this part, two sentences will appear side by side. Choose the one that "
            "continues the story correctly.",
            f"Press {left} for the left sentence or {right} for the right sentence{click_button}.",
            "Some questions instead ask about another detail of the story, with two possible "
            f"answers: choose with {left} and {right} in the same way.",
            f"You have {response} for each answer.",
        ],
        "main_start": [
            "The practice is over. The real stories start now; there is no feedback from here on.",
        ],
        **session_screens(),
    }


def word_by_word_welcome(welcome: list[str], reading_ms: int, mode: str, redo: bool) -> list[str]:
    """The welcome screen of the stories read word by word (self-paced reading or the Maze).

    Its paragraph on a whole story staying on the screen gives way to one on the mode; what it
    says of the question after the story stays (the paper's whole-story texts are unchanged).
    """
    reading = _seconds(reading_ms)
    if mode == "maze":
        how = (
            "Each story is read one word at a time: two words appear side by side, and you "
            "choose the one that continues the sentence, E for the left word, I for the right one. "
            + ("After a wrong choice, choose again." if redo else
               "Choose quickly but carefully: a wrong choice ends the story there.")
        )  # fmt: skip
    else:
        how = (
            "Each story is shown as dashes. Each press of the SPACE bar shows its next word and "
            "hides the one before; read at your normal pace."
        )
    marker = "a question appears"
    changed = []
    for paragraph in welcome:
        if paragraph.startswith("Each story stays on the screen") and marker in paragraph:
            after = paragraph[paragraph.index(marker) :]
            paragraph = f"{how} A story may take at most {reading}; then {after}"
        changed.append(paragraph)
    return changed


def session_screens(texts: Catalogue | None = None) -> dict[str, Any]:
    """The screens every paradigm shares, around its own instructions.

    ``resume``, ``survey``, ``saving`` and ``completed_before`` (lists of paragraphs, from the
    locale catalogue ``texts``, English by default) and the response ``keys``.
    """
    texts = texts or load_catalogue()
    screens: dict[str, Any] = {
        name: texts.paragraphs(f"screens.{name}")
        for name in ("resume", "survey", "saving", "completed_before")
    }
    screens["keys"] = {"left": CHOICE_KEYS[0], "right": CHOICE_KEYS[1], "continue": CONTINUE_KEY}
    return screens


def _seconds(milliseconds: int) -> str:
    seconds = milliseconds / 1000
    value = f"{seconds:g}"
    return f"{value} second" if value == "1" else f"{value} seconds"
