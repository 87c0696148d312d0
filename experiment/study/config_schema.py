"""Checking a study file against its declaration (the dataclasses of :mod:`.config`).

Every key of the study file is a field of a frozen dataclass whose annotation carries its
rules: the type, bounds as ``Field(ge=..., le=...)``, choices as ``Literal`` and the rules of
:func:`rule` (a pattern, a required ``{code}``). The strict pydantic model of each dataclass
(:func:`tracktale.schema.derive.record_model`) checks the values, and :func:`validated` words
the first problem as study files always have, in one line naming the file and the key
(``study.yaml: 'timing.reading_ms' must be int, got str``, ``study.yaml: timing.reading_ms
must be between 500 and 600000``, ``study.yaml: unknown key timing.reading``). A field's
:class:`Comment` documents it in the commented default file that :func:`commented_yaml`
writes from the same declaration (every key, with its default).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import annotated_types
import pydantic
import yaml
from pydantic import AfterValidator
from pydantic_core import PydanticCustomError

from tracktale.errors import TracktaleError
from tracktale.schema.derive import (
    Problem,
    base_type,
    choices,
    first_problem,
    hints,
    record_model,
)

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


@dataclass(frozen=True)
class Comment:
    """A key's comment in the commented default file.

    Attributes:
        text: The comment (one line or several).
        above: Written on lines of its own above the key (after a blank line), not after it.
    """

    text: str
    above: bool = False


_INLINE_COLUMN = 26


def _comment(cls: type, name: str) -> Comment | None:
    metadata = getattr(hints(cls)[name], "__metadata__", ())
    return next((m for m in metadata if isinstance(m, Comment)), None)


def commented_yaml(cls: type, header: str, *, skip: tuple[str, ...] = ()) -> str:
    """The default of the dataclass ``cls`` as YAML: every key, its default and its comment.

    Args:
        cls: The file's dataclass; fields that are dataclasses are written as mappings.
        header: Comment lines opening the file.
        skip: Fields that are not keys of the file.
    """
    lines = [f"# {line}" if line else "#" for line in header.splitlines()]
    default = cls()
    after_section = False
    for field in dataclasses.fields(cls):
        if field.name in skip:
            continue
        value = getattr(default, field.name)
        comment = _comment(cls, field.name)
        above = comment is not None and comment.above
        if above or after_section or dataclasses.is_dataclass(value):
            lines.append("")
        after_section = dataclasses.is_dataclass(value)
        if comment is not None and comment.above:
            lines += [f"# {line}" for line in comment.text.splitlines()]
        if not dataclasses.is_dataclass(value):
            lines.append(_key_line(field.name, value, comment))
            continue
        lines.append(_key_line(field.name, None, comment, section=True))
        for inner in dataclasses.fields(value):
            inner_comment = _comment(type(value), inner.name)
            inner_value = getattr(value, inner.name)
            lines.append(_key_line(inner.name, inner_value, inner_comment, indent="  "))
    return "\n".join(lines) + "\n"


def _key_line(
    key: str, value: Any, comment: Comment | None, *, section: bool = False, indent: str = ""
) -> str:
    text = indent + (f"{key}:" if section else yaml.safe_dump({key: value}, width=1000).strip())
    if comment is None or comment.above:
        return text
    return f"{text:<{_INLINE_COLUMN - 2}}  # {comment.text}"
