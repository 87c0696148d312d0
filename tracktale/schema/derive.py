"""Everything derived from a record's declaration: validators, columns, types, JSON Schema.

A record (:mod:`tracktale.schema.records`) is a frozen dataclass; its annotations are read
once per class into pydantic models (strict: no coercion, unknown fields refused, no NaN or
infinity): :func:`record_model` checks whole records, :func:`request_model` the fields a
browser sends, with their extra limits (and every text valid Unicode). :func:`columns` gives
what the study database and the exports store (names, Python types, nullability, text
lengths), so no list of fields or types is written anywhere else.
"""

from __future__ import annotations

import dataclasses
import functools
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated, Any, Literal

import pydantic
from pydantic import ConfigDict

from tracktale.errors import TracktaleError
from tracktale.schema.fields import VALID_UNICODE, Sent, Stored

STRICT = ConfigDict(strict=True, extra="forbid", allow_inf_nan=False)
"""No coercion (``"1"`` is not 1, ``true`` is not 1), no unknown fields, finite numbers."""


@dataclass(frozen=True)
class Column:
    """One field as stored and exported.

    Attributes:
        name: The field's name.
        kind: ``bool``, ``int``, ``float`` or ``str`` (``Literal`` choices are text).
        nullable: ``None`` is allowed, or the field has a default (it came after the first
            release, so older rows may lack it).
        length: A text column's length (``None``: the default length).
        free_text: Unlimited text that may hold NUL characters.
    """

    name: str
    kind: type
    nullable: bool
    length: int | None = None
    free_text: bool = False


@functools.cache
def hints(cls: type) -> dict[str, Any]:
    """The record's field annotations, with their ``Annotated`` metadata."""
    return typing.get_type_hints(cls, include_extras=True)


def _metadata(hint: Any) -> tuple[Any, ...]:
    return getattr(hint, "__metadata__", ()) if typing.get_origin(hint) is Annotated else ()


def _marker(cls: type, name: str, kind: type) -> Any:
    return next((m for m in _metadata(hints(cls)[name]) if isinstance(m, kind)), None)


_UNIONS = (typing.Union, types.UnionType)


def _bare(hint: Any) -> Any:
    while typing.get_origin(hint) is Annotated:
        hint = typing.get_args(hint)[0]
    return hint


def _options(hint: Any) -> tuple[list[Any], bool]:
    """The non-``None`` members of a (possibly optional) annotation, and whether it had None."""
    hint = _bare(hint)
    if typing.get_origin(hint) in _UNIONS:
        members = [_bare(member) for member in typing.get_args(hint)]
        return [m for m in members if m is not type(None)], type(None) in members
    return [hint], False


def base_type(hint: Any) -> type:
    """``int`` for ``Annotated[int, ...] | None``, ``str`` for a ``Literal`` of strings."""
    first = _options(hint)[0][0]
    if typing.get_origin(first) is Literal:
        return type(typing.get_args(first)[0])
    found: type = first
    return found


def choices(hint: Any) -> tuple[Any, ...] | None:
    """The allowed values of a ``Literal`` field (``None`` for other fields)."""
    first = _options(hint)[0][0]
    return typing.get_args(first) if typing.get_origin(first) is Literal else None


def _has_default(field: dataclasses.Field[Any]) -> bool:
    return not (
        field.default is dataclasses.MISSING and field.default_factory is dataclasses.MISSING
    )


def _with_rules(hint: Any, rules: tuple[Any, ...]) -> Any:
    """``hint`` with more rules; on an optional field they apply to the value, not to ``None``."""
    metadata = [m for m in _metadata(hint) if not isinstance(m, Sent | Stored)]
    core = typing.get_args(hint)[0] if typing.get_origin(hint) is Annotated else hint
    members = typing.get_args(core) if typing.get_origin(core) in _UNIONS else ()
    if type(None) in members and len(members) == 2:
        (value,) = [member for member in members if member is not type(None)]
        return (Annotated[value, *metadata, *rules] if metadata or rules else value) | None
    return Annotated[core, *metadata, *rules] if metadata or rules else core


def _pydantic_fields(cls: type, sent_only: bool) -> dict[str, Any]:
    fields = {}
    for field in dataclasses.fields(cls):
        hint = hints(cls)[field.name]
        sent = _marker(cls, field.name, Sent)
        if sent_only and sent is None:
            continue
        if sent_only:
            # Last, so that it wraps the others and runs first.
            unicode = (VALID_UNICODE,) if base_type(hint) is str else ()
            hint = _with_rules(hint, (*sent.rules, *unicode))
        fields[field.name] = (hint, _default(field))
    return fields


def _default(field: dataclasses.Field[Any]) -> Any:
    if field.default_factory is not dataclasses.MISSING:
        return pydantic.Field(default_factory=field.default_factory)
    return ... if field.default is dataclasses.MISSING else field.default


@functools.cache
def record_model(cls: type) -> type[pydantic.BaseModel]:
    """A strict pydantic model of every field of the record ``cls``."""
    return pydantic.create_model(cls.__name__, __config__=STRICT, **_pydantic_fields(cls, False))


@functools.cache
def request_model(cls: type) -> type[pydantic.BaseModel]:
    """A strict pydantic model of the fields of ``cls`` marked :class:`Sent`, with their limits.

    Fields keep the record's order; those with a default may be left out.
    """
    name = f"{cls.__name__}Request"
    return pydantic.create_model(name, __config__=STRICT, **_pydantic_fields(cls, True))


def json_schema(cls: type, *, sent_only: bool = False) -> dict[str, Any]:
    """The JSON Schema of the record (or of what the browser sends, with ``sent_only``)."""
    model = request_model(cls) if sent_only else record_model(cls)
    return model.model_json_schema()


@functools.cache
def columns(cls: type) -> tuple[Column, ...]:
    """The record's fields as stored and exported, in declaration order."""
    result = []
    for field in dataclasses.fields(cls):
        hint = hints(cls)[field.name]
        stored = _marker(cls, field.name, Stored) or Stored()
        nullable = _options(hint)[1] or _has_default(field)
        kind = base_type(hint)
        result.append(Column(field.name, kind, nullable, stored.length, stored.free_text))
    return tuple(result)


@dataclass(frozen=True)
class Problem:
    """The first thing wrong with some data, in field order.

    Attributes:
        field: The field's name.
        where: Where in the data: the field, or ``field.key`` inside one (``counts.C1``).
        kind: pydantic's error type (``missing``, ``int_type``, ``string_too_long``, ...) or
            ``null`` for ``None`` where it is not allowed.
        context: The error's details (``{"ge": 0}``, ``{"max_length": 200}``, ...).
        value: The value given (``None`` when the field was missing).
    """

    field: str
    where: str
    kind: str
    context: Mapping[str, Any]
    value: Any


def first_problem(error: pydantic.ValidationError) -> Problem:
    """The first problem pydantic found (it reports them in field order)."""
    first = error.errors(include_url=False)[0]
    location = [str(part) for part in first["loc"]]
    value = first.get("input")
    kind = "null" if value is None and first["type"] != "missing" else first["type"]
    name = location[0] if location else ""
    return Problem(name, ".".join(location), kind, first.get("ctx") or {}, value)


def unknown_fields(cls: type[pydantic.BaseModel], data: Mapping[str, Any]) -> list[str]:
    """Names in ``data`` that ``cls`` does not declare, sorted."""
    return sorted(set(data) - set(cls.model_fields))


def build_record(cls: type, data: Mapping[str, Any], *, what: str) -> Any:
    """Validate plain data against the record ``cls`` and build one.

    Args:
        cls: The record class.
        data: Field values (fields with a default may be missing).
        what: How messages name a field (``trial field``).

    Raises:
        TracktaleError: Naming the first unknown, missing or invalid field.
    """
    model = record_model(cls)
    unknown = unknown_fields(model, data)
    if unknown:
        raise TracktaleError(f"unknown {what} {unknown[0]!r}")
    try:
        checked = model.model_validate(dict(data))
    except pydantic.ValidationError as error:
        problem = first_problem(error)
        raise TracktaleError(f"{what} {problem.where!r} {_record_phrase(cls, problem)}") from None
    # The values as given (an integer time stays an integer), once they are known to be valid.
    return cls(**{name: data[name] for name in checked.model_fields_set})


def _record_phrase(cls: type, problem: Problem) -> str:
    if problem.kind == "missing":
        return "is missing"
    if problem.kind == "literal_error":
        return f"must be one of {choices(hints(cls)[problem.field])}"
    if problem.kind == "greater_than_equal" and problem.context.get("ge") == 0:
        return "must not be negative"
    if problem.kind.endswith("_type") or problem.kind in ("null", "int_from_float"):
        return f"has the wrong type ({type(problem.value).__name__})"
    phrases = {
        "greater_than_equal": f"must be at least {problem.context.get('ge', 0):g}",
        "less_than_equal": f"must be at most {problem.context.get('le', 0):g}",
        "string_too_long": f"is longer than {problem.context.get('max_length')} characters",
        "text_format": "has an invalid format",
        "finite_number": "must be a finite number",
        "string_unicode": "is not valid Unicode (a lone surrogate)",
        "blank": "is blank",
    }
    return phrases.get(problem.kind, "is invalid")
