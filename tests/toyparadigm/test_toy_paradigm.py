"""A new paradigm is one package plus one registration: the toy one through every stage.

The toy paradigm (this package) lives outside tracktale, as a lab's own would, and is
registered with the one line the ``toy`` fixture adds (``conftest.py``). Nothing else is told
about it: the stages below are the real ones (the stimulus-set writer, the study server with
simulated people, the scoring runner and its results store, the report), each finding the
toy's part through its plug-in; ``test_browser_toy.py`` runs its study in Chromium.
"""

from __future__ import annotations

from collections import Counter

from tests.toyparadigm.plugin import PLUGIN
from tracktale.stimulus_set import read_stimulus_set

ADMIN_SECRET = "toy-admin-secret-0123"
PEOPLE = 8


def serve(set_dir, stimulus_set, tmp_path):
    """Stage 2: simulated people through the real study server; its database's URL."""
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
    return config.database_url(), report, trials


def score(set_dir, store_dir, monkeypatch):
    """Stage 3: the implicit task through the real runner, with a scripted model."""
    from tests.scripted_scorers import ScriptedScorer
    from tracktale.models import runner
    from tracktale.models.store import read_results

    monkeypatch.setattr(runner, "check_model", lambda *args, **kwargs: None)
    monkeypatch.setattr(runner, "load_scorer", lambda model_id, **kwargs: ScriptedScorer(model_id))
    job = runner.ScoringJob(set_dir, "scripted/model", store_dir, tasks=PLUGIN.model_tasks)
    summary = runner.run_scoring(job)
    return summary, read_results(store_dir)


def test_a_toy_paradigm_runs_through_generate_serve_score_and_report(
    toy_set, tmp_path, monkeypatch
):
    from tracktale.analysis.report.build import build_report

    set_dir = toy_set
    stimulus_set = read_stimulus_set(set_dir)
    assert stimulus_set.manifest.paradigm == "toy" and len(stimulus_set) == 10
    assert (set_dir / "items.jsonl").is_file() and len(stimulus_set.sha256) == 64
    assert Counter(item.role for item in stimulus_set) == {"main": 8, "practice": 2}

    database, report, trials = serve(set_dir, stimulus_set, tmp_path)
    assert report.errors == [] and (report.started, report.completed) == (PEOPLE, PEOPLE)
    assert len(trials) == PEOPLE * 10 == report.trials_acknowledged
    assert {trial.task for trial in trials} == {"implicit"}
    for trial in trials:  # the server stored the verb chosen, judged by the toy's study
        item = stimulus_set.get(trial.item_id)
        if not trial.timed_out:
            assert trial.response in ("is", "are")
            assert trial.correct == (trial.response == item.answer)

    summary, results = score(set_dir, tmp_path / "results", monkeypatch)
    assert summary.scored == {("", "implicit"): 8}
    assert set(results["paradigm"]) == {"toy"} and len(results) == 8
    assert results["correct"].all()  # the scripted model prefers the first continuation

    written = build_report(
        stimuli=[set_dir], human=database, models=tmp_path / "results", out=tmp_path / "report"
    )
    page = written.html_path.read_text()
    assert "toy: choosing the agreeing verb" in page
    table = written.tables()["toy_accuracy"]
    assert set(table["who"]) == {"people", "scripted/model"}
    assert set(table["number"]) == {"singular", "plural"}
    model = table[table["who"] == "scripted/model"]
    assert (model["accuracy"] == 1).all() and (model["n"] == 4).all()
    people = table[table["who"] == "people"]
    assert people["n"].sum() == sum(1 for t in trials if t.role == "main")
