"""An imported Dutch study read word by word in Chromium: self-paced reading with the space bar.

The Dutch test set (``tests/experiment/data/items_nl``) runs with ``reading_mode: self_paced``.
The participant consents, and reads the practice texts and the first test texts by pressing
SPACE once a word, each text shown first as dashes, then one word at a time; the hint under
the text is the Dutch catalogue's (``trial.spr_prompt``), and no screen shows English. Each
question is answered with real key presses (F and J for the two places, ENTER after a typed
answer). The database must then hold, for every answered trial, each word of its text exactly
once, in order, with a time per word.
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
            elif name in ("typed", "choice"):
                item = by_text[" ".join(read[-1])]
                page.wait_for_timeout(250)  # the first moments ignore keys
                if name == "choice":
                    options = page.locator(".tt-option p").all_inner_texts()
                    page.keyboard.press("fj"[options.index(item.answer)])
                    page.wait_for_selector(".tt-choice", state="detached")
                else:
                    page.locator("#tt-answer").fill(item.answer)
                    page.keyboard.press("Enter")
                    page.wait_for_selector(".tt-text-response", state="detached")
                answered += 1
            elif name == "feedback":
                page.get_by_role("button", name="Doorgaan").click()
            else:
                page.wait_for_timeout(200)
        # The last answer leaves through the outbox: wait until the server has it.
        page.wait_for_function("() => !document.querySelector('#save-status:not([hidden])')")
        page.wait_for_timeout(500)
    context.close()
    assert not errors, errors
    assert hints == [hint] * TEXTS and hint.startswith("Druk op de SPATIEBALK")
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
