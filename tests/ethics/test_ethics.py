"""The ethics documents: every one loads, is filled in, and renders safely."""

from __future__ import annotations

import re

import pytest

from tracktale import ethics
from tracktale.app.cli import main
from tracktale.errors import TracktaleError
from tracktale.ethics import (
    DOCUMENTS,
    EthicsDetails,
    load_document,
    markdown_to_html,
    write_documents,
)

DETAILS = EthicsDetails(
    researcher="Dr Ada Example",
    institution="Example University",
    contact_email="ada@example.org",
    ethics_board="the Example Ethics Board",
    ethics_reference="EB-2026-17",
    payment="GBP 3.75",
    duration_minutes=22,
    retention_years=7,
    data_repository="OSF",
)


@pytest.mark.parametrize("name", DOCUMENTS)
def test_every_document_is_filled_in_completely(name):
    document = load_document(name, DETAILS)
    assert document.title and not re.search(r"\{[a-z_]+\}", document.markdown)
    assert "[" not in document.markdown.replace("- [ ]", "")  # no placeholder left
    html = document.html()
    assert html.startswith("<h1>") and "{" not in html


def test_documents_describe_this_study():
    consent = load_document("consent", DETAILS).markdown
    for fact in (
        "46 short stories",
        "40 seconds",
        "15 seconds",
        "GBP 3.75",
        "EB-2026-17",
        "I agree",
        "I do not agree",
    ):
        assert fact in consent, fact
    plan = load_document("data_management", DETAILS).markdown
    for fact in ("salted SHA-256", "TRACKTALE_ADMIN_SECRET", "7 years", "Prolific ID"):
        assert fact in plan, fact
    debrief = load_document("debrief", DETAILS).markdown
    assert "language models" in debrief and "Finish" in debrief
    checklist = load_document("checklist", DETAILS).markdown
    assert "below 50%" in checklist and "- [ ]" in checklist


def test_lab_documents_name_keys_and_the_experimenter_not_prolific():
    consent = load_document("lab_consent", DETAILS).markdown
    for fact in ("46 short stories", "40 seconds", "15 seconds", "GBP 3.75", "**Y**", "**N**"):
        assert fact in consent, fact
    information = load_document("lab_information", DETAILS).markdown
    assert "F key (left)" in information and "J key (right)" in information
    debrief = load_document("lab_debrief", DETAILS).markdown
    assert "language models" in debrief and "SPACE bar" in debrief
    for text in (consent, information, debrief):
        assert "Prolific" not in text and "click" not in text.lower() and "browser" not in text


def test_timing_is_filled_from_the_study():
    consent = load_document("consent", timing={"reading_seconds": 3, "response_seconds": 4.5})
    assert "at most 3 seconds" in consent.markdown and "within 4.5 seconds" in consent.markdown


def test_placeholders_are_reported():
    assert set(EthicsDetails().unfilled()) >= {"researcher", "contact_email", "ethics_reference"}
    assert DETAILS.unfilled() == []


def test_values_are_escaped_in_html():
    nasty = EthicsDetails(researcher="<script>alert('x')</script>")
    html = load_document("consent", nasty).html()
    assert "<script>" not in html and "&lt;script&gt;" in html


def test_markdown_is_commonmark_with_checklists_and_no_raw_html():
    html = markdown_to_html(
        "# Title\n\nSome **bold** and *stressed* text\ncontinued.\n\n- one\n  more\n"
        "- [ ] box\n\n## Next\n\n<b>raw</b> [x](javascript:alert(1))"
    )
    assert html.startswith("<h1>Title</h1>\n<p>Some <strong>bold</strong> and <em>stressed</em>")
    assert '<li class="task-list-item"><input class="task-list-item-checkbox"' in html
    assert "<h2>Next</h2>" in html and "<li>one\nmore</li>" in html
    assert "&lt;b&gt;raw&lt;/b&gt;" in html and "href" not in html


def test_unknown_documents_and_placeholders_are_errors(tmp_path, monkeypatch):
    with pytest.raises(TracktaleError, match="unknown ethics document 'contract'"):
        load_document("contract")
    (tmp_path / "consent.md").write_text("# Consent\n\nSigned {signature}.\n")
    monkeypatch.setattr(ethics, "_FOLDER", tmp_path)
    with pytest.raises(TracktaleError, match=r"unknown placeholder \{signature\}"):
        load_document("consent")


def test_write_documents_and_the_cli(tmp_path, capsys):
    written = write_documents(tmp_path / "board", DETAILS)
    assert len(written) == 2 * len(DOCUMENTS)
    assert "Dr Ada Example" in (tmp_path / "board" / "consent.html").read_text()
    study = tmp_path / "study.yaml"
    study.write_text(
        "ethics: {researcher: Dr Bo, ethics_reference: X-1}\ntiming: {reading_ms: 30000}\n"
    )
    with pytest.raises(SystemExit) as exit_info:
        main(["ethics", "show", "consent", "--study", str(study)])
    out = capsys.readouterr().out
    assert exit_info.value.code == 0 and "Dr Bo" in out and "at most 30 seconds" in out
    with pytest.raises(SystemExit) as exit_info:
        main(["ethics", "render", "--study", str(study), "--out", str(tmp_path / "out")])
    captured = capsys.readouterr()
    assert exit_info.value.code == 0 and (tmp_path / "out" / "checklist.md").is_file()
    assert "placeholders left" in captured.err


@pytest.mark.parametrize("name", ethics.TRANSLATED["nl"])
def test_the_dutch_documents_are_filled_in_completely(name):
    document = load_document(name, DETAILS, language="nl")
    assert document.markdown != load_document(name, DETAILS).markdown
    assert "Dr Ada Example" in document.markdown or name.endswith("debrief")
    assert not re.search(r"\{[a-z_]+\}", document.markdown)
    assert "[" not in document.markdown.replace("- [ ]", "")
    # A detail the study leaves unset stands there as a Dutch placeholder, not an English one.
    unset = load_document(name, language="nl-BE").markdown
    assert "[e-mailadres voor contact]" in unset and "[contact e-mail address]" not in unset


def test_the_general_documents_say_how_to_agree_in_each_mode():
    assert "**I agree**" in load_document("general_consent", DETAILS).markdown
    assert "**Ik ga akkoord**" in load_document("general_consent", DETAILS, language="nl").markdown
    lab = load_document("general_lab_consent", DETAILS, language="nl").markdown
    assert "**J**" in lab and "Prolific" not in lab and "klik" not in lab.lower()


def test_a_document_not_written_in_the_language_says_what_to_supply():
    with pytest.raises(TracktaleError, match=r"'consent' has no 'nl' version \(ethics/nl/consent"):
        load_document("consent", DETAILS, language="nl")
    with pytest.raises(TracktaleError, match="the text your ethics board approved"):
        load_document("general_consent", DETAILS, language="pl")
