"""A whole boxes session in Chromium: consent, practice with feedback, the grid, the survey.

The participant answers the first practice puzzle with one statement wrong (the feedback must
say so), lets one main puzzle's grid time out, and answers the rest correctly by clicking the
grid; the database must then hold every trial once, each answered one in the model's answer
format, scored by the boxes paradigm (Step-EM) exactly as a model's answer would be.
"""

from __future__ import annotations

from tests.experiment.browser_session import (
    answer_closing_screen,
    check_scores_and_times,
    stored_trials,
)
from tests.experiment.test_browser import (  # noqa: F401
    ARTIFACTS,
    COMPLETION,
    browser,
    shown_progress,
    study_page,
)
from tracktale.experiment.paradigms.boxes import shown_text
from tracktale.experiment.storage.store import Storage
from tracktale.experiment.study.config import study_from_dict
from tracktale.experiment.web.app import create_app
from tracktale.experiment.web.server import serve_in_thread
from tracktale.stimuli.registry import get_paradigm

READING_MS, RESPONSE_MS = 5000, 6000


def _key(text: str) -> str:
    return " ".join(text.split())


def _answer_grid(page, item, wrong_rows=()):
    for row, value in enumerate(item.truth["expected"]):
        letter = "T" if value != (row in wrong_rows) else "F"
        page.locator(f'[data-row="{row}"][data-value="{letter}"]').click()
    page.locator(".tt-submit").click()
    page.wait_for_selector(".tt-boxes-grid", state="detached")


def test_a_whole_boxes_session_in_chromium(browser, tmp_path, secrets):  # noqa: F811
    boxes_set = get_paradigm("boxes").generate_set("human", 1)
    config = study_from_dict(
        {
            "paradigm": "boxes",
            "database": str(tmp_path / "boxes.sqlite"),
            "prolific": {"completion_code": "DONE123", "screenout_code": "OUT456"},
            "timing": {"reading_ms": READING_MS, "response_ms": RESPONSE_MS, "feedback_ms": 1500},
        }
    )
    storage = Storage(config.database_url())
    app = create_app(config, storage=storage, stimulus_set=boxes_set, secrets=secrets)
    by_text = {_key(shown_text(item)): item for item in boxes_set}
    context, page, errors = study_page(browser, height=900)
    link = "/?PROLIFIC_PID=5f0c0ffee0000000000000bb&STUDY_ID=S1&SESSION_ID=SESSION2"
    verdicts, progress, shot = [], [], set()
    answered, timed_out, item = 0, False, None
    screens = {
        "consent": ".tt-consent",
        "reading": ".tt-reading",
        "grid": ".tt-boxes-grid",
        "feedback": ".tt-feedback",
        "survey": ".tt-survey",
        "debrief": ".tt-debrief",
        "final": ".tt-final",
        "info": ".tt-info",
        "message": ".tt-message",
    }

    def screen():
        page.wait_for_selector(", ".join(screens.values()), state="attached", timeout=20000)
        found = next((n for n, s in screens.items() if page.locator(s).count()), "message")
        if found not in shot:
            ARTIFACTS.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(ARTIFACTS / f"boxes-{found}.png"), full_page=True)
            shot.add(found)
        return found

    with serve_in_thread(app) as server:
        page.goto(server.url + link)
        while "app.prolific.com" not in page.url:
            name = screen()
            if name == "consent":
                assert "16 short puzzles" in page.locator(".tt-consent").inner_text()
                page.get_by_role("button", name="I agree").click()
            elif name == "reading":
                progress.append(shown_progress(page))
                item = by_text[_key(page.locator(".tt-story").inner_text())]
                page.wait_for_timeout(350)
                page.keyboard.press(" ")
                page.wait_for_selector(".tt-reading", state="detached")
            elif name == "grid":
                states = page.locator(".tt-grid-state").all_inner_texts()
                assert states == list(item.truth["queried"])
                if answered == 0:
                    _answer_grid(page, item, wrong_rows=(0,))
                elif answered == 5 and not timed_out:
                    page.wait_for_selector(
                        ".tt-boxes-grid", state="detached", timeout=RESPONSE_MS + 5000
                    )
                    timed_out = True
                else:
                    _answer_grid(page, item)
                answered += 1
            elif name == "feedback":
                verdicts.append(page.locator(".tt-verdict").inner_text())
                page.get_by_role("button", name="Continue").click()
            else:
                answer_closing_screen(page, name, lambda shot: None)
        assert page.url == COMPLETION
    context.close()
    assert not errors, errors
    assert verdicts == ["Not quite.", "Correct!"]
    assert progress[:2] == [None] * 2  # practice: not counted, no line
    assert progress[2] == "Puzzle 1 of 16" and progress[-1] == "Puzzle 16 of 16"

    trials = list(storage.trials())
    storage.close()
    trials = stored_trials(trials, practice=2, main=16)
    paradigm = get_paradigm("boxes")

    def scored(record):
        expected = boxes_set.get(record.item_id)
        scores = paradigm.score_response(expected, record.response)
        assert scores.parsed
        if record.trial_index == 0:
            assert scores.state_em == 11 / 12 and not scores.correct
        else:
            assert record.response == expected.answer and scores.correct
        return bool(scores.correct)

    check_scores_and_times(trials, scored, reading_ms=READING_MS, response_ms=RESPONSE_MS)
