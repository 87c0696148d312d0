"""A whole session in a real browser (Debian's Chromium driven by Playwright).

The participant consents, practises (one practice answer names every container, and the
feedback must say it is wrong), answers all 50 trials (46 test trials; one typed answer with
the submit button; a blank one of characters only Python counts as space, which the page must
refuse as the server would; one pasted with a lone surrogate, which must arrive as U+FFFD
rather than be refused by the server and lost), lets one trial time out (a notice follows),
loses the connection for a few trials, reloads the page in the middle of a trial while unsent
trials wait in localStorage, fills in the survey and finishes: the final screen shows the
completion code, then the browser is sent to Prolific's completion URL, and reopening the link
shows the code again. The database must hold every trial exactly once with plausible browser
and server times, and the page must log no error (the content security policy lets jsPsych's
font load). A second test opens the session in a second browser, which stops the first with a
full-screen message; another has the server refuse one answer, after which the page stops,
the trial is asked again after a reload and no later answer is refused. Screenshots of every
screen type go to test-artifacts/browser/. The time limits are shortened (3 s / 4 s) so that
the timeout costs seconds, not a minute.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import os
from collections import Counter

import pytest

from tests.conftest import REPO_ROOT, require
from tracktale.errors import TracktaleError
from tracktale.experiment.study.config import Timing
from tracktale.experiment.web.app import create_app
from tracktale.experiment.web.frontend import find_node_modules
from tracktale.experiment.web.server import serve_in_thread
from tracktale.trial import TIMING_FLAGS

CHROMIUM = "/usr/bin/chromium"
ARTIFACTS = REPO_ROOT / "test-artifacts" / "browser"
READING_MS, RESPONSE_MS = 3000, 4000
COMPLETION = "https://app.prolific.com/submissions/complete?cc=DONE123"
LAUNCH_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
]


def study_page(browser, height: int = 800):
    """A new context and page with Prolific's site stubbed, and the list its errors go to.

    Errors are uncaught page errors and console errors other than failed resource loads: the
    requests a test cuts off (offline) or the server refuses on purpose (a completed
    participant's return); a blocked font was one.
    """
    context = browser.new_context(viewport={"width": 1280, "height": height})
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.on(
        "console",
        lambda m: (
            errors.append(m.text)
            if m.type == "error" and not m.text.startswith("Failed to load resource")
            else None
        ),
    )
    context.route(
        "https://app.prolific.com/**", lambda route: route.fulfill(body="<p>Prolific</p>")
    )
    return context, page, errors


def shown_progress(page) -> str | None:
    """The progress line ("Story 3 of 46"), or ``None`` while it is hidden."""
    line = page.locator("#tt-progress")
    return line.inner_text() if line.is_visible() else None


def _frontend_installed() -> bool:
    try:
        find_node_modules()
    except TracktaleError:
        return False
    return True


@pytest.fixture
def browser():
    require(importlib.util.find_spec("playwright") is not None, "playwright is not installed")
    require(os.access(CHROMIUM, os.X_OK), f"{CHROMIUM} is missing (apt-get install chromium)")
    require(_frontend_installed(), "the front end is not installed (npm ci in experiment/frontend)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=LAUNCH_ARGS
        )
        yield browser
        browser.close()


class Participant:
    """Plays the participant: recognises each screen and answers from the stimulus set."""

    def __init__(self, page, stimuli):
        self.page = page
        self.by_story = {item.context: item for item in stimuli if item.role != "filler"}
        self.fillers = {item.context: item for item in stimuli if item.role == "filler"}
        self.story = None
        self.seen: Counter[str] = Counter()
        self.answered = 0

    def shoot(self, name: str) -> None:
        if not self.seen[name]:
            self.page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)
        self.seen[name] += 1

    def screen(self) -> str:
        selectors = {
            "notice": ".tt-timeout",
            "final": ".tt-final",
            "consent": ".tt-consent",
            "reading": ".tt-reading",
            "explicit": ".tt-text-response",
            "choice": ".tt-choice",
            "feedback": ".tt-feedback",
            "survey": ".tt-survey",
            "debrief": ".tt-debrief",
            "info": ".tt-info",
            "message": ".tt-message",
        }
        # A screen can give way to the next between the wait and the look (a loaded machine).
        for _ in range(20):
            self.page.wait_for_selector(
                ", ".join(selectors.values()), state="attached", timeout=15000
            )
            for name, selector in selectors.items():
                if self.page.locator(selector).count():
                    return name
        raise AssertionError("unknown screen")

    def item(self):
        return self.by_story.get(self.story) or self.fillers[self.story]

    def read(self, wait_for_timeout=False):
        self.story = self.page.locator(".tt-story").inner_text().strip()
        self.shoot("reading")
        if wait_for_timeout:
            self.page.wait_for_selector(".tt-reading", state="detached", timeout=READING_MS + 5000)
        else:
            self.page.wait_for_timeout(350)  # key presses in the first 300 ms are ignored
            self.page.keyboard.press(" ")
            self.page.wait_for_selector(".tt-reading", state="detached")

    def type_answer(self, let_time_run_out=False, text=None, button=False):
        self.shoot("explicit")
        if let_time_run_out:
            self.page.wait_for_selector(
                ".tt-text-response", state="detached", timeout=RESPONSE_MS + 5000
            )
        else:
            self.page.locator("#tt-answer").fill(text or self.item().answer)
            if button:
                self.page.locator(".tt-submit").click()
            else:
                self.page.keyboard.press("Enter")
            self.page.wait_for_selector(".tt-text-response", state="detached")
        self.answered += 1

    def type_oddly(self):
        """A blank answer of characters only the server counted as space, then broken paste.

        The first must be refused by the page as the server would refuse it; the second (a
        lone surrogate) must reach the server as U+FFFD instead of being refused there.
        """
        answer = self.page.locator("#tt-answer")
        answer.evaluate("(input) => { input.value = '\\u001c\\u0085 '; }")
        self.page.keyboard.press("Enter")
        self.page.wait_for_timeout(100)
        assert self.page.locator(".tt-text-response").count() == 1, "a blank answer was sent"
        assert self.page.locator(".tt-text-response .tt-hint").inner_text()
        answer.evaluate("(input, text) => { input.value = text + '\\udfff'; }", self.item().answer)
        self.page.keyboard.press("Enter")
        self.page.wait_for_selector(".tt-text-response", state="detached")
        self.answered += 1
        return self.item().answer + "\ufffd"

    def choose(self):
        item = self.item()
        left = self.page.locator(".tt-option-left p").inner_text().strip()
        name = "comprehension" if item.role == "filler" else "implicit"
        self.shoot(name)
        self.page.wait_for_timeout(220)
        self.page.keyboard.press("f" if left == item.choice.good.strip() else "j")
        self.page.wait_for_selector(".tt-choice", state="detached")
        self.answered += 1


def _survey(page, who):
    who.shoot("survey")
    page.fill("input[name=age]", "37")
    page.check("input[name=gender][value='prefer not to say']")
    page.fill("input[name=native_language]", "English")
    page.check("input[name=attentive][value=yes]")
    page.check("input[name=no_ai_assistance][value=yes]")
    page.click("#jspsych-survey-html-form-next")


def test_a_whole_session_in_chromium(browser, study_config, storage, human_set, secrets):
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    config = dataclasses.replace(
        study_config,
        timing=Timing(reading_ms=READING_MS, response_ms=RESPONSE_MS, feedback_ms=1500),
    )
    app = create_app(config, storage=storage, stimulus_set=human_set, secrets=secrets)
    context, page, errors = study_page(browser)
    pid = "5f0c0ffee0000000000000aa"
    link = f"/?PROLIFIC_PID={pid}&STUDY_ID=STUDY1&SESSION_ID=SESSION1"
    verdicts = []
    progress = []
    with serve_in_thread(app) as server:
        page.goto(server.url + link)
        who = Participant(page, human_set)
        offline = False
        reloaded = False
        timed_out = False
        hedged = False
        by_button = False
        pasted = None
        while "app.prolific.com" not in page.url:
            screen = who.screen()
            if screen == "consent":
                who.shoot("consent")
                page.get_by_role("button", name="I agree").click()
            elif screen == "reading":
                progress.append(shown_progress(page))
                if who.answered == 12 and not offline:
                    # The connection drops: these answers wait in localStorage.
                    context.route("**/api/trials", lambda route: route.abort())
                    offline = True
                if who.answered == 14 and not reloaded:
                    who.shoot("reading")
                    page.reload()  # in the middle of a trial, with unsent answers queued
                    reloaded = True
                    continue
                if who.answered == 15 and offline:
                    context.unroute("**/api/trials")
                let_it_time_out = not timed_out and who.answered >= 20
                who.read(wait_for_timeout=let_it_time_out)
                if let_it_time_out:
                    who.screen()
                    if page.locator(".tt-text-response").count():
                        who.type_answer(let_time_run_out=True)
                        timed_out = True
                    else:
                        who.choose()
            elif screen == "explicit":
                if not hedged:  # the first practice answer names every container
                    who.type_answer(text="box bag basket drawer")
                    hedged = True
                elif who.answered >= 4 and not by_button:
                    who.type_answer(button=True)  # a phone without ENTER
                    by_button = True
                elif who.answered >= 6 and not pasted:
                    pasted = who.type_oddly()
                else:
                    who.type_answer()
            elif screen == "choice":
                who.choose()
            elif screen == "feedback":
                who.shoot("feedback")
                verdicts.append(page.locator(".tt-verdict").inner_text())
                page.get_by_role("button", name="Continue").click()
            elif screen == "notice":
                who.shoot("timeout-notice")
                page.wait_for_selector(".tt-timeout", state="detached", timeout=5000)
            elif screen == "survey":
                _survey(page, who)
            elif screen == "debrief":
                who.shoot("debrief")
                assert page.locator(".tt-debrief em").first.inner_text() == "explicit"
                page.get_by_role("button", name="Finish").click()
            elif screen == "final":
                assert page.locator(".tt-code").inner_text() == "DONE123"
                who.shoot("final")
                page.wait_for_url("https://app.prolific.com/**", timeout=30000)
            elif screen == "info":
                text = page.locator(".tt-info").inner_text()
                name = (
                    "resume"
                    if "Welcome back" in text
                    else "block-intro"
                    if who.answered
                    else "welcome"
                )
                who.shoot(name)
                page.locator("#jspsych-html-button-response-btngroup button").first.click()
            else:
                who.shoot("message")
                page.wait_for_timeout(200)
        who.shoot("redirect")
        assert page.url == COMPLETION
        page.goto(server.url + link)  # the tab was closed before the redirect, say
        page.wait_for_selector(".tt-message .tt-code")
        assert "cannot take part again" in page.locator(".tt-message").inner_text()
        assert page.locator(".tt-code").inner_text() == "DONE123"
        who.shoot("completed-again")
    context.close()
    assert not errors, errors
    assert timed_out and reloaded and offline and hedged and by_button and pasted
    assert verdicts[0] == "Not quite." and verdicts[1:] == ["Correct!"] * 3
    # Practice is not counted, and the line is hidden on it (the consent: 46 plus 4 practice).
    shown = [line for line in progress if line is not None]
    assert progress.count(None) == 4
    assert shown[0] == "Story 1 of 46" and shown[-1] == "Story 46 of 46"

    trials = list(storage.trials())
    positions = Counter(record.trial_index for record in trials)
    assert sorted(positions) == list(range(50)) and set(positions.values()) == {1}
    assert len({record.client_trial_id for record in trials}) == 50
    test_trials = [record for record in trials if record.role != "practice"]
    assert len(test_trials) == 46
    assert Counter(record.task for record in test_trials) == {
        "explicit": 18,
        "implicit": 18,
        "comprehension": 10,
    }
    assert {record.item_id for record in test_trials} == {
        item.item_id for item in human_set if item.role != "practice"
    }
    timeouts = [record for record in trials if record.timed_out]
    assert len(timeouts) == 1
    assert timeouts[0].reading_timed_out and timeouts[0].response is None
    assert not timeouts[0].correct
    answered = [record for record in trials if not record.timed_out]
    (hedge,) = [record for record in answered if not record.correct]
    assert hedge.role == "practice" and hedge.correct_paper_rule
    assert hedge.flag_set == {"several_answers"}
    (repaired,) = [record for record in answered if record.response == pasted]
    assert repaired.correct
    assert all(0 < record.reading_time_ms < READING_MS + 1000 for record in trials)
    assert all(0 < record.response_time_ms < RESPONSE_MS + 1000 for record in answered)
    # The server's times agree with the browser's: no honest answer carries a timing flag,
    # not even the ones held offline (their queue time is sent) or cut by the reload.
    assert not [record for record in trials if record.flag_set & set(TIMING_FLAGS)]
    assert sum(1 for record in trials if record.queued_ms is not None) == len(trials)
    for record in trials:
        browser_ms = record.reading_time_ms + (record.response_time_ms or RESPONSE_MS)
        assert record.server_elapsed_ms >= browser_ms - 500, record
        assert record.browser == 1
    assert all(record.screen_width == 1280 and record.screen_height == 800 for record in trials)
    assert sum(record.restarts for record in trials) == 1  # the trial cut by the reload
    (person,) = storage.participants()
    assert person.status == "completed" and person.prolific_pid == pid
    survey = storage.survey()[person.participant_id]
    assert survey["gender"] == "prefer not to say" and survey["age"] == 37
    for name in (
        "consent",
        "welcome",
        "block-intro",
        "reading",
        "explicit",
        "implicit",
        "comprehension",
        "feedback",
        "timeout-notice",
        "resume",
        "survey",
        "debrief",
        "final",
        "redirect",
        "completed-again",
    ):
        assert (ARTIFACTS / f"{name}.png").is_file(), name


SIMULATION = """
async () => {
  const plugins = [jsPsychTimedReading, jsPsychTimedTextResponse, jsPsychTimedChoice];
  const results = {};
  for (const mode of ["data-only", "visual"]) {
    const container = document.createElement("div");
    document.body.appendChild(container);
    const jsPsych = initJsPsych({ display_element: container });
    await jsPsych.simulate(
      [
        { type: jsPsychTimedReading, text: "Mia put the key in the box.", trial_duration: 3000,
          simulation_options: { data: { reading_time_ms: 300 } } },
        { type: jsPsychTimedTextResponse, probe: "The key is in the", trial_duration: 4000,
          simulation_options: { data: { response: "box", rt: 300 } } },
        { type: jsPsychTimedChoice, question: "Which?", options: ["one", "two"],
          trial_duration: 4000, simulation_options: { data: { choice: "right", rt: 300 } } },
        { type: jsPsychTimedTextResponse, probe: "The key is in the", trial_duration: 600,
          simulation_options: { data: { rt: 5000 } } },
      ],
      mode
    );
    results[mode] = jsPsych.data.get().values();
  }
  results.declared = plugins.map((plugin) => Object.keys(plugin.info.data));
  return results;
}
"""


def test_our_plugins_simulate_in_data_only_and_visual_mode(browser, app):
    with serve_in_thread(app) as server:
        page = browser.new_page()
        page.goto(server.url + "/healthz")
        for script in (
            "/vendor/jspsych.js",
            "/static/plugin-helpers.js",
            "/static/plugins/timed-reading.js",
            "/static/plugins/timed-text-response.js",
            "/static/plugins/timed-choice.js",
        ):
            page.add_script_tag(url=server.url + script)
        results = page.evaluate(SIMULATION)
        page.close()
    declared = results.pop("declared")
    for mode, (reading, typed, chosen, late) in results.items():
        for data, fields in zip((reading, typed, chosen), declared, strict=True):
            assert set(fields) <= set(data), (mode, fields, data)
        assert reading["timed_out"] is False and reading["reading_time_ms"] > 0, mode
        assert (typed["response"], typed["timed_out"]) == ("box", False), mode
        assert (chosen["choice"], chosen["response"], chosen["timed_out"]) == (
            "right",
            "two",
            False,
        ), mode
        assert (late["response"], late["rt"], late["timed_out"]) == (None, None, True), mode


def test_declining_consent_returns_to_prolific_with_the_screen_out_code(browser, app, storage):
    context = browser.new_context()
    context.route(
        "https://app.prolific.com/**", lambda route: route.fulfill(body="<p>Prolific</p>")
    )
    page = context.new_page()
    with serve_in_thread(app) as server:
        page.goto(f"{server.url}/?PROLIFIC_PID=DECLINER01&SESSION_ID=S1")
        page.get_by_role("button", name="I do not agree").click()
        page.wait_for_url("https://app.prolific.com/**", timeout=15000)
        assert page.url.endswith("cc=OUT456")
        page.goto(f"{server.url}/?PROLIFIC_PID=DECLINER01&SESSION_ID=S1")
        page.wait_for_selector(".tt-message")
        assert "did not consent" in page.locator(".tt-message").inner_text()
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "screened-out-again.png"))
    context.close()
    (person,) = storage.participants()
    assert (person.status, person.consent) == ("screened_out", False)
    assert list(storage.trials()) == []


def test_a_second_browser_takes_over_and_the_first_stops_with_a_message(
    browser, app, storage, human_set
):
    link = "/?PROLIFIC_PID=TAKEOVER01&SESSION_ID=SESSION7"
    first_context, second_context = browser.new_context(), browser.new_context()
    first, second = first_context.new_page(), second_context.new_page()
    with serve_in_thread(app) as server:
        first.goto(server.url + link)
        first.get_by_role("button", name="I agree").click()
        first.locator("#jspsych-html-button-response-btngroup button").first.click()  # welcome
        first.locator("#jspsych-html-button-response-btngroup button").first.click()  # block
        first.wait_for_selector(".tt-story")
        second.goto(server.url + link)  # the same Prolific session in another browser
        second.wait_for_selector(".tt-info")
        first.wait_for_timeout(350)
        first.keyboard.press(" ")  # the first browser goes on and answers...
        first.wait_for_selector(".tt-text-response, .tt-choice")
        if first.locator("#tt-answer").count():
            first.locator("#tt-answer").fill("box")
            first.keyboard.press("Enter")
        else:
            first.wait_for_timeout(250)
            first.keyboard.press("f")
        # ... and its answer is refused: the page stops.
        first.wait_for_selector(".tt-overlay:not([hidden])", timeout=15000)
        text = first.locator(".tt-overlay").inner_text()
        assert "open in another browser" in text
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        first.screenshot(path=str(ARTIFACTS / "takeover.png"))
        first.wait_for_timeout(500)
        assert first.locator(".tt-text-response, .tt-choice").count() == 0  # stopped
    first_context.close()
    second_context.close()
    (person,) = storage.participants()
    kinds = [event.kind for event in storage.journal.events(person.participant_id)]
    assert kinds == ["started", "consent", "takeover"]
    assert storage.journal.browser_counts() == {person.participant_id: 2}


def test_a_refused_answer_is_asked_again_and_does_not_refuse_the_answers_after_it(
    browser, app, storage, human_set
):
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    page = context.new_page()
    refused = []
    statuses = []

    def refuse_the_third_answer(route):
        body = route.request.post_data_json or {}
        if body.get("trial_index") == 2 and not refused:
            refused.append(body)  # as the server refuses a body it cannot accept
            route.fulfill(status=400, json={"error": "field 'response' has an invalid format"})
        else:
            route.continue_()

    context.route("**/api/trials", refuse_the_third_answer)
    page.on(
        "response",
        lambda r: statuses.append(r.status) if r.url.endswith("/api/trials") else None,
    )
    screens = ".tt-refused, .tt-reading, .tt-text-response, .tt-choice, .tt-feedback, .tt-info"
    with serve_in_thread(app) as server:
        page.goto(server.url + "/?PROLIFIC_PID=REFUSED01&SESSION_ID=SESSION9")
        page.get_by_role("button", name="I agree").click()
        who = Participant(page, human_set)
        stopped = False
        while len(storage.trial_indices(storage.participants()[0].participant_id)) < 6:
            page.wait_for_selector(screens, state="attached", timeout=15000)
            if page.locator(".tt-refused").count():
                assert (
                    "could not accept your last answer" in page.locator(".tt-refused").inner_text()
                )
                page.wait_for_timeout(300)
                stopped = True
                page.get_by_role("button", name="Continue").click()  # reloads the page
                page.wait_for_load_state()
            elif page.locator(".tt-reading").count():
                who.read()
            elif page.locator(".tt-text-response").count():
                who.type_answer()
            elif page.locator(".tt-choice").count():
                who.choose()
            else:  # feedback or an information screen
                page.locator("#jspsych-html-button-response-btngroup button").first.click()
            assert who.answered < 14, "the refused trial was never answered again"
    context.close()
    assert refused and stopped
    assert 422 not in statuses  # no later answer was refused for coming after the missing one
    by_position = {record.trial_index: record for record in storage.trials()}
    assert sorted(by_position) == list(range(len(by_position)))
    assert by_position[2].restarts == 1  # served again, and the server counted it


def test_an_answer_the_study_cannot_take_now_is_kept_and_the_participant_told(
    browser, app, storage, human_set
):
    # Issue 30: every 409 was taken as an acknowledgement, so an answer refused because the
    # researcher had closed the session was dropped from the browser without a word.
    service = app.extensions["tracktale"]
    context, page, errors = study_page(browser)
    with serve_in_thread(app) as server:
        page.goto(server.url + "/?PROLIFIC_PID=CLOSED0001&SESSION_ID=SESSION30")
        page.get_by_role("button", name="I agree").click()
        page.locator("#jspsych-html-button-response-btngroup button").first.click()  # welcome
        page.locator("#jspsych-html-button-response-btngroup button").first.click()  # block
        page.wait_for_selector(".tt-story")
        (person,) = storage.participants()
        service.change_status(person.participant_id, "returned", confirmed=True, by={})
        who = Participant(page, human_set)
        who.read()
        page.wait_for_selector(".tt-text-response, .tt-choice")
        who.type_answer() if page.locator("#tt-answer").count() else who.choose()
        page.wait_for_selector(".tt-held", timeout=15000)
        text = page.locator(".tt-held").inner_text()
        assert "cannot accept your answers" in text and "kept in this browser" in text
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "answers-held.png"))
        kept = page.evaluate(
            "() => JSON.parse(localStorage.getItem('tracktale/' + "
            "JSON.parse(document.getElementById('study-config').textContent).study_id + "
            "'/CLOSED0001/outbox'))"
        )
        assert [entry["body"]["trial_index"] for entry in kept] == [0]
        assert list(storage.trials()) == []
        # The researcher reopens the session; the kept answer goes out on the next visit.
        service.change_status(person.participant_id, "started", confirmed=True, by={})
        page.reload()
        page.wait_for_function(
            "() => window.tracktaleStudy && window.tracktaleStudy.outbox.size === 0",
            timeout=15000,
        )
    context.close()
    (trial,) = storage.trials()
    assert trial.trial_index == 0 and trial.queued_ms > 0
    assert errors == []
