"""The boxes, arithmetic and power figures as a reader sees them (issue 31, item 10).

Built small, each figure is checked for what the issue found: titles cut off, steps and
participants ticked at 1.25 or 22.5, legends over the data, raw model ids and variable names,
the house style missing, a layout matplotlib gave up on (a warning, an error here). The page
shows a summary and links the long-form tables rather than printing their rows.
"""

from __future__ import annotations

import pandas as pd
import pytest

from tests.analysis.figure_checks import capture, problems
from tests.analysis.test_arithmetic import results as arithmetic_results
from tests.analysis.test_arithmetic import stimulus_set as arithmetic_set
from tracktale.analysis.arithmetic import ArithmeticOptions, arithmetic_outputs
from tracktale.analysis.arithmetic import figures as arithmetic_figures
from tracktale.analysis.boxes import boxes_outputs
from tracktale.analysis.boxes import figures as boxes_figures
from tracktale.analysis.report import style
from tracktale.stimuli.boxes import PARADIGM as BOXES


def _boxes_results(stimulus_set, model_id):
    rows = [
        {
            "model_id": model_id,
            "revision": None,
            "item_id": item.item_id,
            "task": "explicit",
            "output": item.answer if item.condition["probe_step"] < 3 else "",
        }
        for item in stimulus_set
    ]
    return pd.DataFrame(rows)


@pytest.fixture
def boxes_run(monkeypatch, tmp_path):
    kept = capture(monkeypatch, boxes_figures, "save_figure")
    overrides = {"boxes": 4, "max_steps": 3, "instances": 4, "shots": [2]}
    stimulus_set = BOXES.generate_set("smoke", 3, overrides)
    model_id = "smollm2-135m-instruct"  # the default model, as the store names it
    outputs = boxes_outputs(
        _boxes_results(stimulus_set, model_id), stimulus_set, tmp_path, n_boot=50
    )
    return kept, outputs


def test_boxes_figures_read_as_the_house_style(boxes_run):
    kept, _ = boxes_run
    assert len(kept) >= 2  # the probing curves and the transitions
    for figure in kept:
        assert problems(figure, forbidden=["smollm2-135m-instruct"]) == []


def test_boxes_long_form_tables_are_linked_not_printed(boxes_run):
    _, outputs = boxes_run
    shown = {table.name: table.shown for table in outputs.tables}
    assert shown["boxes_table1"]
    for long_form in ("boxes_final_step", "boxes_probing", "boxes_transition_labels"):
        assert not shown[long_form], long_form


def _many_long_named_models() -> pd.DataFrame:
    """Sixteen models with long names (the layouts that broke: legends, heatmaps, slanted ids)."""
    results = arithmetic_results()
    long_name = results["model_id"].str.replace("org/", "some-organization/a-long-model-name-")
    return pd.concat([results.assign(model_id=long_name + str(copy)) for copy in range(8)])


@pytest.mark.parametrize(
    "many",
    # sixteen models take 40 s to draw: the full lane runs that case
    [False, pytest.param(True, marks=pytest.mark.slow)],
    ids=["two-models", "sixteen-long-names"],
)
def test_arithmetic_figures_lay_out_and_read_well(many, monkeypatch, tmp_path):
    kept = capture(monkeypatch, arithmetic_figures, "save_figure")
    results = _many_long_named_models() if many else arithmetic_results()
    outputs = arithmetic_outputs(
        results, arithmetic_set(), tmp_path, options=ArithmeticOptions(n_boot=20)
    )
    assert len(kept) >= 10
    for figure in kept:
        found = problems(figure, forbidden=["org/good", "org/silent", "some-organization/"])
        assert found == [], figure._saved_as
    shown = {table.name: table.shown for table in outputs.tables}
    assert shown["arithmetic_table3_accuracy"]
    assert not shown["arithmetic_faa_by_factor_and_horizon"]
    assert not shown["arithmetic_expected_magnitude"]


def test_the_power_curve_ticks_whole_participants_and_names_the_term(monkeypatch, tmp_path):
    from tracktale.analysis.power.design import power_figure

    kept = capture(monkeypatch, style, "save_figure")
    table = pd.DataFrame(
        {
            "participants": [20, 25],
            "power": [0.6, 0.7],
            "ci_low": [0.5, 0.6],
            "ci_high": [0.7, 0.8],
        }
    )
    saved = power_figure(table, tmp_path, "complexity_c")
    (figure,) = kept
    assert problems(figure, forbidden=["complexity_c"]) == []
    assert "complexity_c" not in saved.title


def test_a_linked_table_shows_its_row_count_not_its_rows(boxes_run, tmp_path):
    from tracktale.analysis.report.render import _saved_table_view, environment

    _, outputs = boxes_run
    macros = environment().get_template("macros.html").module
    by_name = {table.name: table for table in outputs.tables}
    linked = by_name["boxes_transition_labels"]
    html = str(macros.saved_table(_saved_table_view(linked, tmp_path)))
    assert "<table>" not in html and f"{len(linked.table)} rows, in the CSV file" in html
    assert "<table>" in str(
        macros.saved_table(_saved_table_view(by_name["boxes_table1"], tmp_path))
    )
