"""The researcher's preview link in Chromium, and the page around the trials (issue 31, 17, 19).

The preview link starts a session marked as a preview (a banner says so) that takes no list
from the participants. Through the practice to the first test story, the "Story N of 46" line
is hidden on the instructions and the practice, then counts the test stories only (as the
consent does: 46 stories plus 4 practice), in the page's own font; the Continue button is
centred under the story as on every other screen; the icon the browser asks for is served.
"""

from __future__ import annotations

import dataclasses

from tests.experiment.test_browser import (  # noqa: F401
    ARTIFACTS,
    Participant,
    browser,
    shown_progress,
    study_page,
)
from tracktale.experiment.study.config import Timing
from tracktale.experiment.study.links import preview_key
from tracktale.experiment.web.app import create_app
from tracktale.experiment.web.server import serve_in_thread


def _layout(page) -> dict:
    return page.evaluate(
        """() => {
          const box = (selector) => document.querySelector(selector).getBoundingClientRect();
          const font = (selector) => getComputedStyle(document.querySelector(selector)).fontFamily;
          return {
            progress_font: font('#tt-progress'),
            page_font: font('.jspsych-display-element'),
            button: box('.tt-continue'),
            story: box('.tt-story'),
          };
        }"""
    )


def test_a_preview_session_up_to_the_first_test_story(
    browser,  # noqa: F811
    study_config,
    storage,
    human_set,
    secrets,
):
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    config = dataclasses.replace(
        study_config, timing=Timing(reading_ms=3000, response_ms=4000, feedback_ms=1500)
    )
    app = create_app(config, storage=storage, stimulus_set=human_set, secrets=secrets)
    context, page, errors = study_page(browser)
    missing: list[str] = []
    page.on("response", lambda r: missing.append(r.url) if r.status == 404 else None)
    key = preview_key(storage, config.study_id)
    shown_on_info, practice_lines = [], []
    with serve_in_thread(app) as server:
        page.goto(f"{server.url}/?preview={key}")
        who = Participant(page, human_set)
        for _ in range(40):
            screen = who.screen()
            if screen == "consent":
                page.get_by_role("button", name="I agree").click()
            elif screen == "info":
                shown_on_info.append(shown_progress(page))
                page.locator("#jspsych-html-button-response-btngroup button").first.click()
            elif screen == "reading" and shown_progress(page) is None:
                practice_lines.append(page.locator(".tt-story").inner_text())
                who.read()
            elif screen == "reading":
                break
            elif screen == "explicit":
                who.type_answer()
            elif screen == "choice":
                who.choose()
            elif screen == "feedback":
                page.get_by_role("button", name="Continue").click()
            else:
                page.wait_for_timeout(200)
        page.screenshot(path=str(ARTIFACTS / "preview-first-test-story.png"))
        assert shown_progress(page) == "Story 1 of 46"
        layout = _layout(page)
        banner = page.locator("#tt-preview")
        assert banner.is_visible() and "PREVIEW" in banner.inner_text()
        icon = page.request.get(server.url + "/favicon.ico")
        assert icon.status == 200 and icon.headers["content-type"].startswith("image/svg+xml")
        linked = page.locator("link[rel=icon]").get_attribute("href")
        assert page.request.get(server.url + linked).status == 200
    context.close()
    assert not errors, errors
    assert not missing, missing
    assert len(practice_lines) == 2 and len(shown_on_info) >= 3  # the first block's practice
    assert shown_on_info == [None] * len(shown_on_info)  # no line on the instructions
    assert layout["progress_font"] == layout["page_font"]
    middle = (layout["story"]["left"] + layout["story"]["right"]) / 2
    button = layout["button"]
    assert abs((button["left"] + button["right"]) / 2 - middle) < 2
    (person,) = storage.participants(config.study_id)
    assert person.source == "preview"
    assert storage.list_counts(config.study_id) == {}  # no list taken from the participants
