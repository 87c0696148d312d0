"""The sweep plan's keys, declared once: each key's type, choices and bounds (pydantic v2).

A plan file (:mod:`tracktale.models.plan`) has four kinds of mapping: the plan itself
(:data:`PLAN`), scoring settings (:data:`SCORING`, plan-wide under ``scoring:`` or per model),
a model entry (:data:`MODEL`: its id, revisions, tasks and resources, and any scoring setting)
and SLURM resources (:data:`RESOURCES`, plan-wide under ``executor:`` (:data:`EXECUTOR`) or per
model). Each is a strict pydantic model built from these declarations; :func:`validated` checks
one mapping and words the first problem as plans always have (``'fp16' is not one of float32,
bfloat16, float16``, ``expected int, got True``, ``must be at least 1, got 0``). What needs more
than the key's own value (stimulus folders, revision presets, what a backend can answer) is
checked by the plan loader after this.
"""

from __future__ import annotations

import types
import typing
from collections.abc import Mapping
from typing import Annotated, Any, Literal, cast

import pydantic
from pydantic import AfterValidator, BeforeValidator, ConfigDict, Field

from tracktale.errors import TracktaleError
from tracktale.models.devices import parse_max_memory
from tracktale.models.registry import backend_names
from tracktale.models.tasks import task_names
from tracktale.models.tokens import BOS_POLICIES, PROMPT_FORMATS
from tracktale.models.word_boundaries import WORD_PROBABILITIES
from tracktale.schema.records import ROLES

Executor = Literal["local", "slurm", "submitit-local"]
EXECUTORS: tuple[str, ...] = typing.get_args(Executor)
"""``local``: one job after another in this process; ``slurm``: a SLURM job array through
submitit; ``submitit-local``: submitit's local executor (each job its own process, for tests)."""
Dtype = Literal["float32", "bfloat16", "float16"]
DTYPES: tuple[str, ...] = typing.get_args(Dtype)


def one_of(options: tuple[str, ...]) -> Any:
    """``Literal[*options]`` for choices known at run time (the registered backends)."""
    return cast(Any, Literal)[options]


def at_least(minimum: float, maximum: float | None = None, *, kind: type = int) -> Any:
    """An ``int`` (or, for ``kind=float``, an ``int`` or ``float``) within bounds."""
    if kind is int:
        return Annotated[int, Field(ge=minimum, le=maximum)]

    def check(value: float) -> float:
        # A fractional bound cannot be an int validator's: the same words, checked here.
        if value < minimum:
            raise ValueError(f"must be at least {minimum}, got {value}")
        if maximum is not None and value > maximum:
            raise ValueError(f"must be at most {maximum}, got {value}")
        return value

    return Annotated[int | float, AfterValidator(check)]


def string_list(choices: tuple[str, ...] | None = None, *, empty: bool = False) -> Any:
    """A list of strings (or one comma-separated string), as a tuple of stripped strings.

    Args:
        choices: The strings allowed (``None``: any).
        empty: Whether an empty value (``null``, ``[]``, ``""``) is allowed (as no strings).
    """

    def check(value: Any) -> tuple[str, ...]:
        if empty and not value:
            return ()
        parts = value.split(",") if isinstance(value, str) else value
        if not isinstance(parts, list) or not parts:
            raise ValueError(f"expected a list (or a comma-separated string), got {value!r}")
        result = []
        for part in parts:
            if not isinstance(part, str) or not part.strip():
                raise ValueError(f"expected strings, got {part!r}")
            if choices is not None and part.strip() not in choices:
                raise ValueError(f"{part.strip()!r} is not one of {', '.join(choices)}")
            result.append(part.strip())
        return tuple(result)

    return Annotated[tuple[str, ...], BeforeValidator(check)]


def _max_memory(value: Any) -> Any:
    if value is None:
        return None
    try:
        return parse_max_memory(value, name="max_memory")
    except TracktaleError as error:
        raise ValueError(str(error).removeprefix("max_memory: ")) from None


ANYTHING = Any
"""A key whose value the plan loader checks itself (paths, revisions, nested mappings)."""

SCORING: dict[str, Any] = {
    "backend": one_of(backend_names()),
    "dtype": Dtype,
    "device": str,
    "batch_size": at_least(1),
    "bos": one_of(BOS_POLICIES),
    "calibrate": bool,
    "prompt_format": one_of(PROMPT_FORMATS),
    "max_new_tokens": at_least(1) | None,
    "word_surprisal": bool,
    "word_probability": one_of(WORD_PROBABILITIES),
    "temperature": at_least(0, kind=float),
    "num_samples": at_least(1),
    "sampling_seed": int,
    "rerun_truncated": bool,
    "rerun_max_new_tokens": at_least(1) | None,
    "roles": string_list(ROLES),
    "limit": at_least(1) | None,
    "chunk_size": at_least(1) | None,
    "max_memory": Annotated[Any, BeforeValidator(_max_memory)],
    "offload_folder": str,
    "gguf_file": str,
    "base_url": str,
    "api_key_env": str,
    "concurrency": at_least(1),
    "request_timeout": at_least(0.001, kind=float),
    "max_retries": at_least(0),
    "cache_dir": str,
    "logprobs": bool,
    "top_logprobs": at_least(0, 20),
    "max_tokens_field": Literal["max_tokens", "max_completion_tokens"],
    "seed": int,
    "prompts_per_request": at_least(1),
}
"""Scoring settings, plan-wide under ``scoring:`` or per model; the backends' own options too."""

RESOURCES: dict[str, Any] = {
    "partition": str,
    "account": str,
    "qos": str,
    "constraint": str,
    "gpus_per_node": at_least(0),
    "cpus_per_task": at_least(1),
    "mem_gb": at_least(0.001, kind=float),
    "timeout_min": at_least(1),
    "array_parallelism": at_least(1),
    "setup": string_list(),
    "sbatch": dict[str, Any],
}
"""SLURM resources, plan-wide under ``executor:`` or per model under ``resources:``."""

EXECUTOR: dict[str, Any] = {"name": Executor, "folder": str, "python": str, **RESOURCES}
MODEL: dict[str, Any] = {
    "id": ANYTHING,
    "revisions": string_list(),
    "preset": string_list(empty=True),
    "tasks": string_list(task_names()),
    "resources": ANYTHING,
    **SCORING,
}
PLAN: dict[str, Any] = {
    "store": (ANYTHING, ...),
    "stimuli": (ANYTHING, ...),
    "tasks": string_list(task_names()),
    "models": (ANYTHING, ...),
    "scoring": ANYTHING,
    "executor": ANYTHING,
}
"""The plan's own keys (``store``, ``stimuli`` and ``models`` are required)."""


class Invalid(Exception):
    """A problem at a key (``dtype``, or ``""`` for the mapping itself)."""

    def __init__(self, key: str, message: str) -> None:
        super().__init__(message)
        self.key, self.message = key, message


_CONFIG = ConfigDict(strict=True, extra="forbid")
_MODELS: dict[int, type[pydantic.BaseModel]] = {}


def model_of(keys: Mapping[str, Any]) -> type[pydantic.BaseModel]:
    """The strict pydantic model of one of the key tables above (built once)."""
    model = _MODELS.get(id(keys))
    if model is None:
        fields: dict[str, Any] = {
            name: declared if isinstance(declared, tuple) else (declared, None)
            for name, declared in keys.items()
        }
        model = pydantic.create_model("PlanMapping", __config__=_CONFIG, **fields)
        _MODELS[id(keys)] = model
    return model


def validated(value: Any, keys: Mapping[str, Any]) -> dict[str, Any]:
    """Check a mapping of plan keys; return the given keys' values, in the file's order.

    Raises:
        Invalid: Naming the key and the problem (unknown keys first, then missing ones, then
            the first wrong value in the file's order).
    """
    if not isinstance(value, dict):
        raise Invalid("", f"expected a mapping of keys, got {type(value).__name__}")
    model = model_of(keys)
    try:
        checked = model.model_validate(value)
    except pydantic.ValidationError as error:
        raise _invalid(error.errors(include_url=False), value, keys) from None
    return {key: getattr(checked, key) for key in value}


def _invalid(errors: list[Any], value: Mapping[str, Any], keys: Mapping[str, Any]) -> Invalid:
    unknown = [e for e in errors if e["type"] == "extra_forbidden"]
    if unknown:
        return Invalid(str(unknown[0]["loc"][0]), f"unknown key (known: {', '.join(sorted(keys))})")
    missing = [e for e in errors if e["type"] == "missing"]
    if missing:
        return Invalid("", f"missing key {missing[0]['loc'][0]!r}")
    order = list(value)
    key = min((str(e["loc"][0]) for e in errors), key=order.index)
    own = [e for e in errors if e["loc"][0] == key]
    # Of a union's errors (int or float), a bound says more than the type.
    first = next((e for e in own if not e["type"].endswith("_type")), own[0])
    return Invalid(key, _phrase(first, value[key], keys[key]))


def _phrase(error: Any, value: Any, declared: Any) -> str:
    kind, context = error["type"], error.get("ctx") or {}
    if kind == "literal_error":
        return f"{value!r} is not one of {', '.join(typing.get_args(_bare(declared)[0]))}"
    if kind == "value_error":
        return str(context["error"])
    if kind == "greater_than_equal":
        return f"must be at least {context['ge']}, got {value}"
    if kind == "less_than_equal":
        return f"must be at most {context['le']}, got {value}"
    names = " or ".join((typing.get_origin(kind) or kind).__name__ for kind in _bare(declared))
    if isinstance(value, bool):
        return f"expected {names}, got {value!r}"
    return f"expected {names}, got {type(value).__name__} {value!r}"


def _bare(declared: Any) -> list[Any]:
    """The non-``None`` members of a declared type, without their ``Annotated`` rules."""
    declared = _unannotated(declared)
    members = (
        typing.get_args(declared)
        if typing.get_origin(declared) in (typing.Union, types.UnionType)
        else (declared,)
    )
    return [_unannotated(member) for member in members if member is not type(None)]


def _unannotated(hint: Any) -> Any:
    while typing.get_origin(hint) is Annotated:
        hint = typing.get_args(hint)[0]
    return hint
