"""The toy paradigm's study in Chromium: the page, its shared choice screen, the stored trials.

The participant chooses the wrong verb on the first practice sentence (the feedback must say
so), lets one main choice time out, and chooses the agreeing verb everywhere else, by its key;
the database must then hold every trial once, each answer stored as the verb chosen and
judged by the toy's study.
"""

from __future__ import annotations

from tests.experiment.browser_session import (
    answer_closing_screen,
    check_scores_and_times,
    stored_trials,
)
from tests.experiment.test_browser import (  # noqa: F401
    COMPLETION,
    browser,
    shown_progress,
    study_page,
)
from tests.toyparadigm.study import options
from tracktale.experiment.storage.store import Storage
from tracktale.experiment.study.config import Secrets, study_from_dict
from tracktale.experiment.web.app import create_app
from tracktale.experiment.web.server import serve_in_thread
from tracktale.stimulus_set import read_stimulus_set

READING_MS, RESPONSE_MS = 5000, 3000
SCREENS = {
    "consent": ".tt-consent",
    "reading": ".tt-reading",
    "choice": ".tt-choice",
    "feedback": ".tt-feedback",
    "survey": ".tt-survey",
    "debrief": ".tt-debrief",
    "final": ".tt-final",
    "info": ".tt-info",
    "message": ".tt-message",
}


def test_a_whole_toy_session_in_chromium(browser, toy_set, tmp_path):  # noqa: F811
    stimulus_set = read_stimulus_set(toy_set)
    config = study_from_dict(
        {
            "paradigm": "toy",
            "stimuli": str(toy_set),
            "database": str(tmp_path / "toy.sqlite"),
            "prolific": {"completion_code": "DONE123", "screenout_code": "OUT456"},
            "timing": {"reading_ms": READING_MS, "response_ms": RESPONSE_MS, "feedback_ms": 1500},
        }
    )
    secrets = Secrets(admin_secret="toy-admin-secret-0123", secret_key="k", export_salt="s")
    storage = Storage(config.database_url())
    app = create_app(config, storage=storage, stimulus_set=stimulus_set, secrets=secrets)
    by_text = {item.context: item for item in stimulus_set}
    context, page, errors = study_page(browser)
    link = "/?PROLIFIC_PID=5f0c0ffee0000000000000cc&STUDY_ID=S1&SESSION_ID=SESSION3"
    verdicts, progress, answered, item = [], [], 0, None

    def screen():
        page.wait_for_selector(", ".join(SCREENS.values()), state="attached", timeout=20000)
        return next((n for n, s in SCREENS.items() if page.locator(s).count()), "message")

    with serve_in_thread(app) as server:
        page.goto(server.url + link)
        while "app.prolific.com" not in page.url:
            name = screen()
            if name == "consent":
                page.get_by_role("button", name="I agree").click()
            elif name == "reading":
                progress.append(shown_progress(page))
                item = by_text[page.locator(".tt-story").inner_text().strip()]
                page.wait_for_timeout(300)
                page.keyboard.press(" ")
                page.wait_for_selector(".tt-reading", state="detached")
            elif name == "choice":
                shown = page.locator(".tt-option p").all_inner_texts()
                assert shown == options(item)
                assert page.locator(".tt-question").inner_text() == "Which word comes next?"
                if answered == 4:  # a main trial left to time out
                    page.wait_for_selector(
                        ".tt-choice", state="detached", timeout=RESPONSE_MS + 5000
                    )
                else:
                    right = shown.index(item.answer)
                    page.wait_for_timeout(250)
                    page.keyboard.press("fj"[1 - right if answered == 0 else right])
                    page.wait_for_selector(".tt-choice", state="detached")
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
    assert progress[:2] == [None, None] and progress[2:] == [
        f"Sentence {n} of 8" for n in range(1, 9)
    ]
    trials = stored_trials(list(storage.trials()), practice=2, main=8)
    storage.close()

    def judged(record):
        assert record.response in options(stimulus_set.get(record.item_id))
        return record.response == stimulus_set.get(record.item_id).answer

    check_scores_and_times(trials, judged, reading_ms=READING_MS, response_ms=RESPONSE_MS)
    assert not trials[0].correct and all(t.correct for t in trials[1:] if not t.timed_out)
