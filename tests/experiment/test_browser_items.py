"""An imported study in another language, taken in Chromium as a participant would.

A Dutch study of the researcher's own items (``tests/experiment/data/items_nl``: two screens
per text, a choice of two places, typed fillers): the participant consents after opening the
information sheet, practises (the first practice answer is wrong and the feedback must say so,
in Dutch), reads every text (SPACE on one screen, the Continue button on the other), answers
with real key presses and clicks (F and J, a click on an option's button, ENTER and the submit
button for typed answers), lets one question time out, fills in the survey and finishes. Every
page must be Dutch (no English word, no text of the English catalogue), every trial stored
once with its answer scored as the design says. Screenshots go to test-artifacts/browser-items/.

A Hebrew study (a catalogue and consent text of its own, ``direction`` from the language) shows
its reading and choice screens right to left: the browser computes ``rtl`` for the page and the
text, the Continue button sits on the right, the time bar runs out towards the right, and the
options chosen with F and J stay on the left and the right.
"""

from __future__ import annotations

import re
from collections import Counter

import pytest
import yaml

from tests.experiment.items_sets import ETHICS_NL, dutch_set, study_folder, table_set
from tests.experiment.test_browser import (  # noqa: F401
    ARTIFACTS,
    browser,
    shown_progress,
    study_page,
)
from tracktale.experiment.storage.store import Storage
from tracktale.experiment.study.config import load_study
from tracktale.experiment.study.locale import LOCALES_DIR, load_catalogue
from tracktale.experiment.web.app import create_app
from tracktale.experiment.web.server import serve_in_thread

SHOTS = ARTIFACTS.parent / "browser-items"
READING_MS, RESPONSE_MS = 15_000, 5_000
COMPLETION = "https://app.prolific.com/submissions/complete?cc=KLAAR123"
ENGLISH_WORDS = {
    "the", "and", "you", "your", "please", "press", "click", "continue", "submit", "answer",
    "question", "story", "stories", "next", "time", "study", "thank", "saved", "loading",
    "agree", "consent", "practice", "choose", "with", "not", "what", "which", "when", "have",
    "this", "that", "are", "will", "yes", "read", "text", "texts", "female", "male", "age",
}  # fmt: skip
"""Words of English that are no Dutch words (a Dutch page must have none of them)."""


def _texts(value) -> list[str]:
    if isinstance(value, str):
        return [value]
    return list(value.values()) if isinstance(value, dict) else list(value)


def english_on(page_text: str) -> list[str]:
    """English words, and texts of the English catalogue, on a page meant to be Dutch."""
    words = set(re.findall(r"[A-Za-z]+", page_text.lower()))
    found = sorted(words & ENGLISH_WORDS)
    english, dutch = load_catalogue("en"), load_catalogue("nl")
    for key, value in english.texts.items():
        for text in _texts(value):
            for part in re.split(r"\{[A-Za-z_]+\}", text):
                part = part.strip()
                dutch_text = " ".join(_texts(dutch.texts[key]))
                if len(part.split()) >= 2 and part in page_text and part not in dutch_text:
                    found.append(part)
    return found


class Participant:
    """Recognises each screen and answers it from the stimulus set."""

    SCREENS = {
        "final": ".tt-final",
        "consent": ".tt-consent",
        "reading": ".tt-reading",
        "typed": ".tt-text-response",
        "choice": ".tt-choice",
        "feedback": ".tt-feedback",
        "notice": ".tt-timeout",
        "survey": ".tt-survey",
        "debrief": ".tt-debrief",
        "info": ".tt-info",
        "message": ".tt-message",
    }

    def __init__(self, page, stimuli):
        self.page = page
        self.stimuli = stimuli
        self.by_question_and_text = {}
        self.texts: list[str] = []
        self.shot: set[str] = set()
        self.screens: list[str] = []
        self.stories: list[str] = []
        self.last_story_done = False

    def screen(self) -> str:
        selector = ", ".join(self.SCREENS.values())
        self.page.wait_for_selector(selector, state="attached", timeout=20_000)
        name = next((n for n, s in self.SCREENS.items() if self.page.locator(s).count()), "message")
        self.texts.append(self.page.locator("body").inner_text())
        if name not in self.shot:
            SHOTS.mkdir(parents=True, exist_ok=True)
            self.page.screenshot(path=str(SHOTS / f"nl-{name}.png"), full_page=True)
            self.shot.add(name)
        self.screens.append(name)
        return name

    def item_on_screen(self, question: str):
        """The item whose question is on screen and whose text was read last."""
        story = " ".join(self.stories)
        for item in self.stimuli:
            if item.question == question and " ".join(item.truth["screens"]) == story:
                return item
        raise AssertionError(f"no item asks {question!r} after {story!r}")


@pytest.mark.slow
def test_a_dutch_imported_study_taken_in_chromium(browser, tmp_path, secrets):  # noqa: F811
    stimuli = dutch_set()
    study = study_folder(
        tmp_path,
        stimuli,
        ethics=ETHICS_NL,
        timing={"reading_ms": READING_MS, "response_ms": RESPONSE_MS, "feedback_ms": 4000},
        prolific={"completion_code": "KLAAR123", "screenout_code": "UIT456"},
    )
    config = load_study(study)
    assert config.language == "nl"
    storage = Storage(config.database_url())
    app = create_app(config, storage=storage, stimulus_set=stimuli, secrets=secrets)
    context, page, errors = study_page(browser, height=900)
    who = Participant(page, stimuli)
    verdicts, progress, timeouts, answers = [], [], 0, 0
    by_button = by_click = False
    with serve_in_thread(app) as server:
        page.goto(server.url + "/?PROLIFIC_PID=5f0c0ffee00000000000nl01&STUDY_ID=S1&SESSION_ID=SNL")
        assert page.evaluate("document.documentElement.lang") == "nl"
        while "app.prolific.com" not in page.url:
            name = who.screen()
            if name == "consent":
                page.locator("summary").click()  # the information sheet
                assert "Informatiebrief voor deelnemers" in page.locator("details").inner_text()
                assert "EC-2026-17" in page.locator(".tt-consent").inner_text()
                page.get_by_role("button", name="Ik ga akkoord").click()
            elif name == "info":
                page.get_by_role("button", name="Beginnen").click()
            elif name == "reading":
                story = page.locator(".tt-story").inner_text().strip()
                if not who.stories or who.last_story_done:
                    who.stories, who.last_story_done = [], False
                    progress.append(shown_progress(page))
                who.stories.append(story)
                page.wait_for_timeout(350)  # the first 300 ms ignore keys
                if len(who.stories) == 2:
                    page.get_by_role("button", name="Doorgaan").click()
                else:
                    page.keyboard.press(" ")
                page.wait_for_function(
                    "(text) => !document.querySelector('.tt-story') || "
                    "document.querySelector('.tt-story').innerText.trim() !== text",
                    arg=story,
                )
            elif name in ("typed", "choice"):
                who.last_story_done = True
                question = page.locator(".tt-probe, .tt-question").first.inner_text().strip()
                item = who.item_on_screen(question)
                wrong = answers == 0
                if name == "choice" and item.role == "main" and timeouts == 0:
                    page.wait_for_selector(
                        ".tt-choice", state="detached", timeout=RESPONSE_MS + 5000
                    )
                    timeouts += 1
                elif name == "choice":
                    options = page.locator(".tt-option p").all_inner_texts()
                    right = options.index(item.answer)
                    pick = 1 - right if wrong else right
                    page.wait_for_timeout(220)
                    if not by_click and not wrong:
                        page.locator(".tt-option button").nth(pick).click()
                        by_click = True
                    else:
                        page.keyboard.press("fj"[pick])
                    page.wait_for_selector(".tt-choice", state="detached")
                else:
                    page.locator("#tt-answer").fill("weet ik niet" if wrong else item.answer)
                    if not by_button:
                        page.get_by_role("button", name="Versturen").click()
                        by_button = True
                    else:
                        page.keyboard.press("Enter")
                    page.wait_for_selector(".tt-text-response", state="detached")
                answers += 1
            elif name == "feedback":
                verdicts.append(page.locator(".tt-verdict").inner_text())
                page.get_by_role("button", name="Doorgaan").click()
            elif name == "survey":
                page.fill("input[name=age]", "29")
                page.get_by_label("zeg ik liever niet").check()
                page.fill("input[name=native_language]", "Nederlands")
                page.check("input[name=attentive][value=yes]")
                page.check("input[name=no_ai_assistance][value=yes]")
                page.get_by_role("button", name="Doorgaan").click()
            elif name == "debrief":
                page.get_by_role("button", name="Afronden").click()
            elif name == "final":
                assert page.locator(".tt-code").inner_text() == "KLAAR123"
                assert "Terug naar Prolific" in page.locator(".tt-final").inner_text()
                page.wait_for_url("https://app.prolific.com/**", timeout=30_000)
            else:
                page.wait_for_timeout(200)
        assert page.url == COMPLETION
        missing = page.context.new_page()
        missing.goto(server.url + "/bestaat-niet")
        who.texts.append(missing.locator("body").inner_text())
        missing.screenshot(path=str(SHOTS / "nl-not-found.png"))
    context.close()
    assert not errors, errors

    assert verdicts == ["Helaas, niet goed.", "Goed zo!"]
    assert progress[:2] == [None] * 2  # practice: not counted, no line
    assert progress[2] == "Tekst 1 van 12" and progress[-1] == "Tekst 12 van 12"
    assert {"consent", "info", "reading", "typed", "choice", "feedback", "notice", "survey"} <= set(
        who.screens
    )
    english = sorted({word for text in who.texts for word in english_on(text)})
    assert english == [], english

    trials = sorted(storage.trials(), key=lambda record: record.trial_index)
    survey = storage.survey()
    storage.close()
    assert [t.trial_index for t in trials] == list(range(14))
    assert Counter(t.role for t in trials) == {"practice": 2, "main": 8, "filler": 4}
    (timed_out,) = [t for t in trials if t.timed_out]
    assert timed_out.role == "main" and timed_out.response is None and not timed_out.correct
    first = trials[0]
    assert not first.correct and first.role == "practice"
    for record in trials[1:]:
        item = stimuli.get(record.item_id)
        if record is not timed_out:
            assert record.correct and record.response == item.answer, record
            assert 0 < record.response_time_ms < RESPONSE_MS + 1000
        assert 0 < record.reading_time_ms < READING_MS + 1000
    two_screens = [t for t in trials if len(stimuli.get(t.item_id).truth["screens"]) == 2]
    assert two_screens and all(t.reading_time_ms > 500 for t in two_screens)
    (answers_given,) = survey.values()
    assert answers_given["gender"] == "prefer not to say"
    assert answers_given["native_language"] == "Nederlands"


HEBREW = {
    "meta": {"name": "עברית", "direction": "rtl"},
    "buttons": {
        "continue": "המשך",
        "start": "התחלה",
        "agree": "אני מסכים/ה",
        "disagree": "אני לא מסכים/ה",
        "choose": "בחירה ({key})",
    },
    "page": {
        "progress": "{Noun} {position} מתוך {total}",
        "practice": "תרגול.",
        "redirect_in": {
            "one": "בעוד שנייה תועברו בחזרה ל-Prolific.",
            "two": "בעוד שתי שניות תועברו בחזרה ל-Prolific.",
            "other": "בעוד {n} שניות תועברו בחזרה ל-Prolific.",
        },
    },
    "trial": {"reading_prompt": "לחצו על מקש הרווח או על ״המשך״ כשסיימתם לקרוא."},
    "time": {"seconds": {"one": "שנייה אחת", "two": "שתי שניות", "other": "{n} שניות"}},
    "read_and_answer": {
        "noun": {"title": "טקסט", "singular": "טקסט", "plural": "טקסטים"},
        "welcome": ["במחקר הזה תקראו טקסטים קצרים, אחד אחרי השני, ותענו על שאלה אחרי כל אחד."],
        "reading_online": "כל טקסט מוצג לכל היותר {reading}. כשסיימתם לקרוא, לחצו על מקש הרווח.",
        "keep_open": "השאירו את החלון הזה פתוח עד הסוף.",
        "choice_online": "בחרו תשובה במקש שעל הכפתור שלה, או לחצו על הכפתור. יש לכם {response}.",
        "main_start": ["התרגול הסתיים. עכשיו מתחילים הטקסטים האמיתיים."],
    },
}
"""A test catalogue: the texts of the screens this test reads in Hebrew, the rest as in the
English reference (tracktale ships no Hebrew; a study brings its own with ``locale:``)."""


def _merged(base, changes):
    """``base`` with ``changes`` laid over it, section by section (plural forms replaced)."""
    merged = dict(base)
    for key, value in changes.items():
        if isinstance(value, dict) and isinstance(base.get(key), dict) and "other" not in value:
            merged[key] = _merged(base[key], value)
        else:
            merged[key] = value
    return merged


def hebrew_study(folder):
    rows = [
        {
            "item": str(n),
            "moved": moved,
            "text": f"{name} שמה את ה{thing} בקופסה. אחר כך היא "
            + ("העבירה אותו לסל." if moved == "yes" else "הסתכלה על הסל."),
            "question": f"איפה ה{thing}?",
            "option1": "בקופסה",
            "option2": "בסל",
            "answer": "בסל" if moved == "yes" else "בקופסה",
        }
        for n, (name, thing) in enumerate((("דנה", "כדור"), ("מיכל", "מפתח")), start=1)
        for moved in ("no", "yes")
    ]
    design = {
        "language": "he",
        "columns": {"item": "item", "text": "text", "question": "question",
                    "options": ["option1", "option2"], "answer": "answer"},
        "factors": {"moved": {"levels": ["no", "yes"]}},
        "timing": {"reading_ms": 60_000, "response_ms": 60_000},
    }  # fmt: skip
    stimuli = table_set(folder / "table", rows, design)
    reference = yaml.safe_load((LOCALES_DIR / "en.yaml").read_text(encoding="utf-8"))
    catalogue = _merged(reference, HEBREW)
    (folder / "he.yaml").write_text(yaml.safe_dump(catalogue, allow_unicode=True), "utf-8")
    ethics = folder / "ethics"
    ethics.mkdir()
    for role in ("consent", "information", "debrief"):
        (ethics / f"{role}.md").write_text("# הסכמה להשתתפות\n\nחוקר: {researcher}\n", "utf-8")
    study = study_folder(
        folder,
        stimuli,
        locale="he.yaml",
        allow_missing_pid=True,
        ethics={**ETHICS_NL, "documents": "ethics"},
    )
    return study, stimuli


def test_a_hebrew_page_reads_right_to_left(browser, tmp_path, secrets):  # noqa: F811
    study, stimuli = hebrew_study(tmp_path)
    config = load_study(study)
    assert (config.language, config.text_direction) == ("he", "rtl")
    storage = Storage(config.database_url())
    app = create_app(config, storage=storage, stimulus_set=stimuli, secrets=secrets)
    context, page, errors = study_page(browser, height=800)
    with serve_in_thread(app) as server:
        page.goto(server.url + "/")
        page.get_by_role("button", name="אני מסכים/ה").click()
        for _ in range(2):  # the welcome screen, then the block's
            page.get_by_role("button", name="התחלה").click()
        page.wait_for_selector(".tt-reading")
        SHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SHOTS / "he-reading.png"))
        layout = page.evaluate(
            """() => {
              const css = (selector) => getComputedStyle(document.querySelector(selector));
              const box = (selector) => document.querySelector(selector).getBoundingClientRect();
              const fill = document.querySelector('.tt-timer-fill');
              return {
                page: css('body').direction,
                story: css('.tt-story').direction,
                lang: document.documentElement.lang,
                origin: parseFloat(getComputedStyle(fill).transformOrigin.split(' ')[0]),
                fillWidth: fill.offsetWidth,
                button: box('.tt-continue'),
                story_box: box('.tt-story'),
              };
            }"""
        )
        assert (layout["page"], layout["story"], layout["lang"]) == ("rtl", "rtl", "he")
        assert layout["origin"] == pytest.approx(layout["fillWidth"], abs=1)  # runs out rightwards
        # The Continue button is centred under the text, as on every other screen.
        story, button = layout["story_box"], layout["button"]
        middle = (story["left"] + story["right"]) / 2
        assert abs((button["left"] + button["right"]) / 2 - middle) < 2
        assert page.locator("#tt-progress").inner_text() == "טקסט 1 מתוך 2"
        page.wait_for_timeout(350)
        page.keyboard.press(" ")
        page.wait_for_selector(".tt-choice")
        page.screenshot(path=str(SHOTS / "he-choice.png"))
        sides = page.evaluate(
            """() => ['left', 'right'].map((side) => {
              const card = document.querySelector('.tt-option-' + side);
              return [card.getBoundingClientRect().x, card.querySelector('button').textContent];
            })"""
        )
        assert sides[0][0] < sides[1][0]  # F's option on the left, J's on the right
        assert [label for _, label in sides] == ["בחירה (F)", "בחירה (J)"]
    context.close()
    storage.close()
    assert not errors, errors
