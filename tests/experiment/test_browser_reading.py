"""The narrative study read word by word in Chromium: self-paced reading with the space bar.

The participant consents and reads the first stories of the session by pressing SPACE once a
word (the page shows dashes, then one word at a time), answering each story's question as in
the whole-story study. In the middle of the second story the page is reloaded: the story is
served again and read from its first word. The database must then hold, for every answered
trial, each word of its story exactly once, in order, with a time per word, and the reloaded
trial counted as restarted once. In the Maze (items given made-up distractors) the
participant chooses with E and I through three stories, once choosing wrong, which ends that
story's reading there (the default, without "redo"): every word reached is stored once, with
the side chosen and whether it was right.
"""

from __future__ import annotations

import dataclasses

from tests.experiment.test_browser import (  # noqa: F401
    ARTIFACTS,
    Participant,
    browser,
    study_page,
)
from tests.experiment.test_words import maze_set
from tracktale.experiment.study.config import Timing
from tracktale.experiment.web.app import create_app
from tracktale.experiment.web.server import serve_in_thread
from tracktale.trial import TIMING_FLAGS

STORIES = 5
"""Stories read before the test stops (the practice ones and the first test ones)."""


def _read_story(page, stop_after: int | None = None) -> list[str]:
    """Press SPACE through the story, collecting the word shown after each press."""
    page.wait_for_timeout(100)
    shown: list[str] = []
    count = page.locator(".tt-spr-word").count()
    assert page.locator(".tt-spr-shown").count() == 0, "the story starts as dashes"
    for _ in range(count):
        page.keyboard.press("Space")
        word = page.locator(".tt-spr-shown")
        assert word.count() == 1, "the moving window shows one word"
        shown.append(word.inner_text())
        if stop_after is not None and len(shown) == stop_after:
            return shown
    page.keyboard.press("Space")
    page.wait_for_selector(".tt-spr", state="detached")
    return shown


def test_self_paced_reading_in_chromium(browser, study_config, storage, human_set, secrets):  # noqa: F811
    config = dataclasses.replace(
        study_config,
        reading_mode="self_paced",
        timing=Timing(reading_ms=60000, response_ms=20000, feedback_ms=1000),
    )
    app = create_app(config, storage=storage, stimulus_set=human_set, secrets=secrets)
    context, page, errors = study_page(browser)
    link = "/?PROLIFIC_PID=5f0c0ffee0000000000000cc&STUDY_ID=S1&SESSION_ID=SESSION3"
    stories: list[str] = []
    reloaded = False
    with serve_in_thread(app) as server:
        page.goto(server.url + link)
        who = Participant(page, human_set)
        who.screen = lambda: _screen(page)
        while who.answered < STORIES:
            screen = who.screen()
            if screen == "consent":
                page.get_by_role("button", name="I agree").click()
            elif screen == "reading":
                if len(stories) == 1 and not reloaded:
                    _read_story(page, stop_after=5)
                    page.reload()  # in the middle of the story
                    reloaded = True
                    continue
                ARTIFACTS.mkdir(parents=True, exist_ok=True)
                page.screenshot(path=str(ARTIFACTS / "self-paced-reading.png"))
                words = _read_story(page)
                stories.append(" ".join(words))
                who.story = next(c for c in (*who.by_story, *who.fillers) if c.split() == words)
            elif screen == "explicit":
                who.type_answer()
            elif screen == "choice":
                who.choose()
            elif screen == "feedback":
                page.get_by_role("button", name="Continue").click()
            elif screen == "info":
                page.locator("#jspsych-html-button-response-btngroup button").first.click()
            else:
                page.wait_for_timeout(200)
        # The last answer leaves through the outbox: wait until the server has it.
        page.wait_for_function("() => !document.querySelector('#save-status:not([hidden])')")
        page.wait_for_timeout(500)
    context.close()
    assert not errors, errors
    assert reloaded and len(stories) == STORIES

    trials = sorted(storage.trials(), key=lambda record: record.trial_index)
    words = list(storage.words())
    assert [t.trial_index for t in trials] == list(range(STORIES))
    assert [t.restarts for t in trials] == [0, 1, 0, 0, 0]
    for trial in trials:
        mine = [w for w in words if w.trial_index == trial.trial_index]
        story = human_set.get(trial.item_id).context.split()
        # Every word once, in order, each with its own time: none lost, none twice.
        assert [w.word_index for w in mine] == list(range(len(story)))
        assert [w.word for w in mine] == story
        assert {w.client_trial_id for w in mine} == {trial.client_trial_id}
        assert all(0 < w.rt_ms < 10000 and w.mode == "self_paced" for w in mine)
        assert 0 < trial.reading_time_ms < 60000 and not trial.reading_timed_out
        # The screen's time covers the words' times, and the server's clock agrees with both.
        assert trial.reading_time_ms >= sum(w.rt_ms for w in mine)
        assert not trial.flag_set & set(TIMING_FLAGS), trial.flags
    assert len(words) == sum(len(human_set.get(t.item_id).context.split()) for t in trials)


def _screen(page, maze: bool = False) -> str:
    selectors = {
        "consent": ".tt-consent",
        "reading": ".tt-maze" if maze else ".tt-spr",
        "explicit": ".tt-text-response",
        "choice": ".tt-choice",
        "feedback": ".tt-feedback",
        "info": ".tt-info",
        "message": ".tt-message",
    }
    page.wait_for_selector(", ".join(selectors.values()), state="attached", timeout=15000)
    return next((n for n, s in selectors.items() if page.locator(s).count()), "message")


def _run_maze(page, wrong_at: int | None = None) -> list[str]:
    """Choose through the pairs (E: left, I: right); choose wrong at word ``wrong_at``."""
    page.wait_for_timeout(100)
    chosen: list[str] = []
    while page.locator(".tt-maze").count():
        cells = page.locator(".tt-maze-word").all_inner_texts()
        real = 0 if not (cells[0] == "x-x-x" or cells[0].endswith("q")) else 1
        wrong = len(chosen) == wrong_at
        pick = 1 - real if wrong else real
        chosen.append(cells[real])
        page.keyboard.press("e" if pick == 0 else "i")
        if wrong:
            break
        # The next pair (or the next screen) replaces this one before the next look.
        page.wait_for_function(
            "(before) => !document.querySelector('.tt-maze') || [...document"
            ".querySelectorAll('.tt-maze-word')].map((c) => c.textContent).join('|') !== before",
            arg="|".join(cells),
            timeout=5000,
        )
    page.wait_for_selector(".tt-maze", state="detached")
    return chosen


def test_maze_in_chromium(browser, study_config, storage, human_set, secrets):  # noqa: F811
    stimuli = maze_set(human_set)
    config = dataclasses.replace(
        study_config,
        reading_mode="maze",
        timing=Timing(reading_ms=90000, response_ms=20000, feedback_ms=1000),
    )
    app = create_app(config, storage=storage, stimulus_set=stimuli, secrets=secrets)
    context, page, errors = study_page(browser)
    link = "/?PROLIFIC_PID=5f0c0ffee0000000000000dd&STUDY_ID=S1&SESSION_ID=SESSION4"
    read: list[list[str]] = []
    with serve_in_thread(app) as server:
        page.goto(server.url + link)
        who = Participant(page, stimuli)
        who.screen = lambda: _screen(page, maze=True)
        while who.answered < 3:
            screen = who.screen()
            if screen == "consent":
                page.get_by_role("button", name="I agree").click()
            elif screen == "reading":
                page.screenshot(path=str(ARTIFACTS / "maze.png"))
                words = _run_maze(page, wrong_at=3 if len(read) == 1 else None)
                read.append(words)
                who.story = next(
                    c for c in (*who.by_story, *who.fillers) if c.split()[: len(words)] == words
                )
            elif screen == "explicit":
                who.type_answer()
            elif screen == "choice":
                who.choose()
            elif screen == "feedback":
                page.get_by_role("button", name="Continue").click()
            elif screen == "info":
                page.locator("#jspsych-html-button-response-btngroup button").first.click()
            else:
                page.wait_for_timeout(200)
        page.wait_for_function("() => !document.querySelector('#save-status:not([hidden])')")
        page.wait_for_timeout(500)
    context.close()
    assert not errors, errors
    trials = sorted(storage.trials(), key=lambda record: record.trial_index)
    words = list(storage.words())
    assert [t.trial_index for t in trials] == [0, 1, 2]
    for trial in trials:
        mine = [w for w in words if w.trial_index == trial.trial_index]
        story = stimuli.get(trial.item_id).context.split()
        expected = 4 if trial.trial_index == 1 else len(story)
        assert [w.word_index for w in mine] == list(range(expected))
        assert [w.word for w in mine] == story[:expected]
        assert [w.correct for w in mine] == [True] * (expected - 1) + [trial.trial_index != 1]
        assert all(w.mode == "maze" and w.choice in ("left", "right") for w in mine)
        assert all(w.distractor and w.rt_ms > 0 and w.errors is None for w in mine)
        assert trial.reading_time_ms >= sum(w.rt_ms for w in mine)
        assert not trial.flag_set & set(TIMING_FLAGS), trial.flags
    sides = {w.choice for w in words if w.correct}
    assert sides == {"left", "right"}, "the real word takes both sides"
