"""A new paradigm is one package plus one registration: the toy one through every stage.

The toy paradigm (this package) lives outside tracktale, as a lab's own would, and is
registered with the one line the ``toy`` fixture adds (``conftest.py``). Nothing else is told
about it: the stages below are the real ones, each finding the toy's part through its plug-in:
the shared stimulus-set writer (the ``toy_set`` fixture), the study server with simulated
people, then the commands a researcher runs (``tracktale experiment export``, ``tracktale
models score`` with a scripted scorer in place of a model, ``tracktale analysis report``).
``test_browser_toy.py`` runs the toy's study in Chromium, ``test_toy_installed.py`` registers it
as an installed package would.
"""

from __future__ import annotations

from collections import Counter

import pandas as pd
import pytest

from tests.toyparadigm.plugin import PLUGIN
from tracktale.stimulus_set import read_stimulus_set

ADMIN_SECRET = "toy-admin-secret-0123"
PEOPLE = 8


def serve(set_dir, stimulus_set, tmp_path):
    """Stage 2: simulated people through the real study server.

    Returns:
        The study file, the simulation's report and the trials the server stored.
    """
    from tracktale.experiment.simulation.run import simulate_participants
    from tracktale.experiment.storage.store import Storage
    from tracktale.experiment.study.config import Secrets, load_study
    from tracktale.experiment.web.app import create_app
    from tracktale.experiment.web.server import serve_in_thread

    study_file = tmp_path / "study.yaml"
    study_file.write_text(
        f"paradigm: toy\nstimuli: {set_dir}\ndatabase: {tmp_path / 'toy.sqlite'}\n"
    )
    config = load_study(study_file)
    secrets = Secrets(admin_secret=ADMIN_SECRET, secret_key="toy-key", export_salt="toy-salt")
    storage = Storage(config.database_url())
    app = create_app(config, storage=storage, stimulus_set=stimulus_set, secrets=secrets)
    try:
        with serve_in_thread(app) as server:
            report = simulate_participants(
                server.url, stimulus_set, ADMIN_SECRET, n=PEOPLE, seed=4, concurrency=2
            )
        trials = list(storage.trials())
    finally:
        storage.close()
    return study_file, report, trials


def tracktale(capsys, *args):
    """Run a ``tracktale`` command in this process; its output (it must succeed)."""
    from tracktale.app.cli import main

    with pytest.raises(SystemExit) as exit_info:
        main(list(map(str, args)))
    out = capsys.readouterr().out
    assert exit_info.value.code == 0, out
    return out


def test_a_toy_paradigm_runs_through_generate_serve_score_and_report(
    toy_set, tmp_path, monkeypatch, capsys
):
    from tests.scripted_scorers import ScriptedScorer
    from tracktale.models import runner
    from tracktale.models.store import read_results

    set_dir = toy_set
    stimulus_set = read_stimulus_set(set_dir)
    assert stimulus_set.manifest.paradigm == "toy" and len(stimulus_set) == 10
    assert (set_dir / "items.jsonl").is_file() and len(stimulus_set.sha256) == 64
    assert Counter(item.role for item in stimulus_set) == {"main": 8, "practice": 2}

    study_file, report, trials = serve(set_dir, stimulus_set, tmp_path)
    assert report.errors == [] and (report.started, report.completed) == (PEOPLE, PEOPLE)
    assert len(trials) == PEOPLE * 10 == report.trials_acknowledged
    assert {trial.task for trial in trials} == {"implicit"}
    for trial in trials:  # the server stored the verb chosen, judged by the toy's study
        item = stimulus_set.get(trial.item_id)
        if not trial.timed_out:
            assert trial.response in ("is", "are")
            assert trial.correct == (trial.response == item.answer)
    monkeypatch.setenv("TRACKTALE_EXPORT_SALT", "toy-salt")
    tracktale(capsys, "experiment", "export", "--study", study_file, "--out", tmp_path / "export")

    # Stage 3: the implicit task through the real runner, a scripted scorer for the model.
    monkeypatch.setattr(runner, "check_model", lambda *args, **kwargs: None)
    monkeypatch.setattr(runner, "load_scorer", lambda model_id, **kwargs: ScriptedScorer(model_id))
    store = tmp_path / "results"
    task = ",".join(PLUGIN.model_tasks)
    args = ("--stimuli", set_dir, "--model", "scripted/model", "--task", task, "--out", store)
    tracktale(capsys, "models", "score", *args)
    results = read_results(store)
    assert set(results["paradigm"]) == {"toy"} and len(results) == 8
    assert results["correct"].all()  # the scripted model prefers the first continuation

    # Stage 4: the report on the set, the study's export and the store.
    out = tmp_path / "report"
    data = ("--stimuli", set_dir, "--human", tmp_path / "export", "--models", store)
    tracktale(capsys, "analysis", "report", *data, "--out", out)
    page = (out / "report.html").read_text()
    assert "toy: choosing the agreeing verb" in page
    table = pd.read_csv(out / "tables" / "toy_accuracy.csv")
    assert set(table["who"]) == {"people", "scripted/model"}
    assert set(table["number"]) == {"singular", "plural"}
    model = table[table["who"] == "scripted/model"]
    assert (model["accuracy"] == 1).all() and (model["n"] == 4).all()
    people = table[table["who"] == "people"].set_index("number")
    for number in ("singular", "plural"):  # every stored main trial, as the server judged it
        stored = [
            trial.correct
            for trial in trials
            if trial.role == "main"
            and stimulus_set.get(trial.item_id).condition["number"] == number
        ]
        assert people.loc[number, "n"] == len(stored) == PEOPLE * 4
        assert people.loc[number, "accuracy"] == pytest.approx(sum(stored) / len(stored))
