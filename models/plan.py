"""Sweep plans: a YAML file naming models x revisions x tasks x stimulus sets, checked key by key.

A plan expands into :class:`SweepJob` s, one per model revision (a model is loaded once per
job and scores every task on every stimulus set). Every problem is one line naming the file,
the line and the key: ``sweep.yaml line 9: models[0].dtype: 'fp16' is not one of float32,
bfloat16, float16``. Relative paths are relative to the plan file. See the README's "Running on
a cluster" for an example; :data:`PLAN_KEYS` lists every key.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from tracktale.errors import TracktaleError
from tracktale.models.gguf import canonical_model_id
from tracktale.models.plan_schema import (
    EXECUTOR,
    MODEL,
    PLAN,
    RESOURCES,
    SCORING,
    Invalid,
    validated,
)
from tracktale.models.registry import BACKEND_OPTIONS, check_backend
from tracktale.models.revisions import PRESETS, parse_revisions
from tracktale.stimulus_set import is_stimulus_set


class PlanError(TracktaleError):
    """A problem in a plan, at a key path (``models[0].dtype``)."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(message)
        self.path, self.message = path, message


@dataclass(frozen=True)
class Resources:
    """What a SLURM job asks for (see ``sbatch``); ``None``: the cluster's default."""

    partition: str | None = None
    account: str | None = None
    qos: str | None = None
    constraint: str | None = None
    gpus_per_node: int | None = None
    cpus_per_task: int | None = None
    mem_gb: float | None = None
    timeout_min: int = 240
    array_parallelism: int = 64
    setup: tuple[str, ...] = ()
    sbatch: tuple[tuple[str, Any], ...] = ()


@dataclass(frozen=True)
class SweepJob:
    """One model revision on every task and stimulus set of a plan: one scheduler job.

    Attributes:
        model_id: Hub id, local folder or endpoint model name.
        revision: The revision (``None``: the default branch).
        tasks: Tasks to score.
        stimuli: Stimulus set folders (absolute).
        store: The results store (absolute).
        scoring: Scoring settings (``dtype``, ``batch_size``, ...; see :data:`SCORING_KEYS`).
        resources: What the job asks the scheduler for.
    """

    model_id: str
    revision: str | None
    tasks: tuple[str, ...]
    stimuli: tuple[Path, ...]
    store: Path
    scoring: Mapping[str, Any] = field(default_factory=dict)
    resources: Resources = field(default_factory=Resources)

    @property
    def label(self) -> str:
        """``model@revision`` (the model alone for its default branch): the job's name."""
        return self.model_id + (f"@{self.revision}" if self.revision else "")


@dataclass(frozen=True)
class SweepPlan:
    """A checked plan.

    Attributes:
        path: The plan file.
        store: The results store (absolute).
        stimuli: Stimulus set folders (absolute).
        jobs: One per model revision, in plan order.
        executor: ``local``, ``slurm`` or ``submitit-local``.
        folder: Where submitit keeps job files and logs (``None``: beside the store).
        python: The jobs' Python command (``None``: this interpreter).
    """

    path: Path
    store: Path
    stimuli: tuple[Path, ...]
    jobs: tuple[SweepJob, ...]
    executor: str = "local"
    folder: Path | None = None
    python: str | None = None


SCORING_KEYS = tuple(SCORING)
"""Scoring settings, plan-wide under ``scoring:`` or per model (declared in :mod:`.plan_schema`)."""
RESOURCE_KEYS = tuple(RESOURCES)
"""SLURM resources, plan-wide under ``executor:`` or per model under ``resources:``."""
MODEL_KEYS = tuple(MODEL)
PLAN_KEYS = tuple(PLAN)


def load_plan(path: str | os.PathLike[str]) -> SweepPlan:
    """Read and check a plan file.

    Raises:
        TracktaleError: One line naming the file, line and key of the first problem: an
            unknown key, a value of the wrong type, an unknown revision preset, a stimulus folder
            that is not a stimulus set, a task the backend cannot answer.
    """
    plan_path = Path(path)
    try:
        text = plan_path.read_text(encoding="utf-8")
    except OSError as error:
        raise TracktaleError(f"cannot read the plan {plan_path}: {error.strerror}") from None
    try:
        node = yaml.compose(text)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f" line {mark.line + 1}" if mark is not None else ""
        problem = getattr(error, "problem", None) or str(error).splitlines()[0]
        raise TracktaleError(f"{plan_path}{where}: not valid YAML ({problem})") from None
    lines = _key_lines(node)
    data = yaml.safe_load(text)
    try:
        return _build(plan_path, data)
    except PlanError as error:
        line = _line_of(lines, error.path)
        where = f" line {line}" if line else ""
        key = f" {error.path}:" if error.path else ""
        raise TracktaleError(f"{plan_path}{where}:{key} {error.message}") from None


def _key_lines(node: Any, path: str = "") -> dict[str, int]:
    """Key path -> line number (1-based) of every key and list entry in the YAML tree."""
    lines: dict[str, int] = {}
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            child = f"{path}.{key.value}" if path else str(key.value)
            lines[child] = key.start_mark.line + 1
            lines.update(_key_lines(value, child))
    elif isinstance(node, yaml.SequenceNode):
        for index, value in enumerate(node.value):
            child = f"{path}[{index}]"
            lines[child] = value.start_mark.line + 1
            lines.update(_key_lines(value, child))
    return lines


def _line_of(lines: Mapping[str, int], path: str) -> int | None:
    while path:
        if path in lines:
            return lines[path]
        path = path.rpartition(".")[0] if "." in path else path.rpartition("[")[0]
    return None


def _checked(value: Any, path: str, keys: Mapping[str, Any]) -> dict[str, Any]:
    """The mapping at ``path`` checked against its declared ``keys`` (:mod:`.plan_schema`)."""
    try:
        return validated(value, keys)
    except Invalid as problem:
        where = ".".join(part for part in (path, problem.key) if part)
        raise PlanError(where, problem.message) from None


def _build(plan_path: Path, data: Any) -> SweepPlan:
    if data is None:
        raise PlanError("", "the plan is empty")
    data = _checked(data, "", PLAN)
    base = plan_path.resolve().parent
    store = _path(data["store"], "store", base)
    stimuli = _stimuli(data["stimuli"], base)
    tasks = data.get("tasks", ("implicit",))
    scoring = _checked(data.get("scoring") or {}, "scoring", SCORING)
    executor = _checked(data.get("executor") or {}, "executor", EXECUTOR)
    defaults = {key: executor[key] for key in RESOURCE_KEYS if key in executor}
    models = data["models"]
    if not isinstance(models, list) or not models:
        raise PlanError("models", "expected a non-empty list of models")
    jobs: dict[tuple[str, str | None], SweepJob] = {}
    for index, entry in enumerate(models):
        for job in _model_jobs(entry, f"models[{index}]", tasks, scoring, defaults, base):
            job = SweepJob(**{**job.__dict__, "stimuli": stimuli, "store": store})
            key = (job.model_id, job.revision)
            if key in jobs:
                raise PlanError(f"models[{index}]", f"{job.label} is already in the plan")
            jobs[key] = job
    folder = executor.get("folder")
    return SweepPlan(
        path=plan_path,
        store=store,
        stimuli=stimuli,
        jobs=tuple(jobs.values()),
        executor=executor.get("name", "local"),
        folder=_path(folder, "executor.folder", base) if folder else None,
        python=executor.get("python"),
    )


def _path(value: Any, path: str, base: Path) -> Path:
    if not isinstance(value, str) or not value.strip():
        raise PlanError(path, f"expected a folder path, got {value!r}")
    return (base / Path(value).expanduser()).resolve()


def _stimuli(value: Any, base: Path) -> tuple[Path, ...]:
    entries = [value] if isinstance(value, str) else value
    if not isinstance(entries, list) or not entries:
        raise PlanError("stimuli", "expected a stimulus set folder or a list of them")
    folders = []
    for index, entry in enumerate(entries):
        where = "stimuli" if isinstance(value, str) else f"stimuli[{index}]"
        folder = _path(entry, where, base)
        if not folder.is_dir():
            raise PlanError(where, f"no stimulus set folder {folder}")
        if not is_stimulus_set(folder):
            raise PlanError(where, f"{folder} is not a stimulus set (no manifest.json)")
        folders.append(folder)
    return tuple(folders)


def _model_jobs(entry, path, tasks, scoring, defaults, base) -> list[SweepJob]:
    if isinstance(entry, str):
        entry = {"id": entry}
    entry = _checked(entry, path, MODEL)
    model_id = entry.get("id")
    if not isinstance(model_id, str) or not model_id.strip():
        raise PlanError(f"{path}.id", f"expected the model's hub id or folder, got {model_id!r}")
    settings = {**scoring, **{key: value for key, value in entry.items() if key in SCORING}}
    for key in ("offload_folder", "cache_dir"):
        if key in settings:
            settings[key] = str(_path(settings[key], f"{path}.{key}", base))
    # A local model folder (or GGUF file) is relative to the plan, like every other path in it.
    if model_id.startswith((".", "~")) or (base / model_id).exists():
        model_id = str((base / Path(model_id).expanduser()).resolve())
    model_tasks = entry.get("tasks", tasks)
    backend = settings.get("backend", "hf")
    if backend == "hf":
        model_id = canonical_model_id(model_id)
    options = {key: value for key, value in settings.items() if key in _OWN_OPTIONS}
    try:
        check_backend(backend, model_tasks, options)
    except TracktaleError as error:
        raise PlanError(path, str(error)) from None
    resources = _resources(entry.get("resources"), f"{path}.resources", defaults)
    return [
        SweepJob(model_id, revision, model_tasks, (), Path(), settings, resources)
        for revision in _revisions(entry, path)
    ]


_OWN_OPTIONS = {name for names in BACKEND_OPTIONS.values() for name in names}


def _revisions(entry: Mapping[str, Any], path: str) -> list[str | None]:
    names: list[str] = []
    if "preset" in entry:
        presets = entry["preset"]
        for preset in presets:
            if preset not in PRESETS:
                raise PlanError(
                    f"{path}.preset",
                    f"unknown revision preset {preset!r} (known: {', '.join(PRESETS)})",
                )
            names.append(preset)
    if "revisions" in entry:
        names += entry["revisions"]
    try:
        return parse_revisions(names) if names else [None]
    except TracktaleError as error:
        raise PlanError(f"{path}.revisions", str(error).removeprefix("--revisions: ")) from None


def _resources(value: Any, path: str, defaults: Mapping[str, Any]) -> Resources:
    own = _checked(value or {}, path, RESOURCES)
    merged = {**defaults, **own}
    merged["setup"] = tuple(merged.get("setup", ()))
    merged["sbatch"] = tuple(sorted((merged.get("sbatch") or {}).items()))
    return Resources(**merged)
