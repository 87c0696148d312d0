"""A whole arithmetic session in Chromium, checked against the database.

The participant consents, does the two practice calculations (the first answered wrongly: the
feedback must say so and show the value), then the 12 calculations: answers typed as a person
types them (plain, with a thousands separator and spaces, by the Submit button), one wrong on
purpose, one not a number, one left to time out; then the survey and the debrief, which must
name no calculator and no AI, and the final screen's code. Every trial must be stored once,
scored as the models' scorer scores its text. The study probes one intermediate value per main
calculation (``probe_values: 1``): typed in every box but one (left empty), also in the
calculation that times out; the database must hold each as typed. The time limits are
shortened.
"""

from __future__ import annotations

import dataclasses
import json
from collections import Counter

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
from tracktale.experiment.paradigms.arithmetic import STUDY
from tracktale.experiment.study.config import Timing, paradigm_defaults
from tracktale.experiment.web.app import create_app
from tracktale.experiment.web.server import serve_in_thread
from tracktale.stimuli.registry import get_paradigm

READY_MS, RESPONSE_MS = 4000, 6000
SCREENS = {
    "final": ".tt-final",
    "consent": ".tt-consent",
    "reading": ".tt-reading",
    "arithmetic": ".tt-arithmetic",
    "feedback": ".tt-feedback",
    "notice": ".tt-timeout",
    "survey": ".tt-survey",
    "debrief": ".tt-debrief",
    "info": ".tt-info",
    "message": ".tt-message",
}


def _screen(page) -> str:
    for _ in range(20):
        page.wait_for_selector(", ".join(SCREENS.values()), state="attached", timeout=15000)
        for name, selector in SCREENS.items():
            if page.locator(selector).count():
                return name
    raise AssertionError("unknown screen")


def test_a_whole_arithmetic_session_in_chromium(browser, study_config, storage, secrets):  # noqa: F811
    out = ARTIFACTS / "arithmetic"
    out.mkdir(parents=True, exist_ok=True)
    stimuli = get_paradigm("arithmetic").generate_set("human", 1)
    by_procedure = {STUDY.served_content(item, _planned(item))["parameters"]["procedure"]: item
                    for item in stimuli}  # fmt: skip
    defaults = paradigm_defaults("arithmetic")
    config = dataclasses.replace(
        study_config,
        paradigm="arithmetic",
        study_id=defaults.study_id,
        timing=Timing(reading_ms=READY_MS, response_ms=RESPONSE_MS, feedback_ms=3000),
        probe_values=1,
    )
    app = create_app(config, storage=storage, stimulus_set=stimuli, secrets=secrets)
    context, page, errors = study_page(browser, height=900)
    link = "/?PROLIFIC_PID=5f0c0ffee0000000000000ab&STUDY_ID=STUDY1&SESSION_ID=SESSION2"
    typed: list[str | None] = []
    verdicts, details, progress, shots = [], [], [], Counter()

    def shoot(name):
        if not shots[name]:
            page.screenshot(path=str(out / f"{name}.png"), full_page=True)
        shots[name] += 1

    with serve_in_thread(app) as server:
        page.goto(server.url + link)
        while "app.prolific.com" not in page.url:
            screen = _screen(page)
            shoot(screen)
            if screen == "consent":
                text = page.locator(".tt-consent").inner_text()
                assert "no calculator" in text and "AI" in text and "minutes" in text
                page.get_by_role("button", name="I agree").click()
            elif screen == "reading":
                progress.append(shown_progress(page))
                assert "steps" in page.locator(".tt-story").inner_text()
                page.wait_for_timeout(350)
                page.keyboard.press(" ")
                page.wait_for_selector(".tt-reading", state="detached")
            elif screen == "arithmetic":
                procedure = page.locator(".tt-procedure").inner_text().strip()
                item = by_procedure[procedure]
                assert page.locator(".tt-inputs").inner_text().startswith("Inputs: x = ")
                # The screen starts under the progress line, not below an empty band.
                assert page.locator(".tt-timer").bounding_box()["y"] < 80
                typed.append(_answer(page, item, len(typed)))
            elif screen == "feedback":
                verdicts.append(page.locator(".tt-verdict").inner_text())
                details.append(page.locator(".tt-feedback").inner_text())
                page.get_by_role("button", name="Continue").click()
            elif screen == "notice":
                page.wait_for_selector(".tt-timeout", state="detached", timeout=5000)
            else:
                answer_closing_screen(page, screen, shoot)
        assert page.url == COMPLETION
    context.close()
    assert not errors, errors
    assert verdicts == ["Not quite.", "Correct!"]
    assert "The answer was:" in details[0]
    assert progress[:2] == [None] * 2  # practice: not counted, no line
    assert progress[2] == "Calculation 1 of 12" and progress[-1] == "Calculation 12 of 12"

    trials = stored_trials(storage.trials(), practice=2, main=12)
    assert [record.response for record in trials] == typed
    wrong = [record.trial_index for record in trials if not record.correct]
    assert wrong == [0, 4, 5, 6]  # the wrong practice answer, wrong, junk, the timeout

    def scored(record):
        return STUDY.score_trial(stimuli.get(record.item_id), None, record.response, "").correct

    timeout = check_scores_and_times(trials, scored, reading_ms=READY_MS, response_ms=RESPONSE_MS)
    assert timeout is trials[6]
    for record in trials:  # the probed values, as typed (practice has none)
        if record.role == "practice":
            assert record.intermediates is None
            continue
        (variable,) = STUDY.probe_variables(stimuli.get(record.item_id), 1)
        value = "" if record.trial_index == 3 else f"{record.trial_index}0"
        assert json.loads(record.intermediates) == [{"variable": variable, "value": value}]


def _planned(item):
    from tracktale.experiment.study.design import PlannedTrial

    return PlannedTrial(0, item.item_id, item.role, "explicit", 0, None)


def _answer(page, item, position: int) -> str | None:
    """What the participant types at each position (see the module docstring)."""
    value = int(item.answer)
    box = page.locator("#tt-answer")
    probe = page.locator("#tt-probe-0")
    assert probe.count() == (item.role == "main")
    if probe.count() and position != 3:
        (variable,) = STUDY.probe_variables(item, 1)
        assert page.locator(".tt-arith-label").first.inner_text() == f"{variable} ="
        probe.fill(f" {position}0")
    if position == 6:
        page.wait_for_selector(".tt-arithmetic", state="detached", timeout=RESPONSE_MS + 5000)
        return None
    text = {
        0: str(value + 1),
        2: f"  {value:,} ".replace(",", " ") if abs(value) >= 1000 else f" {value} ",
        4: str(value - 2),
        5: "no idea",
    }.get(position, f"{value:,}")
    box.fill(text)
    if position == 3:
        page.locator(".tt-submit").click()
    else:
        page.keyboard.press("Enter")
    page.wait_for_selector(".tt-arithmetic", state="detached")
    return text.strip()
