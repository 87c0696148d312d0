"""Every table and figure of the arithmetic paper, built from synthetic model outputs."""

import functools
import math

import numpy as np
import pandas as pd
import pytest

from tracktale.analysis.arithmetic import ArithmeticOptions, arithmetic_section, scored_rows
from tracktale.analysis.arithmetic.paper_models import PAPER_MODELS, short_label
from tracktale.analysis.arithmetic.tables import output_statistics, reference_table
from tracktale.errors import TracktaleError
from tracktale.stimuli.registry import get_paradigm

DATASETS = [
    *(f"int_1-10_{op}_lb1" for op in ("add", "sub", "mul", "div", "mixed")),
    "float_0-1_mixed_lb1",
    "int_10-100_mixed_lb1",
    "float_10-100_mixed_lb1",
    "int_1-10_mixed_lb3",
    "float_1-10_mixed_lb3",
]
HORIZONS = [5, 45, 95]
DS = PAPER_MODELS[0].hub_id  # DeepSeek-R1-Distill-Qwen-1.5B
QW = PAPER_MODELS[1].hub_id

FIGURES = [
    "arithmetic_fig2_faa_by_horizon",
    "arithmetic_fig3_faa_vs_caa",
    "arithmetic_fig4_input_range",
    "arithmetic_fig4_input_range_per_model",
    "arithmetic_fig5_lookback",
    "arithmetic_fig5_lookback_per_model",
    "arithmetic_fig6_operation",
    "arithmetic_fig6_operation_per_model",
    "arithmetic_fig7_answer_position",
    "arithmetic_fig10_magnitude_input_range",
    "arithmetic_fig11_magnitude_data_type",
    "arithmetic_fig12_magnitude_operation",
    "arithmetic_fig13_magnitude_models",
    "arithmetic_fig16_heatmap_input_range",
    "arithmetic_fig17_heatmap_lookback",
    "arithmetic_fig19_par_by_horizon",
]
PAPER_TABLES = [
    "arithmetic_table1_models",
    "arithmetic_table2_generation_change",
    "arithmetic_table3_accuracy",
    "arithmetic_table4_output_statistics",
    "arithmetic_references",
]
DATA_TABLES = [
    "arithmetic_references_by_dataset",
    "arithmetic_faa_by_factor",
    "arithmetic_faa_by_factor_and_horizon",
    "arithmetic_answer_position",
    "arithmetic_expected_magnitude",
    "arithmetic_fig2_faa_by_horizon",
    "arithmetic_fig16_heatmap_input_range",
    "arithmetic_fig17_heatmap_lookback",
]


@functools.cache
def stimulus_set():
    config = {"datasets": DATASETS, "horizons": HORIZONS, "per_horizon": 12}
    return get_paradigm("arithmetic").generate_set("model", 2, config)


def _trace(steps):
    return "\n".join(f"Step {n}: S{n + 2} = ..." for n in range(1, steps + 1))


def results():
    """DS-1.5 is right less often on long procedures, echoing the template first on a third of
    the items; QW-4 answers our IEEE reference where the references differ; a third model
    answers nothing."""
    rows = []
    rng = np.random.default_rng(4)
    for item in stimulus_set():
        horizon = item.condition["horizon"]
        right = rng.random() < 1 - horizon / 120
        answer = item.answer if right else "12345"
        echo = "<answer>FINAL_RESULT</answer>\n" if rng.random() < 1 / 3 else ""
        rows.append((DS, item.item_id, f"{echo}{_trace(horizon)}\n<answer>{answer}</answer>"))
        ieee = item.truth["reference"] if item.truth["references_differ"] else item.answer
        rows.append((QW, item.item_id, f"{_trace(horizon - 1)} <answer>{ieee}</answer> done"))
        rows.append(("org/other-3b", item.item_id, "I cannot do this."))
    frame = pd.DataFrame(rows, columns=["model_id", "item_id", "output"])
    return frame.assign(revision=None, task="explicit")


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    out = tmp_path_factory.mktemp("arithmetic-paper")
    paths = arithmetic_section(results(), stimulus_set(), out, n_boot=100)
    return out, {path.name for path in paths}


def test_every_figure_and_table_is_written(written):
    out, names = written
    for stem in FIGURES:
        assert {f"{stem}.png", f"{stem}.pdf", f"{stem}.svg"} <= names, stem
    for stem in PAPER_TABLES:
        assert {f"{stem}.csv", f"{stem}.tex"} <= names, stem
    for stem in DATA_TABLES:
        assert f"{stem}.csv" in names, stem
    for name in names:
        assert (out / name).stat().st_size > 0


def test_table1_and_table3_name_the_papers_models(written):
    out, _ = written
    models = pd.read_csv(out / "arithmetic_table1_models.csv")
    assert list(models["abbreviation"].fillna("")) == ["DS-1.5", "QW-4", ""]
    assert list(models["scale"].fillna(""))[:2] == ["small (<4B)", "small (<4B)"]
    accuracy = pd.read_csv(out / "arithmetic_table3_accuracy.csv")
    assert set(accuracy["label"]) == {"DS-1.5", "QW-4", "other-3b"}  # readable, not the id
    assert short_label("smollm2-135m-instruct") == "SmolLM2 135M Instruct (Q4_1)"
    assert short_label(f"{QW}@main") == "QW-4@main"


def test_both_references_are_reported(written):
    out, _ = written
    table = pd.read_csv(out / "arithmetic_references.csv").set_index("model")
    qwen = table.loc[QW]
    assert qwen["n_references_differ"] > 0  # the mixed datasets divide by zero
    assert qwen["faa_ieee_differing"] == 100 and qwen["faa_paper_differing"] == 0
    assert qwen["faa_ieee"] == 100 and qwen["faa_paper"] < 100
    by_dataset = pd.read_csv(out / "arithmetic_references_by_dataset.csv").set_index("dataset")
    assert by_dataset.loc["all", "references_differ"] == qwen["n_references_differ"]
    assert by_dataset.loc["int_1-10_add_lb1", "division_by_zero"] == 0


def test_the_first_answer_rules_and_the_reference_option(written):
    out, _ = written
    table = pd.read_csv(out / "arithmetic_references.csv").set_index("model")
    deepseek = table.loc[DS]
    assert deepseek["first_answer_rules_differ"] > 0  # the echoed template
    assert deepseek["faa_paper"] < deepseek["faa_numeric_paper"]
    paper = scored_rows(results(), stimulus_set())
    numeric = scored_rows(results(), stimulus_set(), ArithmeticOptions(first_answer="numeric"))
    ieee = scored_rows(results(), stimulus_set(), ArithmeticOptions(reference="ieee"))
    qwen = paper["model"] == QW
    assert numeric[~qwen]["faa"].sum() > paper[~qwen]["faa"].sum()
    assert ieee[qwen]["faa"].all() and not paper[qwen]["faa"].all()
    with pytest.raises(TracktaleError, match="--arithmetic-reference 'exact' is not one of"):
        ArithmeticOptions(reference="exact")


def test_table4_is_the_expected_output_statistics_of_the_look_back_1_datasets():
    table = output_statistics(stimulus_set()).set_index("task")
    assert list(table.index) == ["Add", "Subtract", "Multiply", "Divide", "Mixed"]
    values = [
        float(item.truth["paper_reference"])
        for item in stimulus_set()
        if item.condition["dataset"] == "int_1-10_mul_lb1"
    ]
    assert table.loc["Multiply", "median"] == pytest.approx(float(np.median(values)))
    assert table.loc["Multiply", "max"] == max(values)
    assert table.loc["Multiply", "n"] == len(values) == 36
    ieee = output_statistics(stimulus_set(), "ieee")
    assert set(ieee["reference"]) == {"ieee"}


def test_reference_table_counts_per_model():
    rows = scored_rows(results(), stimulus_set())
    table = reference_table(rows).set_index("model")
    assert table.loc["org/other-3b", "faa_paper"] == 0
    assert math.isclose(table.loc[QW, "faa_numeric_ieee"], 100)


def test_the_figures_look_right(written):
    out, _ = written
    from PIL import Image

    for stem in ("arithmetic_fig16_heatmap_input_range", "arithmetic_fig4_input_range"):
        with Image.open(out / f"{stem}.png") as image:
            width, height = image.size
            assert width > 400 and height > 300
            colours = image.convert("RGB").getcolors(maxcolors=1 << 20)
            assert colours is not None and len(colours) > 20  # not a blank canvas
