"""Sweeps: local runs, re-runs that do only what is missing, status, and submitit's executor."""

from __future__ import annotations

import json
import os
import stat
import textwrap

import pytest
import yaml

from tests.models.conftest import HUB_ID, shard_keys
from tracktale.app.cli import main
from tracktale.errors import TracktaleError
from tracktale.models import runner, scheduler, store, sweep
from tracktale.models.plan import load_plan
from tracktale.models.sweep import run_sweep_job, sweep_status


def run(argv, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    out, err = capsys.readouterr()
    return exit_info.value.code, out, err


def write_plan(tmp_path, stimulus_dir, *, tasks=("implicit",), executor=None, **model):
    plan = {
        "store": "results",
        "stimuli": [str(stimulus_dir)],
        "tasks": list(tasks),
        "scoring": {"device": "cpu", "limit": 4, "chunk_size": 2, "batch_size": 2},
        "models": [{"id": HUB_ID, "revisions": ["step0", "step1000"], **model}],
        "executor": executor or {"name": "local"},
    }
    path = tmp_path / "sweep.yaml"
    path.write_text(yaml.safe_dump(plan))
    return path


def states(plan_path):
    return {status.job.label: status.state for status in sweep_status(load_plan(plan_path))}


STEP0, STEP1000 = f"{HUB_ID}@step0", f"{HUB_ID}@step1000"


def test_a_local_sweep_scores_each_revision_once_and_a_rerun_does_nothing(
    offline_hub, stimulus_dir, tmp_path, capsys, monkeypatch
):
    loads = []
    original = runner.load_scorer
    monkeypatch.setattr(
        runner, "load_scorer", lambda *a, **k: loads.append(k["revision"]) or original(*a, **k)
    )
    path = write_plan(tmp_path, stimulus_dir, tasks=("implicit", "sequence"))
    assert states(path) == {STEP0: "missing", STEP1000: "missing"}
    code, out, err = run(["models", "sweep", "--plan", str(path)], capsys)
    assert code == 0, err
    assert loads == ["step0", "step1000"]  # one load per revision, for both tasks
    assert "2 jobs: 0 done, 0 running, 2 to run" in err and "2 done" in out
    results = tmp_path / "results"
    keys = shard_keys(results)
    assert len(keys) == len(set(keys)) == 16
    assert len(store.shards(results)) == 1  # merged once every job was done
    records = scheduler.SweepState(results).read()
    assert {record["state"] for record in records.values()} == {"finished"}

    code, out, err = run(["models", "sweep", "--plan", str(path)], capsys)
    assert code == 0 and "2 done, 0 running, 0 to run" in err
    assert loads == ["step0", "step1000"]
    code, out, _ = run(["models", "sweep", "--plan", str(path), "--status"], capsys)
    assert code == 0 and "8/8" in out and "2 done" in out


def test_a_failed_job_is_reported_and_only_it_runs_again(
    offline_hub, stimulus_dir, tmp_path, capsys, monkeypatch
):
    original = runner.score_items
    calls = []

    def failing_on_step1000(scorer, items, task, **kwargs):
        calls.append(scorer.info.revision)
        if scorer.info.revision == "step1000" and len(calls) > 3:
            raise TracktaleError("the GPU fell off")
        return original(scorer, items, task, **kwargs)

    monkeypatch.setattr(runner, "score_items", failing_on_step1000)
    path = write_plan(tmp_path, stimulus_dir)
    code, out, err = run(["models", "sweep", "--plan", str(path)], capsys)
    assert code == 1
    assert "1 of 2 jobs are not done (1 failed)" in err and "the GPU fell off" in err
    assert "FAILED: the GPU fell off" in out and "2/4" in out  # the first chunk was kept
    assert states(path) == {STEP0: "done", STEP1000: "failed"}

    monkeypatch.setattr(runner, "score_items", original)
    scored = []
    monkeypatch.setattr(
        runner,
        "score_items",
        lambda scorer, items, task, **kw: (
            scored.extend(i.item_id for i in items) or original(scorer, items, task, **kw)
        ),
    )
    code, out, err = run(["models", "sweep", "--plan", str(path)], capsys)
    assert code == 0, err
    assert "1 done, 0 running, 1 to run" in err
    assert len(scored) == 2  # the two items the failed job had not written
    keys = shard_keys(tmp_path / "results")
    assert len(keys) == len(set(keys)) == 8


def test_a_job_killed_with_its_process_is_failed_not_running(
    offline_hub, stimulus_dir, tmp_path, capsys
):
    path = write_plan(tmp_path, stimulus_dir)
    plan = load_plan(path)
    dead = {"executor": "local", "pid": 2**22 + 1, "host": os.uname().nodename}
    scheduler.SweepState(plan.store).update({STEP0: {**dead, "state": "running"}})
    code, out, _ = run(["models", "sweep", "--plan", str(path), "--status"], capsys)
    assert code == 0
    assert "LOST: the process that ran it ended mid-job" in out
    assert states(path) == {STEP0: "failed", STEP1000: "missing"}


def test_a_sweep_job_scores_every_stimulus_set_with_one_load(
    offline_hub, stimulus_dir, tmp_path, monkeypatch
):
    from tracktale.models.registry import load_scorer

    loads = []
    monkeypatch.setattr(
        runner, "load_scorer", lambda *a, **k: loads.append(1) or load_scorer(*a, **k)
    )
    other = tmp_path / "other"
    other.symlink_to(stimulus_dir)  # a second set (the same items, another folder)
    plan = load_plan(write_plan(tmp_path, stimulus_dir))
    job = sweep.SweepJob(**{**plan.jobs[0].__dict__, "stimuli": (stimulus_dir, other)})
    result = run_sweep_job(job)
    assert loads == [1]
    assert result == {"label": STEP0, "scored": 4, "already": 4}


def test_plan_settings_reach_the_runner(tmp_path, stimulus_dir):
    path = write_plan(tmp_path, stimulus_dir, dtype="bfloat16", calibrate=True, roles="main,filler")
    job = load_plan(path).jobs[0]
    scoring = sweep.scoring_job(job, stimulus_dir)
    assert scoring.dtype == "bfloat16" and scoring.options.calibrate
    assert scoring.roles == ("main", "filler") and scoring.limit == 4 and scoring.chunk_size == 2
    assert scoring.backend_options == {} and scoring.revisions == ("step0",)


def fake_command(folder, name, script):
    path = folder / name
    path.write_text("#!/bin/sh\n" + textwrap.dedent(script))
    path.chmod(path.stat().st_mode | stat.S_IEXEC)


def test_scheduler_states_from_squeue_then_sacct_then_submitit(tmp_path, monkeypatch):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake_command(bin_dir, "squeue", "echo '41_0|RUNNING'\necho '41_1|PENDING'\n")
    fake_command(bin_dir, "sacct", "echo '41_2|CANCELLED by 0'\n")
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    folder = tmp_path / "logs" / "%j"
    records = {
        name: {"executor": "slurm", "job_id": job_id, "folder": str(folder)}
        for name, job_id in [("a", "41_0"), ("b", "41_1"), ("c", "41_2"), ("d", "41_3")]
    }
    from submitit.core import utils

    result = utils.JobPaths(folder, job_id="41_3", task_id=0).result_pickle
    result.parent.mkdir(parents=True)
    utils.cloudpickle_dump(("error", "Traceback ...\nTracktaleError: out of memory"), result)
    views = scheduler.scheduler_views(records)
    assert views["a"].active and views["a"].state == "RUNNING"
    assert views["b"].active and views["b"].state == "PENDING"
    assert not views["c"].active and views["c"].state == "CANCELLED"
    assert "ended without a result" in views["c"].detail and views["c"].succeeded is False
    assert not views["d"].active and views["d"].detail == "TracktaleError: out of memory"


def test_the_state_file_is_rewritten_whole(tmp_path):
    state = scheduler.SweepState(tmp_path / "results")
    state.update({"a": {"job_id": "1"}, "b": {"job_id": "2"}})
    state.update({"a": None, "c": {"job_id": "3"}})
    assert state.read() == {"b": {"job_id": "2"}, "c": {"job_id": "3"}}
    assert json.loads(state.path.read_text())["version"] == 1
    assert state.path.parent == tmp_path / "results.sweep"
    assert not list(state.path.parent.glob(".*.tmp"))


@pytest.mark.slow
def test_submitit_local_executor(offline_hub, stimulus_dir, tmp_path, capsys):
    pytest.importorskip("submitit")
    path = write_plan(tmp_path, stimulus_dir, executor={"name": "submitit-local"})
    argv = ["models", "sweep", "--plan", str(path), "--wait", "--poll-interval", "0.5"]
    code, out, err = run(argv, capsys)
    assert code == 0, err + out
    assert "submitted 2 jobs (submitit-local" in err and "2 done" in out
    keys = shard_keys(tmp_path / "results")
    assert len(keys) == len(set(keys)) == 8
    records = scheduler.SweepState(tmp_path / "results").read()
    assert {record["executor"] for record in records.values()} == {"submitit-local"}
    views = scheduler.scheduler_views(records)
    assert all(view.succeeded for view in views.values())


def test_an_unknown_revision_stops_the_sweep_before_anything_runs(
    offline_hub, stimulus_dir, tmp_path, capsys
):
    path = write_plan(tmp_path, stimulus_dir)
    path.write_text(path.read_text().replace("step1000", "step7"))
    code, _, err = run(["models", "sweep", "--plan", str(path)], capsys)
    assert code == 1 and err.count("\n") == 2  # the plan line, then the one-line error
    assert f"model '{HUB_ID}' has no revision 'step7' in the local cache" in err
    assert not (tmp_path / "results").exists()
    assert scheduler.SweepState(tmp_path / "results").read() == {}


def test_a_scheduler_that_cannot_answer_is_an_error_not_a_failed_job(tmp_path, monkeypatch):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake_command(bin_dir, "squeue", "echo 'slurm_load_jobs error: Unable to contact' >&2\nexit 1\n")
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    record = {"executor": "slurm", "job_id": "41_0", "folder": str(tmp_path / "%j")}
    with pytest.raises(TracktaleError, match="cannot ask SLURM .*: slurm_load_jobs error"):
        scheduler.scheduler_views({"a": record})
    # Jobs SLURM has forgotten (after MinJobAge) are ended, not an error.
    fake_command(bin_dir, "squeue", "echo 'Invalid job id specified' >&2\nexit 1\n")
    fake_command(bin_dir, "sacct", "echo 'accounting storage is disabled' >&2\nexit 1\n")
    view = scheduler.scheduler_views({"a": record})["a"]
    assert not view.active and view.state == "ENDED" and view.succeeded is False
