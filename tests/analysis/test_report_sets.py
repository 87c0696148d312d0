"""One report over a results store that holds several stimulus sets of several paradigms."""

import functools
import re

import pandas as pd
import pytest

from tests.analysis.conftest import explicit_records
from tests.app.test_cli import run
from tracktale.models.store import write_shard
from tracktale.stimuli.registry import get_paradigm
from tracktale.stimulus_set import write_stimulus_set

BOXES = get_paradigm("boxes")


def _answers(item, index):
    """Right two times in three, garbage otherwise; arithmetic answers tagged."""
    output = item.answer if index % 3 else "no idea"
    return f"<answer>{output}</answer>" if item.paradigm == "arithmetic" else output


@functools.cache
def _sets():
    return {
        "boxes-model": BOXES.generate_set("model", 1, {"instances": 2, "shots": [2, 5]}),
        "boxes-probing": BOXES.generate_set("probing", 1, {"instances": 2}),
        "boxes-compressed": BOXES.generate_set("compressed", 1, {"instances": 4}),
        "arith": get_paradigm("arithmetic").generate_set(
            "pilot", 1, {"datasets": ["int_1-10_add_lb1"], "horizons": [5, 95], "per_horizon": 3}
        ),
    }


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    root = tmp_path_factory.mktemp("several-sets")
    for name, stimulus_set in _sets().items():
        write_stimulus_set(stimulus_set, root / name)
        write_shard(root / "results", explicit_records(stimulus_set, _answers))
    return root


def _report(store, out, names, capsys, *extra):
    argv = ["analysis", "report", "--models", str(store / "results"), "--out", str(out), *extra]
    for name in names:
        argv += ["--stimuli", str(store / name)]
    return run(argv, capsys)


def test_every_set_gets_its_own_folder(store, tmp_path, capsys, small_reports):
    out = tmp_path / "report"
    status, _, err = _report(store, out, list(_sets()), capsys)
    assert status == 0, err
    table1 = {
        name: pd.read_csv(out / "boxes" / name / "boxes_table1.csv")
        for name in ("boxes-model", "boxes-probing", "boxes-compressed")
    }
    # The compressed set's Table 1 (it has an initialization row factor) did not replace the
    # model set's (which has three instruction variants).
    assert "initialization" in table1["boxes-compressed"].columns
    assert "initialization" not in table1["boxes-model"].columns
    assert set(table1["boxes-model"]["instruction"]) == {
        "Normal instruction",
        "Counter-intuitive instruction (language)",
        "Counter-intuitive instruction (truth values switched)",
    }
    assert (out / "boxes" / "boxes-compressed" / "boxes_compression.csv").is_file()
    assert not (out / "boxes" / "boxes-model" / "boxes_compression.csv").exists()
    assert (out / "boxes" / "boxes-probing" / "boxes_probing.csv").is_file()
    assert (out / "arithmetic" / "arith" / "arithmetic_table3_accuracy.csv").is_file()
    page = (out / "report.html").read_text()
    for name in _sets():
        assert f"models ({name})" in page
    assert "left aside" not in page
    _captioned_in_reading_order(page, out)


def _captioned_in_reading_order(page, out):
    """Every boxes and arithmetic table and figure has a caption, not its file's stem."""
    from markupsafe import escape

    from tracktale.analysis import arithmetic, boxes

    headings = re.findall(r"<h3>(.*?)</h3>", page)
    captions = re.findall(r"<figcaption>(.*?) <span", page)
    stems = {
        path.stem
        for folder in ("boxes", "arithmetic")
        for path in out.joinpath(folder).rglob("*.*")
    }
    assert headings and captions and not set(headings + captions) & stems
    for title in (boxes.TITLES["table1"], boxes.TITLES["probing"], *arithmetic.TITLES.values()):
        assert str(escape(title)) in headings, title
    assert any(
        c.startswith("Intermediate state probing (as the paper&#39;s Figure 2)") for c in captions
    )
    assert str(escape("The paper's Figure 2: first-answer accuracy (FAA)")) in page
    # Tables come in reading order: the paper's first, ours after.
    titles = [boxes.TITLES[key] for key in ("table1", "final_step", "compression")]
    arithmetic_titles = [
        arithmetic.TITLES[stem]
        for stem in (
            "arithmetic_table1_models",
            "arithmetic_table4_output_statistics",
            "arithmetic_fig2_faa_by_horizon",
            "arithmetic_references",
        )
    ]
    for ordered in (titles, arithmetic_titles):
        positions = [headings.index(str(escape(title))) for title in ordered]
        assert positions == sorted(positions), ordered


def test_rows_of_sets_not_named_are_left_aside_with_a_count(store, tmp_path, capsys, small_reports):
    out = tmp_path / "report"
    options = ["--arithmetic-reference", "ieee", "--boxes-unparsed", "whole-step"]
    status, _, err = _report(store, out, ["boxes-compressed", "arith"], capsys, *options)
    assert status == 0, err
    page = (out / "report.html").read_text()
    assert "arithmetic reference ieee" in page and "unparsed answers whole-step" in page
    named = {i.item_id for name in ("boxes-compressed", "arith") for i in _sets()[name]}
    # The store holds each item once; items the named sets share with others stay in.
    others = len({i.item_id for s in _sets().values() for i in s} - named)
    assert f"model results: {others:,} rows of 2 stimulus set(s) not given" in err
    assert f"{others:,} rows of 2 stimulus set(s) not given" in page
    assert sorted(p.name for p in (out / "boxes").iterdir()) == ["boxes-compressed"]
    trials = pd.read_csv(out / "trial_table.csv")
    assert set(trials["paradigm"]) == {"boxes", "arithmetic"}
    assert len(trials) == len(named)
