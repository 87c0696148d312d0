r"""Validation of request bodies, in one place: JSON, types, sizes, allowed values, text.

Every API endpoint (and the lab mode, which writes through the same rules) declares its body
as one of the schemas below, a mapping of :class:`Field`, and calls :func:`validate` on what
:func:`parse_json` decoded; anything else is refused with :class:`ApiError` (HTTP 4xx and a
one-line message naming the field). A typed schema layer can replace this module as a whole:
nothing else in the study checks a body's shape.

Text rules, for every string of every body: it must be valid Unicode (a lone surrogate such
as ``"\udfff"`` cannot be stored or exported: 422), and a field that holds an answer may not
be blank (only whitespace: 422). Other characters (NUL, bidirectional overrides, CR/LF) are
stored as given; exports make them safe (:mod:`.export`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from tracktale.experiment.instructions import GENDERS
from tracktale.trial import TRIAL_TASKS


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
        blank: A string of only whitespace is allowed.
    """

    kind: type
    required: bool = True
    nullable: bool = False
    max_length: int | None = None
    pattern: str | None = None
    choices: tuple[Any, ...] | None = None
    minimum: float | None = None
    maximum: float | None = None
    blank: bool = True


IDENTIFIER = r"[A-Za-z0-9_-]{1,64}"
"""Prolific ids, client trial ids and similar opaque identifiers."""
MAX_MS = 3_600_000.0
"""Longest time a body may report (the server flags times beyond the study's limits)."""

SESSION_FIELDS = {
    "prolific_pid": Field(str, pattern=IDENTIFIER),
    "study_id": Field(str, required=False, nullable=True, pattern=IDENTIFIER),
    "session_id": Field(str, required=False, nullable=True, pattern=IDENTIFIER),
    "source": Field(str, required=False, choices=("online", "simulated")),
}
CONSENT_FIELDS = {"consent": Field(bool)}
SERVE_FIELDS = {"trial_index": Field(int, minimum=0, maximum=10_000)}
TRIAL_FIELDS = {
    "client_trial_id": Field(str, pattern=r"[A-Za-z0-9_-]{8,64}"),
    "trial_index": Field(int, minimum=0, maximum=10_000),
    "item_id": Field(str, pattern=IDENTIFIER),
    "task": Field(str, choices=TRIAL_TASKS),
    "response": Field(str, nullable=True, max_length=200, blank=False),
    "timed_out": Field(bool),
    "reading_time_ms": Field(float, minimum=0, maximum=MAX_MS),
    "reading_timed_out": Field(bool),
    "response_time_ms": Field(float, nullable=True, minimum=0, maximum=MAX_MS),
    "screen_width": Field(int, minimum=0, maximum=100_000),
    "screen_height": Field(int, minimum=0, maximum=100_000),
    "blur_count": Field(int, minimum=0, maximum=100_000),
    "hidden_count": Field(int, minimum=0, maximum=100_000),
    # Accepted from pages queued before the server counted restarts itself; ignored.
    "restarts": Field(int, required=False, minimum=0, maximum=10_000),
}
SURVEY_FIELDS = {
    "age": Field(int, nullable=True, minimum=18, maximum=120),
    "gender": Field(str, choices=GENDERS),
    "native_language": Field(str, max_length=64, pattern=r"\S.*", blank=False),
    "attentive": Field(bool),
    "no_ai_assistance": Field(bool),
}


def parse_json(raw: bytes) -> Any:
    """Decode a JSON body.

    Raises:
        ApiError: 400 for anything that is not JSON, including bodies nested too deeply
            to decode (Python's decoder would raise ``RecursionError``).
    """
    try:
        return json.loads(raw)
    except RecursionError:
        raise ApiError(400, "the body is nested too deeply") from None
    except (ValueError, TypeError):  # includes undecodable bytes
        raise ApiError(400, "the body is not valid JSON") from None


def validate(body: Any, schema: Mapping[str, Field]) -> dict[str, Any]:
    """Check a decoded JSON body against a schema.

    Returns:
        The known fields that are present (absent optional fields are left out).

    Raises:
        ApiError: 400 naming the first problem (not an object, unknown, missing or invalid);
            422 for text that is not valid Unicode or an answer that is blank.
    """
    if not isinstance(body, dict):
        raise ApiError(400, "the request body must be a JSON object")
    unknown = sorted(set(body) - set(schema))
    if unknown:
        raise ApiError(400, f"unknown field {_printable(unknown[0])[:40]!r}")
    checked = {}
    for name, field in schema.items():
        if name not in body:
            if field.required:
                raise ApiError(400, f"field {name!r} is missing")
            continue
        checked[name] = _check(name, body[name], field)
    return checked


def is_valid_unicode(text: str) -> bool:
    """Whether ``text`` encodes as UTF-8 (no lone surrogates)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _printable(text: str) -> str:
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def _check(name: str, value: Any, field: Field) -> Any:
    if value is None:
        if field.nullable:
            return None
        raise ApiError(400, f"field {name!r} must not be null")
    if not _has_kind(value, field.kind):
        raise ApiError(400, f"field {name!r} must be {_KIND_NAMES[field.kind]}")
    if isinstance(value, str):
        _check_text(name, value, field)
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


def _check_text(name: str, value: str, field: Field) -> None:
    if not is_valid_unicode(value):
        raise ApiError(422, f"field {name!r} is not valid Unicode (a lone surrogate)")
    if field.max_length is not None and len(value) > field.max_length:
        raise ApiError(400, f"field {name!r} is longer than {field.max_length} characters")
    if not field.blank and not value.strip():
        raise ApiError(422, f"field {name!r} is blank")
    if field.pattern is not None and not re.fullmatch(field.pattern, value):
        raise ApiError(400, f"field {name!r} has an invalid format")


_KIND_NAMES = {str: "a string", int: "an integer", float: "a number", bool: "true or false"}


def _has_kind(value: Any, kind: type) -> bool:
    if kind is bool:
        return isinstance(value, bool)
    if kind is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if kind is float:
        return isinstance(value, int | float) and not isinstance(value, bool)
    return isinstance(value, kind)
