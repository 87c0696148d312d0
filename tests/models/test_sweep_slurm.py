"""A real sweep on SLURM (scripts/services/slurm.sh): submit, wait, cancel a job midway, re-run.

The SLURM jobs run on this machine, so they read the fake hub cache and write the store in the
test's temporary folder; they run the test's own Python (submitit uses ``sys.executable``) and
inherit its environment (``sbatch`` exports it), ``HF_HUB_CACHE`` and ``HF_HUB_OFFLINE`` too.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time

import pytest
import yaml

from tests.conftest import require
from tests.models.conftest import HUB_ID, shard_keys
from tracktale.app.cli import main
from tracktale.models import scheduler, store
from tracktale.models.plan import load_plan
from tracktale.models.sweep import STALL_ENV, sweep_status

STEP0, STEP1000 = f"{HUB_ID}@step0", f"{HUB_ID}@step1000"


@pytest.fixture
def partition():
    available = (
        bool(os.environ.get("SLURM_CONF"))
        and bool(os.environ.get("TRACKTALE_TEST_SLURM_PARTITION"))
        and shutil.which("sbatch") is not None
    )
    require(available, "no SLURM cluster (scripts/services/slurm.sh starts one)")
    pytest.importorskip("submitit")
    return os.environ["TRACKTALE_TEST_SLURM_PARTITION"]


def sweep(argv, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["models", "sweep", *argv])
    out, err = capsys.readouterr()
    return exit_info.value.code, out, err


def write_plan(path, stimulus_dir, partition, tasks):
    plan = {
        "store": "results",
        "stimuli": [str(stimulus_dir)],
        "tasks": list(tasks),
        "scoring": {"device": "cpu", "limit": 4, "chunk_size": 2, "batch_size": 2},
        "executor": {
            "name": "slurm",
            "partition": partition,
            "cpus_per_task": 1,
            "timeout_min": 10,
        },
        "models": [{"id": HUB_ID, "revisions": ["step0", "step1000"]}],
    }
    path.write_text(yaml.safe_dump(plan))
    return path


def until(condition, what, timeout=180.0):
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.5)


def rows_of(results, revision, task):
    if not store.shards(results):
        return 0
    frame = store.read_results(results)
    return int(((frame["revision"] == revision) & (frame["task"] == task)).sum())


@pytest.mark.slow
@pytest.mark.slurm
def test_a_sweep_on_slurm_survives_a_cancelled_job(
    partition, offline_hub, stimulus_dir, tmp_path, capsys, monkeypatch
):
    path = write_plan(tmp_path / "sweep.yaml", stimulus_dir, partition, ["implicit"])
    results = tmp_path / "results"
    code, out, err = sweep(["--plan", str(path), "--wait", "--poll-interval", "1"], capsys)
    assert code == 0, err + out
    assert "submitted 2 jobs (slurm" in err and "2 done" in out
    assert len(store.read_results(results)) == 8

    # Second run: a new task for both revisions; the step1000 job stops after its first chunk
    # and is cancelled with scancel while it waits.
    write_plan(path, stimulus_dir, partition, ["implicit", "sequence"])
    monkeypatch.setenv(STALL_ENV, STEP1000)
    code, out, err = sweep(["--plan", str(path)], capsys)
    assert code == 0, err + out
    assert "2 done, 0 running, 2 to submit" not in err and "0 done, 0 running, 2 to submit" in err
    plan = load_plan(path)
    records = scheduler.SweepState(results).read()
    until(lambda: rows_of(results, "step1000", "sequence") == 2, "the first chunk of step1000")
    subprocess.run(["scancel", records[STEP1000]["job_id"]], check=True)
    states = lambda: {s.job.label: s.state for s in sweep_status(plan)}  # noqa: E731
    until(lambda: states() == {STEP0: "done", STEP1000: "failed"}, "the cancelled job to end")
    code, out, _ = sweep(["--plan", str(path), "--status"], capsys)
    assert code == 0 and "failed" in out and "6/8" in out and "8/8" in out
    keys = shard_keys(results)
    assert len(keys) == len(set(keys)) == 14  # whole shards only, nothing twice
    kept = store.read_results(results).set_index(["revision", "item_id", "task"])["written_at"]

    # Third run: the same command re-submits the failed job only, which scores what is missing.
    monkeypatch.delenv(STALL_ENV)
    code, out, err = sweep(["--plan", str(path), "--wait", "--poll-interval", "1"], capsys)
    assert code == 0, err + out
    assert "1 done, 0 running, 1 to submit" in err and "submitted 1 jobs" in err
    after = scheduler.SweepState(results).read()
    assert after[STEP0]["job_id"] == records[STEP0]["job_id"]
    assert after[STEP1000]["job_id"] != records[STEP1000]["job_id"]
    frame = store.read_results(results)
    assert len(frame) == 16
    keys = shard_keys(results)
    assert len(keys) == len(set(keys)) == 16 and len(store.shards(results)) == 1
    final = frame.set_index(["revision", "item_id", "task"])["written_at"]
    assert (final[kept.index] == kept).all()  # rows written before the kill were not redone
