"""Sweeps: a plan's model revisions x tasks x stimulus sets, scored by jobs on an executor.

:func:`run_sweep` is ``tracktale models sweep --plan sweep.yaml``:

1. **Plan.** The plan (:mod:`tracktale.models.plan`) expands into one job per model revision.
   The results store says, per job, how many rows it holds and how many are missing (the
   runner's own planning, :func:`~tracktale.models.runner.plan_job`).
2. **Skip** every job with nothing missing, and every job the scheduler still runs; submit the
   rest (never submitted, or ended with rows missing: failed, cancelled, out of time).
3. **Run** them: ``local`` scores them one after another in this process; ``slurm`` submits a
   SLURM job array through submitit; ``submitit-local`` runs each in its own process. Each job
   is :func:`run_sweep_job`: :func:`~tracktale.models.runner.run_scoring` for each stimulus set
   with the model loaded once, writing its own shards into the store atomically.
4. **Merge.** When every job is done (after a local run, or ``--wait``), the store's shards
   are compacted into one; reading a store keeps each (model, revision, item, task) once anyway.

:func:`sweep_status` is ``--status``: per job ``done`` (the store holds every row), ``running``
(pending or running on the scheduler), ``failed`` (ended with rows missing) or ``missing``
(never submitted, or finished before the plan asked for more). Running the same command again
re-submits only failed and missing jobs.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tracktale.errors import TracktaleError
from tracktale.models import scheduler, store
from tracktale.models.plan import SweepJob, SweepPlan
from tracktale.models.runner import LoadedScorers, Reporter, ScoringJob, plan_job, run_scoring
from tracktale.models.tasks import TaskOptions
from tracktale.stimulus_set import StimulusSet, read_stimulus_set

STATES = ("done", "running", "failed", "missing")
STALL_ENV = "TRACKTALE_TEST_SWEEP_STALL"
"""Tests only: a job whose label this names stops after its first written chunk and waits to be
killed, so that a test can cancel a job midway."""

_OPTION_KEYS = (
    "calibrate",
    "prompt_format",
    "max_new_tokens",
    "word_surprisal",
    "word_probability",
    "temperature",
    "num_samples",
    "sampling_seed",
    "rerun_truncated",
    "rerun_max_new_tokens",
)
_JOB_KEYS = ("backend", "dtype", "device", "batch_size", "bos", "limit", "chunk_size")


@dataclass(frozen=True)
class JobStatus:
    """Where one sweep job stands.

    Attributes:
        job: The job.
        state: One of :data:`STATES`.
        stored: Rows of this job the store holds.
        total: Rows the job has to produce.
        scheduler_id: The scheduler's job id (``123_4``), if it was submitted.
        detail: The scheduler's state, or why it failed.
    """

    job: SweepJob
    state: str
    stored: int
    total: int
    scheduler_id: str | None = None
    detail: str = ""


def scoring_job(job: SweepJob, stimuli: StimulusSet | os.PathLike[str] | str) -> ScoringJob:
    """The runner's job for one sweep job on one stimulus set."""
    settings = dict(job.scoring)
    own = {key: value for key, value in settings.items() if key not in (*_OPTION_KEYS, *_JOB_KEYS)}
    own.pop("roles", None)
    return ScoringJob(
        stimuli=stimuli,
        model_id=job.model_id,
        out=job.store,
        revisions=(job.revision,),
        tasks=job.tasks,
        options=TaskOptions(**{k: settings[k] for k in _OPTION_KEYS if k in settings}),
        roles=tuple(settings.get("roles", ("main",))),
        backend_options=own,
        **{key: settings[key] for key in _JOB_KEYS if key in settings},
    )


def count_rows(
    plan: SweepPlan, sets: Sequence[StimulusSet] | None = None
) -> dict[str, tuple[int, int]]:
    """Per job label: rows the store holds and rows the job has to produce.

    Args:
        plan: The plan.
        sets: Its stimulus sets, already read (``None``: read them).

    Raises:
        TracktaleError: If stored rows of a model were scored with other settings.
    """
    if sets is None:
        sets = [read_stimulus_set(folder) for folder in plan.stimuli]
    frame = _stored_frame(plan)
    # One pass over the store: a plan of a thousand jobs then looks at its own rows only.
    groups = {} if frame is None else dict(list(frame.groupby(["model_id", "revision"])))
    empty = None if frame is None else frame.iloc[0:0]
    counts = {job.label: (0, 0) for job in plan.jobs}
    for job in plan.jobs:
        rows = groups.get((job.model_id, job.revision or ""), empty)
        for stimulus_set in sets:
            for revision_plan in plan_job(scoring_job(job, stimulus_set), stimulus_set, rows):
                stored, total = counts[job.label]
                already = sum(revision_plan.already.values())
                counts[job.label] = (stored + already, total + already + revision_plan.n_todo)
    return counts


def _stored_frame(plan: SweepPlan):
    if not store.shards(plan.store):
        return None
    from tracktale.models.runner import SETTINGS_COLUMNS

    return store.read_results(plan.store, columns=SETTINGS_COLUMNS)


def sweep_status(plan: SweepPlan, sets: Sequence[StimulusSet] | None = None) -> list[JobStatus]:
    """Each job's state, from the results store and the scheduler (``sets``: as read)."""
    counts = count_rows(plan, sets)
    records = scheduler.SweepState(plan.store).read()
    views = scheduler.scheduler_views(
        {job.label: records[job.label] for job in plan.jobs if job.label in records}
    )
    statuses = []
    for job in plan.jobs:
        stored, total = counts[job.label]
        record, view = records.get(job.label), views.get(job.label)
        scheduler_id = None if record is None else record.get("job_id")
        if view is not None and view.active:
            # Rows complete or not, the job still runs (merging its shards): not done yet.
            state, detail = "running", view.state
        elif stored >= total:
            state, detail = "done", "" if view is None else view.state
        elif view is None:
            state, detail = "missing", "never submitted"
        elif view.succeeded:
            state, detail = "missing", "finished before the plan asked for more"
        else:
            state, detail = "failed", ": ".join(part for part in (view.state, view.detail) if part)
        statuses.append(JobStatus(job, state, stored, total, scheduler_id, detail))
    return statuses


class SweepReporter:
    """What a sweep tells its user; the default says nothing."""

    def notice(self, message: str) -> None:
        """One line for the user."""

    def job_reporter(self, job: SweepJob) -> Reporter:
        """Progress of one job run in this process."""
        return Reporter()


def run_sweep(
    plan: SweepPlan,
    *,
    wait: bool = False,
    poll_interval: float = 30.0,
    reporter: SweepReporter | None = None,
) -> list[JobStatus]:
    """Submit (or run) every job that is missing or failed; skip the done and the running.

    Args:
        plan: The checked plan.
        wait: For ``slurm`` and ``submitit-local``: wait until no job is pending or running.
        poll_interval: Seconds between looks at the store and the scheduler while waiting.
        reporter: Where notices and progress go.

    Returns:
        Every job's status afterwards (right after submission unless waiting).
    """
    reporter = reporter or SweepReporter()
    sets = [read_stimulus_set(folder) for folder in plan.stimuli]
    statuses = sweep_status(plan, sets)
    todo = [status.job for status in statuses if status.state in ("missing", "failed")]
    running = sum(status.state == "running" for status in statuses)
    done = sum(status.state == "done" for status in statuses)
    reporter.notice(
        f"{len(plan.jobs)} jobs: {done} done, {running} running, {len(todo)} to "
        f"{'run' if plan.executor == 'local' else 'submit'}"
    )
    if todo:
        _check_models(todo)
        if plan.executor == "local":
            _run_here(plan, todo, reporter)
        else:
            records = scheduler.submit(plan, todo, run_sweep_job)
            scheduler.SweepState(plan.store).update(records)
            ids = sorted({record["job_id"].split("_")[0] for record in records.values()})
            reporter.notice(f"submitted {len(records)} jobs ({plan.executor} {', '.join(ids)})")
    if plan.executor != "local" and not wait:
        return sweep_status(plan, sets)
    if plan.executor == "local":
        statuses = sweep_status(plan, sets)
    else:
        statuses = wait_for(plan, poll_interval, reporter, sets=sets)
    if all(status.state == "done" for status in statuses) and store.shards(plan.store):
        rows, merged = store.compact(plan.store)
        if merged > 1:
            reporter.notice(f"merged {merged} shards of {plan.store} into one ({rows} rows)")
    return statuses


def _check_models(jobs: Sequence[SweepJob]) -> None:
    """Every model and revision exists (or is cached) before anything runs for hours.

    A hub model's branches and tags are listed once; only revisions not among them (commits)
    are resolved one by one, so a 154-checkpoint sweep asks the hub once per model.
    """
    from tracktale.models.hub import list_revisions
    from tracktale.models.registry import check_model

    listed: dict[str, set[str]] = {}
    for job in jobs:
        backend = job.scoring.get("backend", "hf")
        if backend == "hf" and job.revision is not None and not Path(job.model_id).is_dir():
            if job.model_id not in listed:
                try:
                    listed[job.model_id] = set(list_revisions(job.model_id)[0])
                except TracktaleError:
                    listed[job.model_id] = set()  # check_model says what is wrong
            if job.revision in listed[job.model_id]:
                continue
        check_model(job.model_id, job.revision, backend=backend, options=job.scoring)


def _run_here(plan: SweepPlan, jobs: Sequence[SweepJob], reporter: SweepReporter) -> None:
    state = scheduler.SweepState(plan.store)
    for job in jobs:
        state.update({job.label: scheduler.local_record("running")})
        try:
            run_sweep_job(job, reporter.job_reporter(job))
        except TracktaleError as error:
            state.update({job.label: scheduler.local_record("failed", str(error))})
            reporter.notice(f"{job.label}: failed: {error}")
            continue
        except BaseException as error:
            message = f"{type(error).__name__}: {error}".strip().rstrip(":")
            state.update({job.label: scheduler.local_record("failed", message)})
            raise
        state.update({job.label: scheduler.local_record("finished")})


def wait_for(
    plan: SweepPlan,
    poll_interval: float,
    reporter: SweepReporter,
    sleep: Callable[[float], None] = time.sleep,
    sets: Sequence[StimulusSet] | None = None,
) -> list[JobStatus]:
    """Look at the store and the scheduler until no job is pending or running."""
    if sets is None:
        sets = [read_stimulus_set(folder) for folder in plan.stimuli]
    last = None
    while True:
        statuses = sweep_status(plan, sets)
        counts = {state: sum(s.state == state for s in statuses) for state in STATES}
        summary = ", ".join(f"{counts[state]} {state}" for state in STATES if counts[state])
        if summary != last:
            reporter.notice(summary)
            last = summary
        if not counts["running"]:
            return statuses
        sleep(poll_interval)


def run_sweep_job(job: SweepJob, reporter: Reporter | None = None) -> dict[str, Any]:
    """One sweep job, wherever it runs: every task on every stimulus set, the model loaded once.

    This is the function submitit runs on a cluster node. It reads the store itself, so a job
    that was re-submitted scores only what is missing.

    Returns:
        The job's label and the rows it scored and found.
    """
    reporter = _Stalling(reporter or _LineReporter(job.label), job.label)
    scorers = LoadedScorers()
    scored = already = 0
    try:
        for folder in job.stimuli:
            summary = run_scoring(scoring_job(job, folder), reporter, scorers=scorers)
            scored += sum(summary.scored.values())
            already += sum(summary.already.values())
    finally:
        scorers.close()
    return {"label": job.label, "scored": scored, "already": already}


class _LineReporter(Reporter):
    """Progress as lines on stderr: a cluster job's log."""

    def __init__(self, label: str) -> None:
        self.label, self.total, self.done = label, 0, 0

    def start(self, total: int) -> None:
        self.total, self.done = total, 0

    def describe(self, text: str) -> None:
        self.notice(text)

    def advance(self, count: int) -> None:
        self.done += count
        self.notice(f"{self.label}: {self.done}/{self.total} rows")

    def notice(self, message: str) -> None:
        print(f"tracktale: {message}", file=sys.stderr, flush=True)


class _Stalling(Reporter):
    """Passes progress on; under :data:`STALL_ENV` (tests only) stops after the first chunk."""

    def __init__(self, inner: Reporter, label: str) -> None:
        self.inner = inner
        self.stall = os.environ.get(STALL_ENV) == label

    def start(self, total: int) -> None:
        self.inner.start(total)

    def describe(self, text: str) -> None:
        self.inner.describe(text)

    def notice(self, message: str) -> None:
        self.inner.notice(message)

    def partial(self, count: float) -> None:
        self.inner.partial(count)

    def advance(self, count: int) -> None:
        self.inner.advance(count)
        if self.stall:
            print(f"tracktale: {STALL_ENV}: waiting to be killed", file=sys.stderr, flush=True)
            time.sleep(600)
            raise TracktaleError(f"{STALL_ENV}: the test did not kill this job")
