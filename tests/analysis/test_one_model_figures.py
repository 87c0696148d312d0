"""Figures of a one-model report (issue 31, item 7).

With one model, Figure 6 and the manipulation check spent half their height on a rotated model
name, and the case-study plot drew the participants and a template's model line at the same x,
their error bars on top of each other. Built once from simulated people and one model.
"""

from __future__ import annotations

import pytest

from tests.analysis.figure_checks import capture
from tests.conftest import small_report
from tracktale.analysis.narrative import figures as narrative_figures
from tracktale.analysis.narrative import side_by_side
from tracktale.analysis.report.build import ReportOptions, build_report

CHECKED = ("fig6_templates", "manipulation_check", "case_study_")


@pytest.fixture(scope="module")
def one_model_figures(human_set, small_model_set, simulated_human, model_results, tmp_path_factory):
    models = model_results[model_results["model_id"] == "EleutherAI/pythia-70m"]
    with pytest.MonkeyPatch.context() as patch, small_report():
        kept = capture(patch, narrative_figures, "save_figure")
        case_studies = capture(patch, side_by_side, "save_figure")
        build_report(
            stimuli=[human_set, small_model_set],
            human=simulated_human,
            models=models,
            out=tmp_path_factory.mktemp("one-model"),
            options=ReportOptions(permutations=0, engine="statsmodels"),
        )
    return {**_named(kept), **_named(case_studies)}


def _named(figures: list) -> dict:
    """The figures by file stem (each figure's name is the one it was saved under)."""
    return {
        getattr(figure, "_saved_as", str(index)): figure for index, figure in enumerate(figures)
    }


def _drawn(figure):
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = FigureCanvasAgg(figure)
    canvas.draw()
    return canvas.get_renderer()


def test_a_model_name_under_the_bars_is_level_and_short(one_model_figures):
    chosen = [f for name, f in one_model_figures.items() if name.startswith(CHECKED[:2])]
    assert len(chosen) == 2, sorted(one_model_figures)
    for figure in chosen:
        renderer = _drawn(figure)
        for ax in figure.axes:
            for label in ax.get_xticklabels():
                if not label.get_text():
                    continue
                assert label.get_rotation() == 0, label.get_text()
                box = label.get_window_extent(renderer)
                assert box.height < 0.15 * figure.bbox.height, label.get_text()


def test_series_at_one_level_are_drawn_apart(one_model_figures):
    chosen = [f for name, f in one_model_figures.items() if name.startswith(CHECKED)]
    assert len(chosen) == 3, sorted(one_model_figures)
    for figure in chosen:
        for ax in figure.axes:
            seen: dict[float, str] = {}
            for container in ax.containers:
                if type(container).__name__ != "ErrorbarContainer":
                    continue
                _, _, bars = container.lines  # the vertical bars: one segment per point
                for segment in bars[0].get_segments():
                    key = round(float(segment[0][0]), 6)
                    assert key not in seen, (ax.get_title(), seen.get(key), container.get_label())
                    seen[key] = container.get_label()


def test_one_models_points_sit_inside_the_manipulation_check(one_model_figures):
    (ax,) = one_model_figures["manipulation_check"].axes
    low, high = ax.get_xlim()
    for container in ax.containers:
        for segment in container.lines[2][0].get_segments():
            x = segment[0][0]
            assert low + 0.2 * (high - low) < x < high - 0.2 * (high - low)
