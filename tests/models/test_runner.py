"""Runs: resume after an interruption scores nothing twice; revisions from the hub cache."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from tests.models.conftest import HUB_ID, score_argv, shard_keys
from tracktale.errors import TracktaleError
from tracktale.models import registry, runner, store
from tracktale.models.runner import Reporter, ScoringJob, run_scoring
from tracktale.models.tasks import TaskOptions
from tracktale.scorer import ModelInfo, ResultRecord


class Interrupt(Reporter):
    """Interrupts the run (as Ctrl-C would) after ``after`` rows were written."""

    def __init__(self, after):
        self.after, self.seen = after, 0

    def advance(self, count):
        self.seen += count
        if self.seen >= self.after:
            raise KeyboardInterrupt


@pytest.fixture
def scored_items(monkeypatch):
    """Every (task, item id) handed to the task layer."""
    seen = []
    original = runner.score_items

    def spy(scorer, items, task, **kwargs):
        seen.extend((task, item.item_id) for item in items)
        return original(scorer, items, task, **kwargs)

    monkeypatch.setattr(runner, "score_items", spy)
    return seen


def test_an_interrupted_run_resumes_without_scoring_anything_twice(
    model_dirs, stimulus_dir, stimulus_set, tmp_path, scored_items
):
    job = ScoringJob(
        stimulus_dir,
        str(model_dirs["pythia"]),
        tmp_path / "results",
        tasks=("implicit", "sequence"),
        batch_size=4,
        chunk_size=8,
        device="cpu",
    )
    with pytest.raises(KeyboardInterrupt):
        run_scoring(job, Interrupt(after=16))
    assert len(shard_keys(job.out)) == 16  # two whole chunks, nothing half-written
    first = list(scored_items)
    summary = run_scoring(job)
    assert summary.already[("", "implicit")] == 16
    assert summary.scored[("", "implicit")] == 17 and summary.scored[("", "sequence")] == 33
    again = scored_items[len(first) :]
    assert not set(first[:16]) & set(again)  # what was written is not scored again
    keys = shard_keys(job.out)
    assert len(keys) == len(set(keys)) == 66
    assert len(store.read_results(job.out)) == 66
    summary = run_scoring(job)
    assert sum(summary.scored.values()) == 0


@pytest.mark.slow  # 23 s: a child process killed mid-run; the full lane runs it
def test_a_run_killed_with_sigkill_leaves_a_readable_store_and_resumes(
    model_dirs, stimulus_dir, tmp_path
):
    out = tmp_path / "results"
    argv = score_argv(stimulus_dir, model_dirs["pythia"], out, "--batch-size", "1")
    command = [sys.executable, "-m", "tracktale", *argv]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while not list(out.glob("part-*.parquet")) and time.monotonic() < deadline:
        time.sleep(0.05)
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    written = len(shard_keys(out))
    assert 0 < written < 33
    result = subprocess.run(command, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    keys = shard_keys(out)
    assert len(keys) == len(set(keys)) == 33


def test_stored_rows_with_other_settings_are_not_mixed_in(model_dirs, stimulus_dir, tmp_path):
    job = ScoringJob(stimulus_dir, str(model_dirs["pythia"]), tmp_path, limit=3, device="cpu")
    run_scoring(job)
    other = ScoringJob(
        stimulus_dir, str(model_dirs["pythia"]), tmp_path, limit=3, device="cpu", bos="add"
    )
    with pytest.raises(TracktaleError, match="bos_requested=auto; this run asks bos_requested=add"):
        run_scoring(other)
    summary = run_scoring(ScoringJob(**{**other.__dict__, "rescore": True}))
    assert summary.scored[("", "implicit")] == 3
    frame = store.read_results(tmp_path)
    assert len(frame) == 3 and set(frame["bos_policy"]) == {"add"}


def test_calibration_rescores_rows_that_lack_priors(model_dirs, stimulus_dir, tmp_path):
    base = dict(
        stimuli=stimulus_dir,
        model_id=str(model_dirs["pythia"]),
        out=tmp_path,
        limit=4,
        device="cpu",
    )
    run_scoring(ScoringJob(**base))
    summary = run_scoring(ScoringJob(**base, options=TaskOptions(calibrate=True)))
    assert summary.scored[("", "implicit")] == 4
    frame = store.read_results(tmp_path)
    assert len(frame) == 4 and frame["prior_good"].notna().all()
    assert frame["correct_calibrated"].notna().all()


def test_revisions_load_once_each_with_their_commit(
    offline_hub, stimulus_dir, tmp_path, monkeypatch
):
    cache, shas = offline_hub
    loads = []
    original = registry.load_scorer

    def counting(model_id, **options):
        loads.append(options["revision"])
        return original(model_id, **options)

    monkeypatch.setattr(runner, "load_scorer", counting)
    job = ScoringJob(
        stimulus_dir,
        HUB_ID,
        tmp_path,
        revisions=["step0", "step1000"],
        tasks=("implicit", "sequence"),
        limit=5,
        device="cpu",
    )
    run_scoring(job)
    assert loads == ["step0", "step1000"]
    frame = store.read_results(tmp_path)
    assert len(frame) == 20
    by_revision = frame.groupby("revision")["resolved_sha"].unique()
    assert list(by_revision["step0"]) == [shas["step0"]]
    assert list(by_revision["step1000"]) == [shas["step1000"]]
    implicit = frame[frame["task"] == "implicit"].set_index(["item_id", "revision"])["logprob_good"]
    assert (implicit.unstack()["step0"] != implicit.unstack()["step1000"]).all()  # other weights

    run_scoring(ScoringJob(**{**job.__dict__, "revisions": ["step0", "step1000", None]}))
    assert loads == ["step0", "step1000", None]  # complete revisions are not loaded again


def test_rows_without_a_setting_do_not_block_a_resume(
    model_dirs, stimulus_dir, stimulus_set, tmp_path
):
    model = str(model_dirs["pythia"])
    foreign = ModelInfo(model, None, None, "other", "float32", "cpu", "none", {})
    item = stimulus_set.items[0]
    store.write_shard(
        tmp_path,
        [ResultRecord(model, None, item.item_id, "implicit", "s", "narrative", foreign, {})],
    )
    summary = run_scoring(ScoringJob(stimulus_dir, model, tmp_path, limit=3, device="cpu"))
    assert summary.already[("", "implicit")] == 1 and summary.scored[("", "implicit")] == 2


def test_items_with_their_own_generation_budget_resume(model_dirs, tmp_path):
    # Boxes items carry their own budget (meta max_new_tokens); a resume compares stored rows
    # with that budget, not the paradigm's default.
    from tests.conftest import _generated

    boxes = _generated("boxes", "smoke", 1)
    assert boxes.items[0].meta["max_new_tokens"] != 576
    job = ScoringJob(
        boxes, str(model_dirs["pythia"]), tmp_path, tasks=("explicit",), limit=2, device="cpu"
    )
    assert run_scoring(job).scored[("", "explicit")] == 2
    summary = run_scoring(ScoringJob(**{**job.__dict__, "limit": 3}))
    assert summary.already[("", "explicit")] == 2 and summary.scored[("", "explicit")] == 1
