"""The report as a reader sees it: no wider than the window, no empty comparisons, captions.

The report is built once, at the cheapest settings (no permutations, PNG only), from simulated
people and one model (the main job's default scores one), and measured in Chromium.
"""

from __future__ import annotations

import importlib.util
import os

import pytest

from tests.conftest import require
from tracktale.analysis.report.build import ReportOptions, build_report

CHROMIUM = "/usr/bin/chromium"
WINDOW = 1400
LAUNCH_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking"]


@pytest.fixture(scope="module")
def one_model_report(human_set, small_model_set, simulated_human, model_results, tmp_path_factory):
    models = model_results[model_results["model_id"] == "EleutherAI/pythia-70m"]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("tracktale.analysis.report.style.FORMATS", ("png",))
        return build_report(
            stimuli=[human_set, small_model_set],
            human=simulated_human,
            models=models,
            out=tmp_path_factory.mktemp("layout"),
            # statsmodels: the mixed-model tables (and their warnings) are on the page.
            options=ReportOptions(permutations=0, engine="statsmodels"),
        )


def test_the_page_is_no_wider_than_a_1400_pixel_window(one_model_report):
    require(importlib.util.find_spec("playwright") is not None, "playwright is not installed")
    require(os.access(CHROMIUM, os.X_OK), f"{CHROMIUM} is missing (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=LAUNCH_ARGS
        )
        page = browser.new_page(viewport={"width": WINDOW, "height": 900})
        page.goto(one_model_report.html_path.as_uri())
        width = page.evaluate("document.documentElement.scrollWidth")
        # No table hides a scroll bar of its own either: each fits its column of text.
        clipped = page.evaluate(
            "[...document.querySelectorAll('div.table')]"
            ".filter(d => d.scrollWidth > d.clientWidth + 1)"
            ".map(d => d.previousElementSibling ? d.previousElementSibling.textContent : '')"
        )
        browser.close()
    assert width <= WINDOW
    assert clipped == []


def test_a_one_model_report_draws_no_comparison_of_models(one_model_report):
    figures = [f.name for section in one_model_report.sections for f in section.figures]
    assert not [name for name in figures if name.startswith("scaling_log_axis")]
    assert "this run scored one model" in one_model_report.html_path.read_text()


def test_captions_name_their_intervals_and_the_chance_line(one_model_report):
    captions = {f.name: f.title for section in one_model_report.sections for f in section.figures}
    figure3 = captions["fig3_humans_vs_reference"]
    assert "two-way clustered over participants and items" in figure3
    case_study = next(t for name, t in captions.items() if name.startswith("case_study_"))
    for caption in (case_study,):
        # The people's intervals follow --accuracy-interval (two-way by default since issue 29).
        assert "over participants and items (two-way clustered) for the people" in caption
        assert "Wilson interval over the model's items" in caption
        assert "50% in panel B is chance" in caption


def test_each_fit_is_shown_once_as_a_table(one_model_report):
    html = one_model_report.html_path.read_text()
    assert "<pre>" not in html  # no R-style text block beside the fit's table
    tables = [t.name for section in one_model_report.sections for t in section.tables]
    assert "model_accuracy" in tables and "templates" not in tables
    assert (one_model_report.html_path.parent / "tables" / "templates.csv").is_file()
    assert (one_model_report.html_path.parent / "tables" / "inference_model1.txt").is_file()
