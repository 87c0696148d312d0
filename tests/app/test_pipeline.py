"""The main job (tracktale run): stimuli, simulated study, report."""

import sqlite3
from collections import Counter

import pytest

from tests.conftest import small_report
from tracktale.app.pipeline import (
    MAIN_JOB_ITEMS_PER_CELL,
    SIMULATED_DATABASE,
    RunOptions,
    run_main_job,
)
from tracktale.errors import TracktaleError
from tracktale.stimulus_set import read_stimulus_set


@pytest.fixture(scope="module")
def first_run(tmp_path_factory):
    import os

    folder = tmp_path_factory.mktemp("run")
    saved = os.environ.get("TRACKTALE_DATA")
    os.environ["TRACKTALE_DATA"] = str(folder / "data")
    os.environ["DATABASE_URL"] = f"sqlite:///{folder / 'real-study.sqlite'}"
    try:
        lines = []
        with small_report():  # PNG figures, 199 resamples: the report's contents are tested
            summary = run_main_job(
                RunOptions(participants=3, out=folder / "run", default_model=False),
                say=lines.append,
            )
    finally:
        os.environ.pop("DATABASE_URL")
        if saved is not None:
            os.environ["TRACKTALE_DATA"] = saved
    return folder, summary, lines


def test_the_main_job_goes_from_stimuli_to_a_report(first_run):
    folder, summary, lines = first_run
    assert (summary.stimulus_dirs["human"] / "manifest.json").is_file()
    assert summary.completed_participants == 3
    assert summary.report_path.is_file() and summary.report_path.stat().st_size > 10_000
    assert (summary.report_tables / "glm_complexity.csv").is_file()
    assert (summary.report_tables / "scorecard.csv").is_file()  # paper versus this run
    assert "paper versus this run (scorecard)" in summary.report_path.read_text()
    assert any(line.startswith("report: ") for line in lines)
    count = (
        sqlite3.connect(folder / "run" / SIMULATED_DATABASE)
        .execute("select count(*) from trials")
        .fetchone()[0]
    )
    assert count == 3 * 50  # 46 trials and 4 practice trials each


def _stored_trials(database) -> list[tuple]:
    with sqlite3.connect(database) as db:
        columns = [row[1] for row in db.execute("pragma table_info(trials)")]
        kept = [c for c in columns if c in ("item_id", "trial_index", "response", "correct")]
        assert len(kept) == 4, columns
        return db.execute(f"select {', '.join(kept)} from trials order by 1, 2").fetchall()


@pytest.mark.slow  # 25 s: two whole simulated studies; the full lane runs it
def test_the_same_seed_gives_the_same_simulated_study(
    first_run, tmp_path, monkeypatch, small_reports
):
    folder, summary, _ = first_run
    monkeypatch.setenv("TRACKTALE_DATA", str(folder / "data"))
    monkeypatch.delenv("TRACKTALE_EXPORT_SALT", raising=False)
    again = run_main_job(
        RunOptions(participants=3, out=tmp_path / "again", default_model=False),
        say=lambda line: None,
    )
    first = _stored_trials(folder / "run" / SIMULATED_DATABASE)
    assert first == _stored_trials(tmp_path / "again" / SIMULATED_DATABASE)
    import pandas as pd

    table = "glm_complexity.csv"
    # The same fit to rounding (BLAS threads may sum in another order).
    pd.testing.assert_frame_equal(
        pd.read_csv(again.report_tables / table), pd.read_csv(summary.report_tables / table)
    )


def test_the_simulation_never_writes_into_the_database_url_of_a_real_study(first_run):
    folder, _, _ = first_run
    assert not (folder / "real-study.sqlite").exists()


def test_a_run_refuses_to_replace_a_database_with_real_sessions(first_run):
    folder, _, _ = first_run
    database = folder / "run" / SIMULATED_DATABASE
    connection = sqlite3.connect(database)
    connection.execute("update trials set source = 'online'")
    connection.commit()
    with pytest.raises(TracktaleError, match="holds real sessions"):
        run_main_job(
            RunOptions(participants=1, out=folder / "run", default_model=False),
            say=lambda line: None,
        )


def test_a_run_never_deletes_a_file_it_cannot_read_as_a_simulated_study(tmp_path):
    (tmp_path / "run").mkdir()
    precious = tmp_path / "run" / SIMULATED_DATABASE
    precious.write_text("not a database")
    with pytest.raises(TracktaleError, match="not a simulated study database"):
        run_main_job(
            RunOptions(participants=1, out=tmp_path / "run", default_model=False),
            say=lambda line: None,
        )
    assert precious.read_text() == "not a database"


@pytest.mark.slow  # 80 s: the whole main job twice; the full lane runs it
def test_the_main_job_scores_a_model_and_resumes_without_rescoring(
    tmp_path, monkeypatch, small_reports
):
    from tracktale.models.store import read_results
    from tracktale.models.testing import make_model, make_tokenizer, save_model, train_bpe
    from tracktale.stimuli.registry import get_paradigm

    texts = [item.prompt for item in get_paradigm("narrative").generate_set("model", 9)][:400]
    tokenizer = make_tokenizer(train_bpe(texts, 400), kind="pythia")
    model = save_model(tmp_path / "tiny", make_model("gpt_neox", tokenizer), tokenizer)
    options = RunOptions(
        participants=2, models=(str(model),), out=tmp_path / "run", default_model=False
    )
    summary = run_main_job(options, say=lambda line: None)
    rows = read_results(summary.results_dir)
    assert set(rows["task"]) == {"implicit", "explicit", "sequence"}
    per_cell = MAIN_JOB_ITEMS_PER_CELL
    assert len(rows) == 3 * 33 * per_cell  # the first items of each of the 33 cells and templates
    items = {item.item_id: item for item in read_stimulus_set(summary.stimulus_dirs["model"])}
    groups = Counter(
        (items[i].condition["cell"], items[i].condition["template"])
        for i in rows.loc[rows["task"] == "implicit", "item_id"]
    )
    assert len(groups) == 33 and set(groups.values()) == {per_cell}
    assert (summary.report_tables / "model_accuracy.csv").is_file()
    assert (summary.report_tables / "model_provenance.csv").is_file()
    assert set(rows["model_source"]) == {"folder"}
    lines = []
    run_main_job(options, say=lines.append)
    assert any(f"0 rows scored, {3 * 33 * per_cell} already in the store" in line for line in lines)


def test_the_full_protocol_scores_every_item(tmp_path):
    from tracktale.app.pipeline import main_job_items
    from tracktale.stimuli.registry import get_paradigm

    model_set = get_paradigm("narrative").generate_set("model", 1)
    assert main_job_items(model_set, None) is None
    first = main_job_items(model_set, 2)
    assert len(first) == 66 and first <= main_job_items(model_set, 3)


def test_run_serve_generates_the_stimuli_and_hands_over_to_the_study_server(monkeypatch):
    import click

    from tracktale.app import cli
    from tracktale.experiment import cli as experiment_cli
    from tracktale.settings import data_dir

    calls = []

    @click.command()
    @click.option("--port", type=int)
    @click.pass_context
    def fake_serve(ctx, **options):
        calls.append(ctx.params)

    monkeypatch.setattr(experiment_cli, "serve", fake_serve)
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["run", "--serve", "--port", "5123"])
    assert exit_info.value.code == 0
    assert calls and calls[0]["port"] == 5123 and calls[0]["workers"] == 0
    assert (data_dir() / "stimuli" / "narrative-human-s1" / "manifest.json").is_file()


def test_the_summary_prints_each_permutation_p_under_its_models_table(tmp_path, capsys):
    import pandas as pd

    from tracktale.app.pipeline import RunSummary, print_summary

    columns = ["model", "term", "label", "b", "se", "z", "p", "odds_ratio", "or_low", "or_high"]
    rows = {
        "inference_model1": ["model 1", "complexity_c", "c", -0.3, 0.1, -3, 0.003, 0.74, 0.6, 0.9],
        "inference_model2": ["model 2", "recency_c", "r", -0.1, 0.1, -1, 0.3, 0.9, 0.7, 1.1],
    }
    permutation = {"inference_model1": 0.0042, "inference_model2": 0.271}
    tables = {
        name: pd.DataFrame([row], columns=columns).assign(p_permutation=permutation[name])
        for name, row in rows.items()
    }
    print_summary(RunSummary(report_tables=tmp_path, tables=tables))
    out = capsys.readouterr().out
    assert (
        "complexity by item permutation across all items (the report's complexity test): "
        "p = 0.0042" in out
    )
    # The line names the test the report made, from its complexity table.
    how = "items' empirical-logit slope over its two-way SE (HC3), t(items - 2)"
    tables["complexity_permutation"] = pd.DataFrame({"method": [how]})
    print_summary(RunSummary(report_tables=tmp_path, tables=tables))
    out = capsys.readouterr().out
    assert f"complexity by {how} (the report's complexity test): p = 0.0042" in out
    recency = "recency by item permutation within complexity levels (the report's recency test)"
    assert f"{recency}: p = 0.271" in out


def test_the_summary_tables_read_whole_at_80_columns(tmp_path):
    """No "Partic…", no model name broken over lines between its numbers (issue 31, 13)."""
    import io

    import pandas as pd
    from rich.console import Console

    from tracktale.app.pipeline import RunSummary, print_summary

    rows = []
    models = {"SmolLM2 135M Instruct": ["standard", "objects", "all"], "Qwen2.5 0.5B": ["all"]}
    for label, templates in {"Participants": ["standard"], **models}.items():
        for task in ("explicit", "implicit"):
            for template in templates:
                for level in (1, 2, 3, 4):
                    n = 1234 if label == "Participants" else 3
                    rows.append((label, template, task, level, 0.9 - level / 10, n))
    joint = pd.DataFrame(rows, columns=["label", "template", "task", "complexity", "accuracy", "n"])
    coefficients = pd.DataFrame(
        [["m", "t", "complexity (centred)", -0.41, 0.06, -6.8, 1.2e-11, 0.66, 0.58, 0.74]],
        columns=["model", "term", "label", "b", "se", "z", "p", "odds_ratio", "or_low", "or_high"],
    )
    tables = {"humans_and_models": joint, "glm_complexity": coefficients}
    out = io.StringIO()
    console = Console(file=out, width=80, highlight=False, color_system=None)
    print_summary(RunSummary(report_tables=tmp_path, tables=tables), console)
    lines = out.getvalue().splitlines()
    assert all(len(line) <= 80 for line in lines), max(lines, key=len)
    assert "…" not in out.getvalue()
    for label in ("Participants", "SmolLM2 135M Instruct", "Qwen2.5 0.5B"):
        assert sum(line.strip() == label for line in lines) == 2  # one per task's table
    assert sum("80% (1234)" in line and "standard" in line for line in lines) == 2
    assert any("complexity (centred)" in line and "0.66 [0.58, 0.74]" in line for line in lines)
