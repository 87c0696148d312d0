"""Scoring runs: a stimulus set x a model's revisions x tasks, into a resumable results store.

:func:`run_scoring` is what ``tracktale models score`` calls and what a sweep (one job per
revision) or the main pipeline can call directly. Before loading anything it reads the store and
plans what is missing; a revision with nothing missing is never loaded. Each revision's model is
loaded once and scores every task. Results are written as a shard after every chunk of items, so
an interrupted run loses at most one chunk and the next run scores only what is missing; a
generating task (the explicit one) writes one per batch, since a batch of long generations may
take minutes.

A store keeps one row per (model, revision, item, task), so a run whose settings would change
existing scores (dtype, BOS policy, prompt format, generation budget) refuses to mix them into
the same store unless ``rescore`` is set, in which case every planned row is scored again and
replaces the old one.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tracktale.errors import TracktaleError
from tracktale.item import ROLES, Item
from tracktale.models import progress, store
from tracktale.models.gguf import canonical_model_id
from tracktale.models.registry import check_backend, check_model, load_scorer, recorded_dtype
from tracktale.models.tasks import (
    TaskOptions,
    generation_budget,
    get_task,
    score_items,
    task_names,
)
from tracktale.schema.results import field_names
from tracktale.stimulus_set import StimulusSet, read_stimulus_set


@dataclass(frozen=True)
class ScoringJob:
    """Everything a scoring run needs.

    Attributes:
        stimuli: A stimulus set, or its folder.
        model_id: Hub id or local folder.
        out: The results store (a folder).
        revisions: Revisions to score, in order (``None``: the default branch).
        tasks: Registered tasks (:func:`~tracktale.models.tasks.task_names`).
        options: Task settings (calibration, prompt format, generation budget).
        backend: Registry name of the backend.
        dtype: Compute dtype.
        device: ``auto``, ``cpu``, ``cuda``, ``cuda:N``.
        batch_size: Starting batch size (halved on out-of-memory); ``None``: the backend's
            automatic one (hf: from free GPU memory, 16 on a CPU).
        bos: BOS policy (``auto``, ``add``, ``none``).
        roles: Item roles to score (``main`` by default: fillers and practice are for people).
        limit: Score only the first ``limit`` items of the set (after the role filter).
        item_ids: Score only these items (``None``: every item of the chosen roles); the main
            job's documented subset of the model protocol.
        rescore: Score every planned row again, replacing the stored ones.
        chunk_size: Items per written shard; ``None``: eight batches (one batch for a
            generating task).
        backend_options: The backend's own options (``max_memory`` for ``hf``, ``base_url``
            and ``concurrency`` for ``openai``, see
            :data:`~tracktale.models.registry.BACKEND_OPTIONS`).
    """

    stimuli: StimulusSet | str | os.PathLike[str]
    model_id: str
    out: str | os.PathLike[str]
    revisions: Sequence[str | None] = (None,)
    tasks: Sequence[str] = ("implicit",)
    options: TaskOptions = field(default_factory=TaskOptions)
    backend: str = "hf"
    dtype: str = "float32"
    device: str = "auto"
    batch_size: int | None = None
    bos: str = "auto"
    roles: Sequence[str] = ("main",)
    limit: int | None = None
    rescore: bool = False
    chunk_size: int | None = None
    backend_options: Mapping[str, Any] = field(default_factory=dict)
    item_ids: frozenset[str] | None = None

    def __post_init__(self) -> None:
        # The default model's short names ("default") are stored under one id.
        if self.backend == "hf":
            object.__setattr__(self, "model_id", canonical_model_id(self.model_id))


CHUNK_BATCHES = 16
"""With an automatic batch size, a written chunk holds ``8 * CHUNK_BATCHES`` items."""
GENERATION_CHUNK = 16
"""With an automatic batch size, a generating task writes a chunk every 16 items."""


class Reporter:
    """Progress callbacks of a run; the default reports nothing (the CLI draws a bar)."""

    def start(self, total: int) -> None:
        """The run will score ``total`` rows."""

    def describe(self, text: str) -> None:
        """What the run is doing now (loading a revision, scoring a task)."""

    def advance(self, count: int) -> None:
        """``count`` more rows are scored and written."""

    def partial(self, count: float) -> None:
        """``count`` rows of the chunk being scored are done, not yet written (per batch)."""

    def notice(self, message: str) -> None:
        """Something the user should know (batch size backed off, nothing to do)."""


@dataclass
class RevisionPlan:
    """What is missing for one revision: task -> items to score, and task -> rows stored."""

    revision: str | None
    todo: dict[str, list[Item]]
    already: dict[str, int] = field(default_factory=dict)

    @property
    def n_todo(self) -> int:
        """Rows to score."""
        return sum(len(items) for items in self.todo.values())


@dataclass
class RunSummary:
    """What a run did, per ``(revision, task)`` (``""`` for the default branch).

    Attributes:
        scored: Rows scored and written by this run.
        already: Rows that were in the store already (skipped).
        batch_size: The batch size at the end (smaller after an out-of-memory back-off;
            ``None`` while automatic).
    """

    scored: dict[tuple[str, str], int] = field(default_factory=dict)
    already: dict[tuple[str, str], int] = field(default_factory=dict)
    batch_size: int | None = None


class LoadedScorers:
    """Keeps loaded scorers for several runs: a sweep job scores a revision on several sets.

    Pass one to :func:`run_scoring` calls that share a model, then :meth:`close` it.
    """

    def __init__(self) -> None:
        self._loaded: dict[tuple, Any] = {}

    def get(self, key: tuple, load: Callable[[], Any]) -> Any:
        """The scorer loaded under ``key``; only the latest one is kept in memory."""
        if key not in self._loaded:
            self.close()
            self._loaded[key] = load()
        return self._loaded[key]

    def close(self) -> None:
        """Free every kept scorer."""
        while self._loaded:
            _, scorer = self._loaded.popitem()
            close = getattr(scorer, "close", None)
            if close is not None:
                close()


def run_scoring(
    job: ScoringJob, reporter: Reporter | None = None, *, scorers: LoadedScorers | None = None
) -> RunSummary:
    """Score what is missing from the store, revision by revision.

    Args:
        job: What to score.
        reporter: Progress callbacks.
        scorers: Keep the loaded models here for the caller's next run (closed by the caller);
            by default each revision's model is freed once it is scored.

    Returns:
        Counts per revision (``""`` for the default branch).

    Raises:
        TracktaleError: For bad settings, a model or revision that cannot be loaded, or stored
            rows scored with other settings (without ``rescore``).
    """
    reporter = reporter or Reporter()
    _check_job(job)
    stimulus_set = (
        job.stimuli if isinstance(job.stimuli, StimulusSet) else read_stimulus_set(job.stimuli)
    )
    plans = plan_job(job, stimulus_set)
    for task in tasks_without_items(job.tasks, selected_items(job, stimulus_set)):
        reporter.notice(f"--task {task}: applies to none of the items chosen; skipped")
    for plan in plans:
        if plan.n_todo:
            check_model(
                job.model_id, plan.revision, backend=job.backend, options=job.backend_options
            )
    reporter.start(sum(plan.n_todo for plan in plans))
    summary = RunSummary(batch_size=job.batch_size)
    for plan in plans:
        label = plan.revision or ""
        for task in job.tasks:
            summary.already[label, task] = plan.already.get(task, 0)
            summary.scored[label, task] = 0
        if not plan.n_todo:
            reporter.notice(f"{_where(job.model_id, plan.revision)}: nothing missing, not loaded")
            continue
        reporter.describe(f"loading {_where(job.model_id, plan.revision)}")
        scorer = _scorer(job, plan.revision, summary.batch_size, reporter, scorers)
        try:
            for task, count in _score_plan(
                job, stimulus_set.sha256, scorer, plan, reporter
            ).items():
                summary.scored[label, task] = count
        finally:
            summary.batch_size = getattr(scorer, "batch_size", summary.batch_size)
            close = getattr(scorer, "close", None)
            if scorers is None and close is not None:
                close()
    return summary


def _scorer(job: ScoringJob, revision, batch_size: int | None, reporter, scorers):
    def load():
        # Without a batch size, each backend's own default (hf: from free memory).
        sizing = {} if batch_size is None else {"batch_size": batch_size}
        return load_scorer(
            job.model_id,
            backend=job.backend,
            revision=revision,
            dtype=job.dtype,
            device=job.device,
            bos=job.bos,
            notify=reporter.notice,
            **sizing,
            **job.backend_options,
        )

    if scorers is None:
        return load()
    options = sorted((name, repr(value)) for name, value in job.backend_options.items())
    key = (job.model_id, revision, job.backend, job.dtype, job.device, job.bos, *options)
    return scorers.get(key, load)


def _score_plan(job, sha256, scorer, plan: RevisionPlan, reporter: Reporter) -> dict[str, int]:
    writer = store.ShardWriter(job.out)
    done = dict.fromkeys(plan.todo, 0)
    for task, items in plan.todo.items():
        reporter.describe(f"{_where(job.model_id, plan.revision)} {task}")
        chunk_size = _chunk_size(job, task, scorer)
        for start in range(0, len(items), chunk_size):
            chunk = items[start : start + chunk_size]
            with progress.watching(_within_chunk(reporter, len(chunk))):
                records = score_items(
                    scorer, chunk, task, stimulus_sha256=sha256, options=job.options
                )
            writer.write(records)
            done[task] += len(records)
            reporter.advance(len(records))
    # An interrupted run leaves its shards as they are: each is whole, and reading merges them.
    writer.merge()
    return done


def _chunk_size(job: ScoringJob, task: str, scorer: Any) -> int:
    """Items per written shard: the job's, else one batch for a generating task, else eight.

    A generation may run to thousands of tokens (minutes per batch on a CPU), so a generating
    task writes every batch as it ends: an interrupted run keeps all but the batch it was in.
    """
    if job.chunk_size:
        return job.chunk_size
    batch = job.batch_size or getattr(scorer, "batch_size", None)
    if "max_new_tokens" in field_names(get_task(task).result):
        return batch or GENERATION_CHUNK
    return max(8, 8 * (batch or CHUNK_BATCHES))


def _within_chunk(reporter: Reporter, size: int) -> Callable[[float], None]:
    """Pass the backend's per-batch share of a chunk of ``size`` rows on as rows done.

    A task may call the backend more than once per chunk; the rows done never go back.
    """
    shown = 0.0

    def listen(share: float) -> None:
        nonlocal shown
        if share * size > shown:
            shown = share * size
            reporter.partial(shown)

    return listen


def _where(model_id: str, revision: str | None) -> str:
    return model_id + (f"@{revision}" if revision else "")


def _check_job(job: ScoringJob) -> None:
    known = task_names()
    unknown = [task for task in job.tasks if task not in known]
    if unknown or not job.tasks:
        raise TracktaleError(f"--task: {unknown[0] if unknown else ''!r} is not one of {known}")
    bad_roles = [role for role in job.roles if role not in ROLES]
    if bad_roles:
        raise TracktaleError(f"--roles: {bad_roles[0]!r} is not one of {', '.join(ROLES)}")
    if job.limit is not None and job.limit < 1:
        raise TracktaleError(f"--limit must be at least 1, got {job.limit}")
    if job.batch_size is not None and job.batch_size < 1:
        raise TracktaleError(f"--batch-size must be at least 1, got {job.batch_size}")
    check_backend(job.backend, job.tasks, dict(job.backend_options))
    out = Path(job.out)
    if out.exists() and not out.is_dir():
        raise TracktaleError(f"--out {out} is a file; a results store is a folder")


def plan_job(job: ScoringJob, stimulus_set: StimulusSet, stored=None) -> list[RevisionPlan]:
    """For each revision, the items each task still needs (everything when rescoring).

    Args:
        job: The run.
        stimulus_set: Its stimulus set.
        stored: The store as read with ``columns=SETTINGS_COLUMNS`` (every model), when the
            caller plans many jobs on one store; ``None``: read it here.

    Raises:
        TracktaleError: If stored rows of this model were scored with other settings, or no
            task of the job applies to any item chosen.
    """
    items = selected_items(job, stimulus_set)
    if items and len(tasks_without_items(job.tasks, items)) == len(job.tasks):
        raise TracktaleError(_no_task_applies(job.tasks, items))
    stored = _stored_rows(job, stored)
    plans = []
    for revision in job.revisions:
        plan = RevisionPlan(revision, {})
        for task in job.tasks:
            candidates = [item for item in items if get_task(task).applies(item)]
            done = set() if job.rescore else _done_ids(job, stored, revision, task, candidates)
            plan.already[task] = len(done)
            todo = [item for item in candidates if item.item_id not in done]
            if todo:
                # In text order, items that open alike fall into the same chunk, where the
                # scorer computes their shared beginning once.
                plan.todo[task] = sorted(todo, key=get_task(task).text_key)
        plans.append(plan)
    return plans


def selected_items(job: ScoringJob, stimulus_set: StimulusSet) -> list[Item]:
    """The items the job scores: its roles, its item ids and its limit, in set order."""
    items = [item for item in stimulus_set if item.role in job.roles]
    if job.item_ids is not None:
        items = [item for item in items if item.item_id in job.item_ids]
    if job.limit is not None:
        items = items[: job.limit]
    return items


def tasks_without_items(tasks: Sequence[str], items: Sequence[Item]) -> list[str]:
    """The tasks that apply to none of ``items`` (the implicit task to boxes items, say)."""
    return [task for task in tasks if not any(get_task(task).applies(item) for item in items)]


def _no_task_applies(tasks: Sequence[str], items: Sequence[Item]) -> str:
    """One line: the tasks asked for apply to no item; which tasks would."""
    paradigms = ", ".join(sorted({item.paradigm for item in items}))
    others = [task for task in task_names() if task not in tasks_without_items([task], items)]
    asked = "--task " + ", ".join(tasks)
    where = f"the {len(items)} {paradigms} items chosen"
    if not others:
        return f"{asked}: no task applies to {where}"
    return (
        f"{asked}: does not apply to {where}; tasks that do: {', '.join(others)} "
        f"(--task {others[0]})"
    )


SETTINGS_COLUMNS = (
    "dtype",
    "bos_requested",
    "prompt_format_requested",
    "max_new_tokens",
    "calibrated",
    "temperature",
    "num_samples",
    "rerun_truncated",
    "word_probability",
)
"""The stored columns a run compares with its own settings before it resumes."""


def _stored_rows(job: ScoringJob, frame=None):
    if job.rescore:
        return None
    if frame is None:
        if not store.shards(job.out):
            return None
        frame = store.read_results(job.out, columns=SETTINGS_COLUMNS)
    return frame[frame["model_id"] == job.model_id]


def _done_ids(job: ScoringJob, stored, revision, task, candidates: list[Item]) -> set[str]:
    if stored is None or not len(stored):
        return set()
    rows = stored[(stored["revision"] == (revision or "")) & (stored["task"] == task)]
    wanted = {item.item_id for item in candidates}
    # A set lookup per row: Series.isin on arrow strings rebuilds its values on every call.
    rows = rows[[item_id in wanted for item_id in rows["item_id"].tolist()]]
    if not len(rows):
        return set()
    _check_settings(job, rows, revision, task, candidates)
    return set(get_task(task).done(rows, job.options)["item_id"])


def _check_settings(job, rows, revision, task, candidates: list[Item]) -> None:
    expected = {"dtype": recorded_dtype(job.backend, job.dtype), "bos_requested": job.bos}
    expected |= get_task(task).settings(job.options)
    for column, value in expected.items():
        if column not in rows.columns:
            continue
        for stored in rows[column].dropna().unique():
            if stored != value:
                _refuse(job, revision, task, column, stored, value)
    # A task whose rows record a generation budget must have been given the same one.
    if "max_new_tokens" in field_names(get_task(task).result):
        import pandas as pd

        from tracktale.stimuli.registry import get_paradigm

        by_id = {item.item_id: item for item in candidates}
        stored_budgets = rows["max_new_tokens"].tolist()
        for item_id, stored_budget in zip(rows["item_id"].tolist(), stored_budgets, strict=True):
            if pd.isna(stored_budget):
                continue
            item = by_id[item_id]
            # The same budget the task gives it: the run's, else the item's own, else the
            # paradigm's for this item.
            budget = generation_budget(
                job.options, item, get_paradigm(item.paradigm).item_budget(item)
            )
            if stored_budget != budget:
                _refuse(job, revision, task, "max_new_tokens", stored_budget, budget)


def _refuse(job, revision, task, column, stored, asked) -> None:
    raise TracktaleError(
        f"{job.out} already holds {task} rows of {_where(job.model_id, revision)} scored with "
        f"{column}={stored}; this run asks {column}={asked}: use another --out, or --rescore "
        "to replace them"
    )
