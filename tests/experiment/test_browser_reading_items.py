"""An imported Dutch study read word by word in Chromium: self-paced reading with the space bar.

The Dutch test set (``tests/experiment/data/items_nl``) runs with ``reading_mode: self_paced``.
The participant consents, and reads the practice texts and the first test texts by pressing
SPACE once a word, each text shown first as dashes, then one word at a time; the hint under
the text is the Dutch catalogue's (``trial.spr_prompt``), and no screen shows English. Each
question is answered with real key presses (F and J for the two places, ENTER after a typed
answer). The database must then hold, for every answered trial, each word of its text exactly
once, in order, with a time per word.

In the Maze (the set given made-up distractors, ``maze_redo: true``) the participant chooses
with E and I through two texts, once wrong in each: the Dutch message asks for another try and
the word's record counts the error; the hint is the Dutch ``trial.maze_prompt``.
"""

from __future__ import annotations

from tests.experiment.items_sets import ETHICS_NL, dutch_set, study_folder
from tests.experiment.test_browser import (  # noqa: F401
    ARTIFACTS,
    browser,
    study_page,
)
from tests.experiment.test_browser_items import english_on
from tracktale.experiment.storage.store import Storage
from tracktale.experiment.study.config import load_study
from tracktale.experiment.study.locale import load_catalogue
from tracktale.experiment.web.app import create_app
from tracktale.experiment.web.server import serve_in_thread
from tracktale.trial import TIMING_FLAGS

TEXTS = 4
"""Texts read before the test stops (the two practice texts and the first two test texts)."""
SCREENS = {
    "consent": ".tt-consent",
    "info": ".tt-info",
    "reading": ".tt-spr",
    "typed": ".tt-text-response",
    "choice": ".tt-choice",
    "feedback": ".tt-feedback",
    "message": ".tt-message",
}


def _screen(page) -> str:
    page.wait_for_selector(", ".join(SCREENS.values()), state="attached", timeout=20_000)
    return next((name for name, css in SCREENS.items() if page.locator(css).count()), "message")


def _answer_or_wait(page, name: str, by_text: dict, read: list[list[str]]) -> int:
    """Answer a question screen with real keys (1), or pass a feedback or wait screen (0)."""
    if name == "feedback":
        page.get_by_role("button", name="Doorgaan").click()
        return 0
    if name not in ("typed", "choice"):
        page.wait_for_timeout(200)
        return 0
    item = by_text[" ".join(read[-1])]
    page.wait_for_timeout(250)  # the first moments ignore keys
    if name == "choice":
        options = page.locator(".tt-option p").all_inner_texts()
        page.keyboard.press("fj"[options.index(item.answer)])
    else:
        page.locator("#tt-answer").fill(item.answer)
        page.keyboard.press("Enter")
    page.wait_for_selector(SCREENS[name], state="detached")
    return 1


def _wait_until_saved(page) -> None:
    """The last answer leaves through the outbox: wait until the server has it."""
    page.wait_for_function("() => !document.querySelector('#save-status:not([hidden])')")
    page.wait_for_timeout(500)


def _read(page) -> list[str]:
    """Press SPACE through the text, collecting the word shown after each press."""
    page.wait_for_timeout(100)
    assert page.locator(".tt-spr-shown").count() == 0, "the text starts as dashes"
    shown: list[str] = []
    for _ in range(page.locator(".tt-spr-word").count()):
        page.keyboard.press("Space")
        word = page.locator(".tt-spr-shown")
        assert word.count() == 1, "the moving window shows one word"
        shown.append(word.inner_text())
    page.keyboard.press("Space")
    page.wait_for_selector(".tt-spr", state="detached")
    return shown


def test_a_dutch_imported_study_read_self_paced_in_chromium(browser, tmp_path, secrets):  # noqa: F811
    stimuli = dutch_set()
    study = study_folder(
        tmp_path,
        stimuli,
        ethics=ETHICS_NL,
        reading_mode="self_paced",
        timing={"reading_ms": 60_000, "response_ms": 20_000, "feedback_ms": 1000},
        prolific={"completion_code": "KLAAR123", "screenout_code": "UIT456"},
    )
    config = load_study(study)
    storage = Storage(config.database_url())
    app = create_app(config, storage=storage, stimulus_set=stimuli, secrets=secrets)
    by_text = {item.context: item for item in stimuli}
    hint = load_catalogue("nl").text("trial.spr_prompt")
    context, page, errors = study_page(browser)
    read: list[list[str]] = []
    hints: list[str] = []
    pages: list[str] = []
    answered = 0
    with serve_in_thread(app) as server:
        page.goto(server.url + "/?PROLIFIC_PID=5f0c0ffee00000000000nl02&STUDY_ID=S1&SESSION_ID=SR")
        while answered < TEXTS:
            name = _screen(page)
            pages.append(page.locator("body").inner_text())
            if name == "consent":
                page.get_by_role("button", name="Ik ga akkoord").click()
            elif name == "info":
                page.get_by_role("button", name="Beginnen").click()
            elif name == "reading":
                hints.append(page.locator(".tt-spr .tt-hint").inner_text().strip())
                if not read:
                    ARTIFACTS.mkdir(parents=True, exist_ok=True)
                    page.screenshot(path=str(ARTIFACTS / "self-paced-reading-nl.png"))
                read.append(_read(page))
            else:
                answered += _answer_or_wait(page, name, by_text, read)
        _wait_until_saved(page)
    context.close()
    assert not errors, errors
    assert hints == [hint] * TEXTS and hint.startswith("Druk op de SPATIEBALK")
    told = load_catalogue("nl").text("read_and_answer.spr_online", reading="60 seconden")
    assert any(told in text for text in pages), "the welcome screen says how to read"
    english = sorted({word for text in pages for word in english_on(text)})
    assert english == [], english

    trials = sorted(storage.trials(), key=lambda record: record.trial_index)
    words = list(storage.words())
    storage.close()
    assert [t.trial_index for t in trials] == list(range(TEXTS))
    assert {"practice", "main"} <= {t.role for t in trials}
    for trial, shown in zip(trials, read, strict=True):
        text = stimuli.get(trial.item_id).context.split()
        assert shown == text
        mine = [w for w in words if w.trial_index == trial.trial_index]
        # Every word once, in order, each with its own time: none lost, none twice.
        assert [w.word_index for w in mine] == list(range(len(text)))
        assert [w.word for w in mine] == text
        assert {w.client_trial_id for w in mine} == {trial.client_trial_id}
        assert all(0 < w.rt_ms < 10_000 and w.mode == "self_paced" for w in mine)
        assert trial.correct and trial.reading_time_ms >= sum(w.rt_ms for w in mine)
        assert not trial.flag_set & set(TIMING_FLAGS), trial.flags
    assert len(words) == sum(len(stimuli.get(t.item_id).context.split()) for t in trials)


def _choose_through(page, wrong_at: int) -> tuple[list[str], str]:
    """Choose through the Maze pairs (E: left, I: right), once wrong at ``wrong_at``.

    Returns the real words and the message shown after the wrong choice.
    """
    page.wait_for_timeout(100)
    chosen: list[str] = []
    message = ""
    while page.locator(".tt-maze").count():
        cells = page.locator(".tt-maze-word").all_inner_texts()
        real = 0 if not (cells[0] == "x-x-x" or cells[0].endswith("q")) else 1
        if len(chosen) == wrong_at and not message:
            page.keyboard.press("i" if real == 0 else "e")
            page.wait_for_function("() => document.querySelector('.tt-maze-error').textContent")
            message = page.locator(".tt-maze-error").inner_text()
        chosen.append(cells[real])
        page.keyboard.press("e" if real == 0 else "i")
        page.wait_for_function(
            "(before) => !document.querySelector('.tt-maze') || [...document"
            ".querySelectorAll('.tt-maze-word')].map((c) => c.textContent).join('|') !== before",
            arg="|".join(cells),
            timeout=5000,
        )
    return chosen, message


def test_a_dutch_imported_maze_with_redo_in_chromium(browser, tmp_path, secrets):  # noqa: F811
    from tests.experiment.test_words_items import _with_distractors

    stimuli = _with_distractors(dutch_set())
    study = study_folder(
        tmp_path,
        stimuli,
        ethics=ETHICS_NL,
        reading_mode="maze",
        maze_redo=True,
        timing={"reading_ms": 90_000, "response_ms": 20_000, "feedback_ms": 1000},
        prolific={"completion_code": "KLAAR123", "screenout_code": "UIT456"},
    )
    config = load_study(study)
    storage = Storage(config.database_url())
    app = create_app(config, storage=storage, stimulus_set=stimuli, secrets=secrets)
    by_text = {item.context: item for item in stimuli}
    dutch = load_catalogue("nl")
    context, page, errors = study_page(browser)
    read: list[list[str]] = []
    hints, messages, pages = [], [], []
    answered = 0
    screens = {**SCREENS, "reading": ".tt-maze"}
    with serve_in_thread(app) as server:
        page.goto(server.url + "/?PROLIFIC_PID=5f0c0ffee00000000000nl03&STUDY_ID=S1&SESSION_ID=SM")
        while answered < 2:
            page.wait_for_selector(", ".join(screens.values()), state="attached", timeout=20_000)
            name = next((n for n, css in screens.items() if page.locator(css).count()), "message")
            pages.append(page.locator("body").inner_text())
            if name == "consent":
                page.get_by_role("button", name="Ik ga akkoord").click()
            elif name == "info":
                page.get_by_role("button", name="Beginnen").click()
            elif name == "reading":
                hints.append(
                    page.locator(".tt-maze .tt-hint:not(.tt-maze-error)").inner_text().strip()
                )
                words, message = _choose_through(page, wrong_at=2)
                read.append(words)
                messages.append(message)
            else:
                answered += _answer_or_wait(page, name, by_text, read)
        _wait_until_saved(page)
    context.close()
    assert not errors, errors
    assert hints == [dutch.text("trial.maze_prompt", left="E", right="I")] * 2
    assert messages == [dutch.text("trial.maze_error")] * 2
    told = dutch.text("read_and_answer.maze_redo_online", reading="90 seconden")
    assert any(told in text for text in pages), "the welcome screen explains the Maze"
    assert sorted({word for text in pages for word in english_on(text)}) == []
    trials = sorted(storage.trials(), key=lambda record: record.trial_index)
    words = list(storage.words())
    storage.close()
    for trial, shown in zip(trials, read, strict=True):
        text = stimuli.get(trial.item_id).context.split()
        mine = [w for w in words if w.trial_index == trial.trial_index]
        assert shown == text and [w.word for w in mine] == text
        assert [w.errors for w in mine] == [int(i == 2) for i in range(len(text))]
        assert all(w.mode == "maze" and w.correct == (w.word_index != 2) for w in mine)
