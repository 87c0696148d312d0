"""The locale catalogue: every language has exactly the reference's keys, and no participant-
facing English is left in the page's templates and scripts."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from tracktale.app.cli import main
from tracktale.errors import TracktaleError
from tracktale.experiment.study import locale
from tracktale.experiment.study.config import load_study
from tracktale.experiment.study.locale import (
    LOCALES_DIR,
    catalogue_problems,
    load_catalogue,
    read_catalogue,
    shipped_languages,
)

EXPERIMENT = LOCALES_DIR.parent
REFERENCE = read_catalogue(LOCALES_DIR / "en.yaml", "en")


def test_english_and_dutch_ship():
    assert {"en", "nl"} <= set(shipped_languages())


@pytest.mark.parametrize("language", shipped_languages())
def test_every_shipped_catalogue_has_exactly_the_reference_keys(language):
    catalogue = read_catalogue(LOCALES_DIR / f"{language}.yaml", language)
    assert catalogue_problems(catalogue, REFERENCE) == []
    assert set(catalogue.texts) == set(REFERENCE.texts)


def _variant(tmp_path, language: str, edit) -> Path:
    """The Dutch catalogue with ``edit`` applied to its text, as ``<language>.yaml``."""
    text = (LOCALES_DIR / "nl.yaml").read_text(encoding="utf-8")
    path = tmp_path / f"{language}.yaml"
    path.write_text(edit(text), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("edit", "problem"),
    [
        (lambda t: t.replace("  loading: Laden...\n", ""), "missing key 'page.loading'"),
        (lambda t: t.replace("  loading:", "  lodaing:"), "unknown key 'page.lodaing'"),
        (
            lambda t: t.replace("Kiezen ({key})", "Kiezen ({toets})"),
            "'buttons.choose': unknown placeholder {toets} (the reference has: key)",
        ),
        (
            lambda t: t.replace('    one: "{n} seconde"\n', ""),
            "'time.seconds': plural forms other; nl needs one, other",
        ),
        (
            lambda t: t.replace("  gender: Gender\n", "  gender: [Gender]\n"),
            "'survey.gender': is a list, the reference has a text",
        ),
        (lambda t: t.replace("  loading: Laden...", '  loading: ""'), "an empty text"),
        (lambda t: t.replace("Laden...", "Laden {..."), "a brace that is not part of"),
        (lambda t: t.replace("direction: ltr", "direction: up"), "must be ltr or rtl"),
    ],
)
def test_a_catalogue_with_a_problem_is_refused_naming_it(tmp_path, edit, problem):
    path = _variant(tmp_path, "nl", edit)
    problems = catalogue_problems(read_catalogue(path, "nl"), REFERENCE)
    assert any(problem in line for line in problems), problems
    with pytest.raises(TracktaleError, match=re.escape(problem)):
        load_catalogue("nl", path)


def test_plural_forms_follow_the_languages_rules(tmp_path):
    # Polish counts 1 / 2-4 / 5+ (and fractions) apart: two forms are not enough.
    path = _variant(tmp_path, "pl", lambda text: text)
    problems = catalogue_problems(read_catalogue(path, "pl"), REFERENCE)
    assert any("pl needs few, many, one, other" in line for line in problems), problems
    dutch = load_catalogue("nl")
    assert dutch.seconds(1000) == "1 seconde"
    assert dutch.seconds(1500) == "1,5 seconden"  # and the Dutch decimal comma
    assert load_catalogue("en").seconds(40_000) == "40 seconds"


def test_a_language_tag_finds_its_catalogue_and_an_unknown_one_says_what_to_do(tmp_path):
    assert load_catalogue("nl-BE").source.name == "nl.yaml"
    with pytest.raises(TracktaleError, match=r"no locale catalogue for language 'pl'.*locale:"):
        load_catalogue("pl")
    study = tmp_path / "study.yaml"
    study.write_text("language: pl\n", encoding="utf-8")
    with pytest.raises(TracktaleError, match="study.yaml: no locale catalogue for language 'pl'"):
        load_study(study)


def test_a_study_may_bring_its_own_catalogue(tmp_path):
    data = yaml.safe_load((LOCALES_DIR / "nl.yaml").read_text(encoding="utf-8"))
    data["page"]["loading"] = "Ładowanie..."
    data["time"]["seconds"] = {
        "one": "{n} sekunda",
        "few": "{n} sekundy",
        "many": "{n} sekund",
        "other": "{n} sekundy",
    }
    data["page"]["redirect_in"] = {
        form: f"Powrót do Prolific za {text}" for form, text in data["time"]["seconds"].items()
    }
    (tmp_path / "pl.yaml").write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    study = tmp_path / "study.yaml"
    study.write_text("language: pl\nlocale: pl.yaml\n", encoding="utf-8")
    texts = load_study(study).catalogue()
    assert texts.text("page.loading") == "Ładowanie..."
    assert [texts.seconds(ms) for ms in (1000, 3000, 5000)] == [
        "1 sekunda",
        "3 sekundy",
        "5 sekund",
    ]


# ---------------------------------------------------------------- no English left in the page

SHARED_SCRIPTS = (
    "static/study.js",
    "static/trials.js",
    "static/outbox.js",
    "static/plugin-helpers.js",
    "static/plugins/timed-reading.js",
    "static/plugins/timed-choice.js",
    "static/plugins/timed-text-response.js",
)
"""The scripts every study's page runs. (The boxes and arithmetic studies' own plugins are
English by design: those studies reproduce English papers.)"""
TEMPLATES = ("templates/study.html", "templates/error.html")
NOT_SHOWN = {
    ("static/outbox.js", "withheld: an earlier answer was refused"),  # kept in localStorage
}
"""Literals that read like English but never reach the participant, with where they go."""
KEY_NAMES = {"Enter", "Escape", "Backspace"}
_WORD = re.compile(r"^\(?[A-Za-z][a-z]+[,.;:!?)]*$")


def string_literals(source: str) -> list[tuple[int, str, str]]:
    """Every string literal of a script: (line, text, the line it is on); comments skipped."""
    found: list[tuple[int, str, str]] = []
    lines = source.splitlines()
    i, line = 0, 1
    while i < len(source):
        char = source[i]
        if source.startswith("//", i):
            i = source.find("\n", i) if "\n" in source[i:] else len(source)
        elif source.startswith("/*", i):
            end = source.index("*/", i) + 2
            line += source.count("\n", i, end)
            i = end
        elif char in "'\"`":
            j = i + 1
            while source[j] != char:
                j += 2 if source[j] == "\\" else 1
            found.append((line, source[i + 1 : j], lines[line - 1]))
            line += source.count("\n", i, j)
            i = j + 1
        else:
            line += char == "\n"
            i += 1
    return found


def reads_as_english(text: str) -> bool:
    """Prose: two words in a row (``Time is up``), or one capitalised word (``Continue``)."""
    plain = re.sub(r"<[^>]*>", " ", text)  # HTML fragments: their text only
    tokens = [token for token in plain.split() if re.search("[A-Za-z]", token)]
    pairs = zip(tokens, tokens[1:], strict=False)
    if any(_WORD.match(a) and _WORD.match(b) for a, b in pairs):
        return True
    return len(tokens) == 1 and bool(re.fullmatch(r"[A-Z][a-z]+[.!?:]*", tokens[0]))


def _exempt(name: str, text: str, line: str) -> bool:
    developer = "console." in line or "new Error(" in line or text == "use strict"
    # A plugin's parameter default: jsPsych's fallback; the page passes the catalogue's text.
    plugin = name.startswith("static/plugins/") or name == "static/plugin-helpers.js"
    default = plugin and "default:" in line
    return developer or default or text in KEY_NAMES or (name, text) in NOT_SHOWN


def test_the_checks_find_english():
    sample = 'const a = "Time is up."; // "not this"\nb("Continue", \'tt-a tt-b\', `HTTP ${x}`);'
    found = [text for _, text, _ in string_literals(sample) if reads_as_english(text)]
    assert found == ["Time is up.", "Continue"]
    assert reads_as_english('<p class="tt-code-line">Your completion code: <strong>')
    assert reads_as_english("Loading...") and reads_as_english("Choose (")
    assert not reads_as_english("Content-Type") and not reads_as_english("application/json")


@pytest.mark.parametrize("name", SHARED_SCRIPTS)
def test_no_participant_facing_english_is_hard_coded_in_the_scripts(name):
    source = (EXPERIMENT / name).read_text(encoding="utf-8")
    english = [
        f"{name}:{number}: {text!r}"
        for number, text, line in string_literals(source)
        if reads_as_english(text) and not _exempt(name, text, line)
    ]
    assert english == [], "put these texts in experiment/locales/*.yaml:\n" + "\n".join(english)


@pytest.mark.parametrize("name", TEMPLATES)
def test_no_participant_facing_english_is_hard_coded_in_the_templates(name):
    source = (EXPERIMENT / name).read_text(encoding="utf-8")
    text = re.sub(r"\{\{.*?\}\}|\{%.*?%\}|<script.*?</script>|<[^>]*>", " ", source, flags=re.S)
    assert re.findall(r"[A-Za-z]{2,}", text) == [], name


def test_the_english_catalogue_keeps_the_texts_the_page_had():
    # The paper studies' participants read what they read before the catalogue (a few samples
    # of what the scripts used to hold; the browser tests read the rest on the pages).
    english = load_catalogue("en")
    assert english.text("page.progress", Noun="Story", position=12, total=50) == "Story 12 of 50"
    assert english.text("buttons.choose", key="F") == "Choose (F)"
    assert english.text("trial.reading_prompt", noun="story") == (
        "Press SPACE or click Continue when you have read the story."
    )
    assert english.plural("page.redirect_in", 5) == "You are returned to Prolific in 5 seconds."
    assert english.text("survey.attentive", nouns="puzzles") == (
        "Did you pay attention to the puzzles throughout the study?"
    )


def test_the_module_has_no_paradigm_names():
    source = Path(locale.__file__).read_text(encoding="utf-8").lower()
    assert not any(name in source for name in ("narrative", "boxes", "arithmetic"))


def test_a_translator_starts_a_catalogue_and_checks_it(tmp_path, capsys):
    path = tmp_path / "pl.yaml"
    with pytest.raises(SystemExit) as exit_info:
        main(["experiment", "locale", "new", "pl", "--out", str(path)])
    assert exit_info.value.code == 0
    started = read_catalogue(path, "pl")
    assert started.text("meta.name") == "polski" and started.direction == "ltr"
    assert set(started.texts["time.seconds"]) == {"one", "few", "many", "other"}
    assert set(started.texts) == set(REFERENCE.texts)
    with pytest.raises(SystemExit) as exit_info:
        main(["experiment", "locale", "check", str(path)])
    out = capsys.readouterr().out
    assert exit_info.value.code == 0 and "texts are the English ones" in out
    path.write_text(path.read_text("utf-8").replace("  loading: Loading...\n", ""), "utf-8")
    with pytest.raises(SystemExit) as exit_info:
        main(["experiment", "locale", "check", str(path)])
    assert exit_info.value.code == 1
    assert "missing key 'page.loading'" in capsys.readouterr().err
    hebrew = tmp_path / "he.yaml"
    with pytest.raises(SystemExit):
        main(["experiment", "locale", "new", "he", "--out", str(hebrew)])
    assert read_catalogue(hebrew, "he").direction == "rtl"
