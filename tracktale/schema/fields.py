r"""How a record's fields are declared: types and rules in ``Annotated``, read by pydantic.

A record is a frozen dataclass whose field annotations say everything about the field: the
type and the values it may hold (``Literal``, :func:`number`), how it is stored
(:class:`Stored`) and, for the fields a participant's browser sends, the limits the study
server holds them to (:class:`Sent`). Everything else (request validation, SQL columns,
export types, JSON Schema) is derived from these annotations by :mod:`tracktale.schema.derive`.

Text rules keep the order the study server has always checked them in: valid Unicode (a lone
surrogate such as ``"\udfff"`` is refused), then the length, then blankness, then the format.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import AfterValidator, BeforeValidator, Field
from pydantic_core import PydanticCustomError

IDENTIFIER = r"[A-Za-z0-9_-]{1,64}"
"""Prolific ids, item ids and similar opaque identifiers."""
MAX_MS = 3_600_000.0
"""Longest time a request may report (the server flags times beyond the study's limits)."""
MAX_QUEUED_MS = 30 * 86_400_000.0
"""Longest time an answer may say it waited in the page's outbox (30 days; the page sends
no more)."""


@dataclass(frozen=True)
class Stored:
    """How a text field is stored.

    Attributes:
        length: The column's length (text fields without one get 128 characters).
        free_text: Unlimited text that may hold NUL characters (see ``experiment.tables``).
    """

    length: int | None = None
    free_text: bool = False


FREE_TEXT = Stored(free_text=True)


class Sent:
    """Marks a field the participant's browser sends, with the limits the API applies.

    The record's own rules (type, choices, sign) hold as well; these come on top, in order.
    """

    def __init__(self, *rules: Any) -> None:
        self.rules = rules

    def __repr__(self) -> str:
        return f"Sent{self.rules!r}"


def _valid_unicode(value: Any) -> Any:
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise PydanticCustomError("string_unicode", "is not valid Unicode") from None
    return value


VALID_UNICODE = BeforeValidator(_valid_unicode)
"""Refuses a string that cannot be stored (a lone surrogate), before any other rule; pydantic
itself only notices where it inspects the text (a length limit)."""


def _not_blank(value: str | None) -> str | None:
    if value is not None and not value.strip():
        raise PydanticCustomError("blank", "is blank")
    return value


def _matching(pattern: str) -> Callable[[str | None], str | None]:
    compiled = re.compile(pattern)

    def check(value: str | None) -> str | None:
        if value is not None and compiled.fullmatch(value) is None:
            raise PydanticCustomError("text_format", "has an invalid format")
        return value

    return check


def text(
    max_length: int | None = None, pattern: str | None = None, blank: bool = True
) -> tuple[Any, ...]:
    """The rules of a text field, for ``Annotated[str, *text(...)]``.

    Args:
        max_length: Longest text allowed.
        pattern: A (Python) regular expression the whole text must match.
        blank: Whether only whitespace is allowed.
    """
    rules: list[Any] = []
    if max_length is not None:
        rules.append(Field(max_length=max_length))
    if not blank:
        rules.append(AfterValidator(_not_blank))
    if pattern is not None:
        # Checked with Python's re.fullmatch, as ever; the JSON Schema gets the anchored form.
        rules.append(AfterValidator(_matching(pattern)))
        rules.append(Field(json_schema_extra={"pattern": f"^(?:{pattern})$"}))
    return tuple(rules)


MAX_PROBED = 20
"""Most intermediate values one trial may carry (:func:`probed_values`)."""
_PROBED_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,15}")


def _probed_list(value: str | None) -> str | None:
    import json

    if value is None:
        return value
    try:
        entries = json.loads(value)
    except ValueError:
        entries = None
    names: list[str] = []
    ok = isinstance(entries, list) and 0 < len(entries) <= MAX_PROBED
    for entry in entries if ok else []:
        ok = (
            isinstance(entry, dict)
            and set(entry) == {"variable", "value"}
            and isinstance(entry["variable"], str)
            and _PROBED_NAME.fullmatch(entry["variable"]) is not None
            and entry["variable"] not in names
            and isinstance(entry["value"], str)
            and len(entry["value"]) <= 40
        )
        if not ok:
            break
        names.append(entry["variable"])
    if not ok:
        raise PydanticCustomError(
            "probed_values",
            "is not a JSON list of 1 to {most} distinct {{variable, value}} objects",
            {"most": MAX_PROBED},
        )
    return value


def probed_values() -> tuple[Any, ...]:
    """The rules of a field of typed intermediate values (the JSON text of a list).

    The text is a JSON list of 1 to :data:`MAX_PROBED` objects ``{"variable": "S3", "value":
    "12"}``: distinct variable names of at most 16 letters, digits or ``_``, each value the
    typed text of at most 40 characters (``""`` where the box was left empty); valid Unicode
    is checked first, as for every text the browser sends.
    """
    return (Field(max_length=4000), AfterValidator(_probed_list))


def number(minimum: float | None = None, maximum: float | None = None) -> tuple[Any, ...]:
    """The bounds of a number field, for ``Annotated[int, *number(...)]``."""
    return (Field(ge=minimum, le=maximum),)
