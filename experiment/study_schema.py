"""Checking a study file against its declaration (the dataclasses of :mod:`.config`).

Every key of the study file is a field of a frozen dataclass whose annotation carries its
rules: the type, bounds as ``Field(ge=..., le=...)``, choices as ``Literal`` and the rules of
:func:`rule` (a pattern, a required ``{code}``). The strict pydantic model of each dataclass
(:func:`tracktale.schema.derive.record_model`) checks the values, and :func:`validated` words
the first problem as study files always have, in one line naming the file and the key
(``study.yaml: 'timing.reading_ms' must be int, got str``, ``study.yaml: timing.reading_ms
must be between 500 and 600000``, ``study.yaml: unknown key timing.reading``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

import annotated_types
import pydantic
from pydantic import AfterValidator
from pydantic_core import PydanticCustomError

from tracktale.errors import TracktaleError
from tracktale.schema.derive import Problem, base_type, choices, first_problem, hints, record_model

_RULE = "study_rule"


def rule(test: Callable[[Any], bool], message: str, *, show_value: bool = False) -> Any:
    """A rule on a field's value; ``message`` says what the value must be or may hold.

    Args:
        test: True for a good value.
        message: The words after the key (``may use letters, digits, _ and -``).
        show_value: Name the value given too (``study_id '../x' may use ...``).
    """

    def check(value: Any) -> Any:
        if not test(value):
            context = {"message": message, "show_value": show_value}
            raise PydanticCustomError(_RULE, "{message}", context)
        return value

    return AfterValidator(check)


def matches(pattern: str, message: str, *, show_value: bool = False) -> Any:
    """A rule that the whole value matches ``pattern``."""
    compiled = re.compile(pattern)
    return rule(lambda value: bool(compiled.fullmatch(value)), message, show_value=show_value)


def validated(cls: type, data: Mapping[str, Any], *, where: str, prefix: str = "") -> Any:
    """Check plain data against the dataclass ``cls`` and build one.

    Args:
        cls: A dataclass of the study file (its nested sections already built).
        data: Every field's value.
        where: The file (or ``study``, ``--paradigm``), first in every message.
        prefix: The section's key (``timing``) that names its fields (``timing.reading_ms``).

    Raises:
        TracktaleError: Naming the file, the key and the first problem.
    """
    model = record_model(cls)
    try:
        checked = model.model_validate(dict(data))
    except pydantic.ValidationError as error:
        problem = first_problem(error)
        raise TracktaleError(f"{where}: {_phrase(cls, model, problem, prefix)}") from None
    return cls(**{name: getattr(checked, name) for name in model.model_fields})


def _phrase(cls: type, model: type[pydantic.BaseModel], problem: Problem, prefix: str) -> str:
    key = f"{prefix}{problem.field}"
    if problem.kind == "extra_forbidden":
        hint = " (secrets come from the environment)" if "secret" in problem.field else ""
        return f"unknown key {key}" if prefix else f"unknown key {key!r}{hint}"
    if problem.kind == _RULE:
        shown = f" {problem.value!r}" if problem.context["show_value"] else ""
        return f"{key}{shown} {problem.context['message']}"
    if problem.kind == "literal_error":
        return f"{key} must be {' or '.join(choices(hints(cls)[problem.field]) or ())}"
    if problem.kind in ("greater_than_equal", "less_than_equal"):
        return f"{key} {_bounds(model.model_fields[problem.field].metadata)}"
    expected = base_type(hints(cls)[problem.field]).__name__
    return f"{key!r} must be {expected}, got {type(problem.value).__name__}"


def _bounds(metadata: list[Any]) -> str:
    low = next((m.ge for m in metadata if isinstance(m, annotated_types.Ge)), None)
    high = next((m.le for m in metadata if isinstance(m, annotated_types.Le)), None)
    if low is not None and high is not None:
        return f"must be between {low} and {high}"
    if high is not None:
        return f"must be at most {high}"
    return "must not be negative" if low == 0 else f"must be at least {low}"
