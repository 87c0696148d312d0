"""An imported item table through the model tasks: scripted scorers, then a tiny real model."""

from __future__ import annotations

import csv

import pandas as pd
import pytest

from tests.scripted_scorers import ScriptedScorer
from tracktale.app.cli import main
from tracktale.models.store import read_results
from tracktale.models.tasks import applies, score_items
from tracktale.stimuli.items import EXAMPLE_DIR
from tracktale.stimuli.items.importer import import_table
from tracktale.stimulus_set import write_stimulus_set


@pytest.fixture(scope="module")
def example_set():
    return import_table(EXAMPLE_DIR / "items.csv", EXAMPLE_DIR / "design.yaml")


def test_every_model_task_applies_to_the_imported_test_items(example_set):
    main_items = example_set.select(role="main")
    for task in ("implicit", "explicit", "sequence"):
        assert all(applies(task, item) for item in main_items), task
    fillers = example_set.select(role="filler")
    assert not any(applies("implicit", item) for item in fillers)  # no continuations given


def test_scripted_scorers_score_an_imported_set(example_set):
    items = example_set.select(role="main")
    scorer = ScriptedScorer()  # generates "box"; the good continuation is always likelier
    explicit = score_items(scorer, items, "explicit", stimulus_sha256=example_set.sha256)
    expected = ["box" in item.truth["response"]["accepted"] for item in items]
    assert [row.scores["correct"] for row in explicit] == expected
    assert any(expected) and not all(expected)
    assert {row.paradigm for row in explicit} == {"items"}
    assert all(row.scores["options_named"] == 0 for row in explicit)
    assert [row.scores["matched"] for row in explicit] == ["box" if e else None for e in expected]
    implicit = score_items(scorer, items, "implicit", stimulus_sha256=example_set.sha256)
    assert all(row.scores["correct"] for row in implicit)
    sequence = score_items(scorer, items[:1], "sequence", stimulus_sha256=example_set.sha256)
    assert sequence[0].scores["words"] == items[0].context.split()


def test_the_sequence_task_sums_surprisal_into_the_table_s_regions(tmp_path):
    table = [["item", "n", "text", "regions"]]
    table.append(
        ["1", "sg", "The key to the cabinets was rusty.", "The key | to the cabinets | was rusty."]
    )
    table.append(["1", "pl", "The keys to the cabinet were rusty.", ""])
    with open(tmp_path / "items.csv", "w", newline="", encoding="utf-8") as handle:
        csv.writer(handle).writerows(table)
    (tmp_path / "design.yaml").write_text(
        "columns: {regions: regions}\nfactors:\n  n:\n    levels: [sg, pl]\n"
    )
    stimulus_set = import_table(tmp_path / "items.csv", tmp_path / "design.yaml")
    rows = score_items(ScriptedScorer(), stimulus_set.items, "sequence", stimulus_sha256="s")
    assert rows[0].scores["words"] == ["The key", "to the cabinets", "was rusty."]
    assert rows[1].scores["words"] == ["The", "keys", "to", "the", "cabinet", "were", "rusty."]


def _cli(argv, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    captured = capsys.readouterr()
    assert exit_info.value.code == 0, captured.err
    return captured.out


@pytest.mark.slow
def test_models_score_runs_every_task_on_an_imported_set(example_set, model_dirs, tmp_path, capsys):
    folder = write_stimulus_set(example_set, tmp_path / "set")
    results = tmp_path / "results"
    _cli(
        ["models", "score", "--stimuli", str(folder), "--model", str(model_dirs["pythia"]),
         "--task", "all", "--out", str(results)],
        capsys,
    )  # fmt: skip
    rows = read_results(results)
    main_ids = {item.item_id for item in example_set.select(role="main")}
    for task in ("implicit", "explicit", "sequence"):
        scored = rows[rows["task"] == task]
        assert set(scored["item_id"]) == main_ids, task
    explicit = rows[rows["task"] == "explicit"]
    assert set(explicit["max_new_tokens"]) == {8}  # the design's budget, carried by each item
    assert {"matched", "options_named"} <= set(explicit.columns)
    sequence = rows[rows["task"] == "sequence"].set_index("item_id")
    item = example_set.select(role="main")[0]
    assert list(sequence.loc[item.item_id, "words"]) == item.context.split()
    report = tmp_path / "report"
    _cli(
        ["analysis", "report", "--stimuli", str(folder), "--models", str(results),
         "--out", str(report)],
        capsys,
    )  # fmt: skip
    assert "items: models" in (report / "report.html").read_text(encoding="utf-8")
    table = pd.read_csv(report / "tables" / "items_accuracy.csv")
    assert list(table.columns) == [
        "model", "task", "movement", "distance", "n", "correct", "accuracy", "ci_low", "ci_high",
    ]  # fmt: skip
    assert set(table["task"]) == {"implicit", "explicit"} and set(table["n"]) == {8}
