"""A study folder: ``tracktale init``, ``run --study`` and ``experiment serve --study``."""

from __future__ import annotations

import html
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pandas as pd
import pytest
import yaml
from flask import Flask

from tracktale.app.cli import main
from tracktale.app.study_job import StudyRunOptions, run_study_job, study_model_items
from tracktale.experiment.study.folder import (
    ETHICS_TEMPLATES,
    import_study,
    init_study,
    load_folder_study,
)
from tracktale.experiment.web import frontend
from tracktale.stimulus_set import read_stimulus_set


def run_cli(argv, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main([str(arg) for arg in argv])
    out, err = capsys.readouterr()
    return exit_info.value.code, out, err


def test_init_writes_a_study_that_imports_cleanly(tmp_path, capsys):
    study = tmp_path / "my-study"
    code, out, _ = run_cli(["init", study], capsys)
    assert code == 0 and "tracktale run --study" in out
    names = {path.relative_to(study).as_posix() for path in study.rglob("*") if path.is_file()}
    assert names == {
        "items.csv",
        "design.yaml",
        "README.md",
        *(f"ethics/{role}.md" for role in ETHICS_TEMPLATES),
    }
    # No temporary folder is left beside it.
    assert [path.name for path in tmp_path.iterdir()] == ["my-study"]
    table = pd.read_csv(study / "items.csv")
    tests, fillers = table[table["type"] == "test"], table[table["type"] == "filler"]
    assert tests["item"].nunique() == 8 and len(fillers) == 4
    assert len(tests.groupby(["movement", "distance"])) == 4  # 2 x 2
    # Every key of the design has a comment.
    for number, line in enumerate((study / "design.yaml").read_text().splitlines(), 1):
        if line.strip() and not line.lstrip().startswith(("#", "-")) and ":" in line:
            assert "#" in line, f"design.yaml:{number} has no comment: {line}"
    readme = (study / "README.md").read_text()
    assert "tracktale run --study my-study" in readme
    assert "tracktale experiment serve --study my-study" in readme
    set_dir = import_study(study)
    stimulus_set = read_stimulus_set(set_dir)
    assert set_dir.name == stimulus_set.sha256[:12]
    assert stimulus_set.manifest.config["factors"] == ["movement", "distance"]
    assert import_study(study) == set_dir  # unchanged items: the same set
    config = load_folder_study(study)
    assert config.paradigm == "items" and config.study_id == "my-study"
    assert Path(config.ethics.documents) == (study / "ethics").resolve()


def test_init_takes_an_empty_folder_and_refuses_a_non_empty_one(tmp_path, capsys):
    empty = tmp_path / "empty"
    empty.mkdir()
    assert run_cli(["init", empty], capsys)[0] == 0
    assert (empty / "items.csv").is_file()
    full = tmp_path / "full"
    full.mkdir()
    (full / "notes.txt").write_text("mine")
    code, out, err = run_cli(["init", full], capsys)
    assert code == 1
    assert (
        err.strip()
        == f"tracktale: error: {full} is not empty: tracktale init writes a new study folder"
    )
    assert [path.name for path in full.iterdir()] == ["notes.txt"]
    assert sorted(path.name for path in tmp_path.iterdir()) == ["empty", "full"]


def test_a_folder_without_items_is_refused(tmp_path, capsys):
    code, _, err = run_cli(["run", "--study", tmp_path, "--no-model"], capsys)
    assert code == 1 and "needs items.csv" in err


@pytest.fixture(scope="module")
def study_run(tmp_path_factory):
    """``run --study`` once on the example, with four simulated people and no model."""
    folder = tmp_path_factory.mktemp("study")
    saved = os.environ.get("TRACKTALE_DATA")
    os.environ["TRACKTALE_DATA"] = str(folder / "data")
    try:
        study = folder / "study"
        init_study(study)
        lines: list[str] = []
        summary = run_study_job(
            StudyRunOptions(study=study, participants=4, default_model=False), say=lines.append
        )
    finally:
        if saved is not None:
            os.environ["TRACKTALE_DATA"] = saved
    return study, summary, lines


@pytest.mark.slow
def test_run_study_goes_from_the_folder_to_a_report_naming_the_factors(study_run):
    study, summary, lines = study_run
    assert summary.completed_participants == 4
    assert summary.report_path == study / "output" / "run-s1" / "report" / "report.html"
    page = html.unescape(summary.report_path.read_text())
    assert "items: accuracy by the design's factors" in page
    cells = pd.read_csv(summary.report_tables / "items_cells.csv")
    assert {"who", "task", "movement", "distance", "accuracy", "ci_low", "ci_high"} <= set(cells)
    assert set(cells["who"]) == {"people"}
    assert set(cells["movement"]) == {"stayed", "moved"}
    assert (cells["ci_low"] <= cells["accuracy"]).all()
    assert (cells["accuracy"] <= cells["ci_high"]).all()
    for factor in ("movement", "distance"):
        assert (summary.report_tables / f"items_by_{factor}.csv").is_file()
        assert (summary.report_tables.parent / "figures" / f"items_by_{factor}.png").is_file()
    mixed = pd.read_csv(summary.report_tables / "items_mixed_model.csv")
    assert list(mixed["term"]) == [
        "(Intercept)",
        "movement: moved vs stayed",
        "distance: far vs near",
        "movement: moved vs stayed × distance: far vs near",
    ]
    assert "intercepts for participants and for items" in page
    assert any(line.startswith("report: ") for line in lines)


@pytest.mark.slow
def test_the_report_follows_edits_of_the_table_and_the_design(study_run, capsys):
    study, first, _ = study_run
    edited = study.parent / "edited"
    edited.mkdir()
    for name in ("items.csv", "design.yaml"):
        (edited / name).write_text((study / name).read_text())
    # Rename a level of distance (far -> distant) in both files, and add a ninth item.
    table = pd.read_csv(edited / "items.csv", dtype=str, keep_default_na=False)
    table["distance"] = table["distance"].replace({"far": "distant"})
    ninth = table[table["item"] == "8"].assign(item="9")
    ninth = ninth.assign(story=ninth["story"].str.replace("Hugo", "Olga"))
    table = pd.concat([table[table["type"] == "test"], ninth, table[table["type"] != "test"]])
    table.to_csv(edited / "items.csv", index=False)
    design = yaml.safe_load((edited / "design.yaml").read_text())
    design["factors"]["distance"]["levels"] = ["near", "distant"]
    design["simulation"]["effects"]["distance"] = {"distant": -0.4}
    (edited / "design.yaml").write_text(yaml.safe_dump(design, allow_unicode=True))
    code, out, err = run_cli(
        ["run", "--study", edited, "--no-model", "--participants", "4"], capsys
    )
    assert code == 0, err
    assert "Accuracy by cell" in out and "distant" in out
    tables = edited / "output" / "run-s1" / "report" / "tables"
    by_distance = pd.read_csv(tables / "items_by_distance.csv")
    assert list(by_distance["distance"]) == ["near", "distant"]
    mixed = pd.read_csv(tables / "items_mixed_model.csv")
    assert "distance: distant vs near" in set(mixed["term"])
    sets = list((edited / "output" / "sets").iterdir())
    assert len(sets) == 1 and sets[0].name != first.stimulus_dirs["human"].name
    assert read_stimulus_set(sets[0]).manifest.n_items == 38 + 4  # the ninth item's 4 rows


def test_the_model_items_are_the_first_per_cell_and_every_filler(tmp_path):
    init_study(tmp_path / "s")
    stimulus_set = read_stimulus_set(import_study(tmp_path / "s"))
    chosen = study_model_items(stimulus_set, 1)
    assert study_model_items(stimulus_set, None) is None
    roles = [item.role for item in stimulus_set if item.item_id in chosen]
    assert roles.count("main") == 4 and roles.count("filler") == 4


def test_serve_study_imports_the_items_and_serves_them(tmp_path, capsys, monkeypatch):
    calls = []
    monkeypatch.setattr(Flask, "run", lambda self, **kwargs: calls.append(kwargs))
    monkeypatch.setattr(frontend, "find_node_modules", lambda: "node_modules")
    study = tmp_path / "study"
    init_study(study)
    code, out, err = run_cli(["experiment", "serve", "--study", study, "--port", "5124"], capsys)
    assert code == 0, err
    assert "study study: 38 items from" in out and "output/sets/" in out
    assert "participant link (for Prolific): http://127.0.0.1:5124/" in out
    assert calls and calls[0]["port"] == 5124
    assert (study / "output" / "sets").is_dir()
    # A mistake in the table is one line naming the file, line and column; nothing is served.
    lines = (study / "items.csv").read_text().splitlines()
    lines[2] = lines[2].replace(",stayed,", ",stayd,", 1)
    (study / "items.csv").write_text("\n".join(lines) + "\n")
    code, _, err = run_cli(["experiment", "serve", "--study", study], capsys)
    assert code == 1 and "items.csv:3: column 'movement': 'stayd'" in err
    assert len(calls) == 1


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.mark.slow
def test_serve_study_answers_on_a_free_port(tmp_path):
    study = tmp_path / "study"
    init_study(study)
    try:
        frontend.find_node_modules()
    except Exception:
        pytest.skip("the front end (node_modules) is not installed")
    port = _free_port()
    env = {**os.environ, "TRACKTALE_ADMIN_SECRET": "x" * 32}
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tracktale",
            "experiment",
            "serve",
            "--study",
            str(study),
            "--port",
            str(port),
        ],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2) as page:
                    assert page.status == 200
                    break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    raise AssertionError(
                        f"the server did not start: {server.stdout.read()}"
                    ) from None
                time.sleep(0.3)
    finally:
        server.terminate()
        server.wait(timeout=20)


@pytest.mark.slow
def test_people_and_a_model_side_by_side(tmp_path, monkeypatch):
    from tests.scripted_scorers import ScriptedScorer
    from tracktale.models import runner

    monkeypatch.setattr(runner, "check_model", lambda *args, **kwargs: None)
    monkeypatch.setattr(runner, "load_scorer", lambda model_id, **kwargs: ScriptedScorer(model_id))
    study = tmp_path / "study"
    init_study(study)
    options = StudyRunOptions(
        study=study,
        participants=4,
        models=("scripted/model",),
        default_model=False,
        items_per_cell=1,
    )
    summary = run_study_job(options, say=lambda line: None)
    cells = pd.read_csv(summary.report_tables / "items_cells.csv")
    model = cells[cells["who"] == "scripted/model"]
    assert set(cells["who"]) == {"people", "scripted/model"}
    assert set(model["task"]) == {"implicit", "explicit"}
    assert (model["n"] == 1).all() and len(model) == 2 * 4  # two tasks x four cells
    # The scripted model always prefers the good continuation, and types "box".
    assert (model[model["task"] == "implicit"]["accuracy"] == 1).all()
    by_movement = pd.read_csv(summary.report_tables / "items_by_movement.csv")
    assert {"people", "scripted/model"} == set(by_movement["who"])
