"""Validation of request bodies: types, sizes and allowed values, with one-line messages.

Every API endpoint declares its body as a mapping of :class:`Field` and calls
:func:`validate`; anything else is refused with :class:`ApiError` (HTTP 4xx and a message
naming the field).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


class ApiError(Exception):
    """A request the server refuses, with the HTTP status and a message for the client."""

    def __init__(self, status: int, message: str, **extra: Any) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.extra = extra


@dataclass(frozen=True)
class Field:
    """One field of a request body.

    Attributes:
        kind: ``str``, ``int``, ``float`` (accepts integers too) or ``bool``.
        required: The field must be present.
        nullable: ``null`` is allowed.
        max_length: Longest string allowed.
        pattern: Regular expression a string must match completely.
        choices: Allowed values.
        minimum: Smallest number allowed.
        maximum: Largest number allowed.
    """

    kind: type
    required: bool = True
    nullable: bool = False
    max_length: int | None = None
    pattern: str | None = None
    choices: tuple[Any, ...] | None = None
    minimum: float | None = None
    maximum: float | None = None


IDENTIFIER = r"[A-Za-z0-9_-]{1,64}"
"""Prolific ids, client trial ids and similar opaque identifiers."""


def validate(body: Any, schema: Mapping[str, Field]) -> dict[str, Any]:
    """Check a decoded JSON body against a schema.

    Returns:
        The known fields that are present (absent optional fields are left out).

    Raises:
        ApiError: 400 naming the first problem (not an object, unknown, missing or invalid).
    """
    if not isinstance(body, dict):
        raise ApiError(400, "the request body must be a JSON object")
    unknown = sorted(set(body) - set(schema))
    if unknown:
        raise ApiError(400, f"unknown field {unknown[0][:40]!r}")
    checked = {}
    for name, field in schema.items():
        if name not in body:
            if field.required:
                raise ApiError(400, f"field {name!r} is missing")
            continue
        checked[name] = _check(name, body[name], field)
    return checked


def _check(name: str, value: Any, field: Field) -> Any:
    if value is None:
        if field.nullable:
            return None
        raise ApiError(400, f"field {name!r} must not be null")
    if not _has_kind(value, field.kind):
        raise ApiError(400, f"field {name!r} must be {_KIND_NAMES[field.kind]}")
    if isinstance(value, str):
        if field.max_length is not None and len(value) > field.max_length:
            raise ApiError(400, f"field {name!r} is longer than {field.max_length} characters")
        if field.pattern is not None and not re.fullmatch(field.pattern, value):
            raise ApiError(400, f"field {name!r} has an invalid format")
    if isinstance(value, int | float) and not isinstance(value, bool):
        if value != value or value in (float("inf"), float("-inf")):
            raise ApiError(400, f"field {name!r} must be a finite number")
        if field.minimum is not None and value < field.minimum:
            raise ApiError(400, f"field {name!r} must be at least {field.minimum:g}")
        if field.maximum is not None and value > field.maximum:
            raise ApiError(400, f"field {name!r} must be at most {field.maximum:g}")
    if field.choices is not None and value not in field.choices:
        allowed = ", ".join(str(choice) for choice in field.choices)
        raise ApiError(400, f"field {name!r} must be one of: {allowed}")
    return float(value) if field.kind is float else value


_KIND_NAMES = {str: "a string", int: "an integer", float: "a number", bool: "true or false"}


def _has_kind(value: Any, kind: type) -> bool:
    if kind is bool:
        return isinstance(value, bool)
    if kind is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if kind is float:
        return isinstance(value, int | float) and not isinstance(value, bool)
    return isinstance(value, kind)
