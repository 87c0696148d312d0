"""Sweep jobs on an executor, and what the scheduler says about them.

Submission goes through submitit: a SLURM job array (``submitit.SlurmExecutor``, one array per
set of resources, at most ``array_parallelism`` jobs at once) or submitit's own local executor.
Which scheduler job runs which sweep job is kept in a small state file next to the store
(``<store>.sweep/state.json``, rewritten atomically under a lock), so that ``--status`` and a
re-run can ask the scheduler about them later, from another process.

States come from ``squeue`` (pending and running jobs, and recently ended ones), then ``sacct``
where the cluster keeps accounting, then submitit's result file of the job (which holds the
Python error of a job that failed). Nothing here decides what is done: the results store does.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shlex
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from tracktale.atomic import atomic_write_text
from tracktale.errors import TracktaleError
from tracktale.models.plan import Resources, SweepJob, SweepPlan

ACTIVE_SLURM_STATES = frozenset(
    {
        "PENDING",
        "RUNNING",
        "CONFIGURING",
        "COMPLETING",
        "REQUEUED",
        "REQUEUE_FED",
        "REQUEUE_HOLD",
        "RESIZING",
        "SIGNALING",
        "STAGE_OUT",
        "SUSPENDED",
        "STOPPED",
        "RESV_DEL_HOLD",
    }
)
"""SLURM job states of a job that may still write results."""


@dataclass(frozen=True)
class SchedulerView:
    """What the scheduler says about one submitted job.

    Attributes:
        active: Pending or running: it may still write results.
        state: The scheduler's word (``PENDING``, ``RUNNING``, ``CANCELLED``, ``FINISHED``, ...).
        detail: For an ended job, why (the job's Python error, a signal, a time limit).
        succeeded: Whether the job's function returned (``None``: unknown or still running).
    """

    active: bool
    state: str
    detail: str = ""
    succeeded: bool | None = None


def sweep_folder(store: Path) -> Path:
    """The folder next to a store that holds its sweep state and job files."""
    return store.parent / f"{store.name}.sweep"


class SweepState:
    """The state file: sweep job label -> where it was submitted (job id, executor, folder)."""

    def __init__(self, store: Path) -> None:
        self.path = sweep_folder(store) / "state.json"

    def read(self) -> dict[str, dict[str, Any]]:
        """Every recorded job; an empty mapping before the first submission."""
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as error:
            raise TracktaleError(f"cannot read the sweep state {self.path}: {error}") from None
        return dict(data.get("jobs", {}))

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.path.with_suffix(".lock"), "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    def update(self, records: Mapping[str, Mapping[str, Any] | None]) -> None:
        """Set (or, with ``None``, forget) the records of some jobs; the rest are kept."""
        with self._locked():
            jobs = self.read()
            for label, record in records.items():
                if record is None:
                    jobs.pop(label, None)
                else:
                    jobs[label] = dict(record)
            text = json.dumps({"version": 1, "jobs": jobs}, indent=1, sort_keys=True)
            atomic_write_text(self.path, text + "\n")


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def local_record(state: str, error: str = "") -> dict[str, Any]:
    """The state record of a job run in this process (``running``, ``finished``, ``failed``)."""
    record = {"executor": "local", "pid": os.getpid(), "host": socket.gethostname()}
    record.update(state=state, updated_at=_now())
    if error:
        record["error"] = error
    return record


def submit(
    plan: SweepPlan, jobs: Sequence[SweepJob], function: Callable[[SweepJob], Any]
) -> dict[str, dict[str, Any]]:
    """Submit ``function(job)`` for each job through submitit, one array per set of resources.

    Returns:
        Label -> the state record of its scheduler job.

    Raises:
        TracktaleError: When submitit is missing, there is no SLURM here, or submission fails.
    """
    try:
        import submitit
    except ImportError:
        raise TracktaleError(
            f"executor {plan.executor} needs submitit: pip install 'tracktale[cluster]'"
        ) from None
    folder = (plan.folder or sweep_folder(plan.store) / "logs") / "%j"
    groups: dict[Resources, list[SweepJob]] = {}
    for job in jobs:
        groups.setdefault(job.resources, []).append(job)
    records = {}
    for resources, members in groups.items():
        executor = _executor(submitit, plan, folder, resources)
        try:
            submitted = executor.map_array(function, members)
        except (subprocess.CalledProcessError, OSError, RuntimeError) as error:
            first = (str(error).strip().splitlines() or [type(error).__name__])[0]
            raise TracktaleError(f"{plan.executor}: submitting the sweep failed: {first}") from None
        for job, handle in zip(members, submitted, strict=True):
            records[job.label] = {
                "executor": plan.executor,
                "job_id": str(handle.job_id),
                "folder": str(folder),
                "host": socket.gethostname(),
                "submitted_at": _now(),
                "resources": asdict(resources),
            }
    return records


def _executor(submitit, plan: SweepPlan, folder: Path, resources: Resources):
    python = plan.python or shlex.quote(sys.executable)
    if plan.executor == "submitit-local":
        executor = submitit.LocalExecutor(folder, python=python)
        executor.update_parameters(timeout_min=resources.timeout_min)
        return executor
    if shutil.which("sbatch") is None:
        raise TracktaleError("executor slurm: sbatch is not on PATH (not a SLURM login node?)")
    executor = submitit.SlurmExecutor(folder, python=python)
    parameters: dict[str, Any] = {
        "job_name": f"tracktale-{plan.path.stem}",
        "time": resources.timeout_min,
        "array_parallelism": resources.array_parallelism,
        "cpus_per_task": resources.cpus_per_task,
        "gpus_per_node": resources.gpus_per_node or None,
        "mem": None if resources.mem_gb is None else f"{resources.mem_gb:g}GB",
        "partition": resources.partition,
        "account": resources.account,
        "qos": resources.qos,
        "constraint": resources.constraint,
        "setup": list(resources.setup) or None,
        "additional_parameters": dict(resources.sbatch) or None,
    }
    try:
        executor.update_parameters(**{k: v for k, v in parameters.items() if v is not None})
    except ValueError as error:
        raise TracktaleError(f"executor slurm: {str(error).splitlines()[0]}") from None
    return executor


def scheduler_views(records: Mapping[str, Mapping[str, Any]]) -> dict[str, SchedulerView]:
    """What the scheduler says about each recorded job (label -> view)."""
    slurm_ids = {
        label: record["job_id"]
        for label, record in records.items()
        if record.get("executor") == "slurm"
    }
    slurm_states = _slurm_states(set(slurm_ids.values())) if slurm_ids else {}
    views = {}
    for label, record in records.items():
        executor = record.get("executor")
        if executor == "local":
            views[label] = _local_view(record)
            continue
        if executor == "slurm":
            state = slurm_states.get(record["job_id"])
            alive = state in ACTIVE_SLURM_STATES
        else:
            alive = _controller_alive(record)
            state = "RUNNING" if alive else None
        views[label] = SchedulerView(True, state or "RUNNING") if alive else _ended(record, state)
    return views


def _local_view(record: Mapping[str, Any]) -> SchedulerView:
    state = record.get("state", "")
    if state == "running":
        here = record.get("host") == socket.gethostname()
        if here and _pid_alive(int(record.get("pid", 0))):
            return SchedulerView(True, "RUNNING")
        return SchedulerView(False, "LOST", "the process that ran it ended mid-job", False)
    return SchedulerView(False, state.upper(), record.get("error", ""), state == "finished")


def _ended(record: Mapping[str, Any], state: str | None) -> SchedulerView:
    """An ended submitit job: did its function return, and if not, why."""
    outcome = _submitit_outcome(record)
    if outcome is not None and outcome[0] == "success":
        return SchedulerView(False, state or "FINISHED", "", True)
    if outcome is not None:
        return SchedulerView(False, state or "FAILED", _last_line(str(outcome[1])), False)
    why = "ended without a result (killed, cancelled or out of time)"
    return SchedulerView(False, state or "ENDED", why, False)


def _submitit_outcome(record: Mapping[str, Any]) -> tuple[str, Any] | None:
    try:
        from submitit.core import utils
    except ImportError:
        return None
    paths = utils.JobPaths(record["folder"], job_id=record["job_id"], task_id=0)
    try:
        return utils.pickle_load(paths.result_pickle)
    except (OSError, EOFError, ValueError, AttributeError, ImportError):
        return None


def _last_line(trace: str) -> str:
    lines = [line.strip() for line in trace.strip().splitlines() if line.strip()]
    return lines[-1] if lines else "failed"


def _slurm_states(job_ids: set[str]) -> dict[str, str]:
    """Job id (``123_4`` for array tasks) -> SLURM state, from squeue then sacct."""
    bases = sorted({job_id.split("_")[0] for job_id in job_ids})
    states = _run_table(
        ["squeue", "--noheader", "--array", "--states=all", "--format=%i|%T"],
        bases,
        required=True,
    )
    unseen = sorted({job_id.split("_")[0] for job_id in job_ids if job_id not in states})
    if unseen:
        accounted = _run_table(
            ["sacct", "--noheader", "--parsable2", "--allocations", "--format=JobID,State"],
            unseen,
            required=False,
        )
        for job_id, state in accounted.items():
            states.setdefault(job_id, state)
    return states


def _run_table(command: list[str], job_ids: Sequence[str], *, required: bool) -> dict[str, str]:
    """Run ``squeue``/``sacct`` for some job ids: job id -> state.

    Jobs SLURM has forgotten are simply absent. When a ``required`` command (squeue) cannot
    answer, that is an error: calling running jobs failed would submit them a second time.
    """
    states: dict[str, str] = {}
    for start in range(0, len(job_ids), 500):
        chunk = ",".join(job_ids[start : start + 500])
        try:
            out = subprocess.run(
                [*command, f"--jobs={chunk}"], capture_output=True, text=True, timeout=60
            )
        except (OSError, subprocess.SubprocessError) as error:
            if required:
                raise TracktaleError(
                    f"cannot ask SLURM about the sweep's jobs ({command[0]}: {error}); run this "
                    "where SLURM's commands work"
                ) from None
            return states
        if out.returncode != 0:
            # Every id unknown (purged after MinJobAge), or no accounting on this cluster.
            if required and "Invalid job id" not in out.stderr:
                first = (out.stderr.strip().splitlines() or ["no message"])[-1]
                raise TracktaleError(f"cannot ask SLURM about the sweep's jobs: {first}")
            continue
        for line in out.stdout.splitlines():
            job_id, _, state = line.strip().partition("|")
            if job_id and state:
                # sacct says "CANCELLED by 0"; the first word is the state.
                states[job_id] = state.split()[0].rstrip("+")
    return states


def _controller_alive(record: Mapping[str, Any]) -> bool:
    """Whether submitit's local controller process of a job is still running (same host)."""
    if record.get("host") != socket.gethostname():
        return False
    try:
        pid = int(record["job_id"])
    except (KeyError, ValueError):
        return False
    if not _pid_alive(pid):
        return False
    try:
        command = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return True  # no /proc: trust the pid
    return b"submitit" in command


def _pid_alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
