"""The stimulus records, declared once: an item's JSON line and a stimulus set's manifest.

:class:`ItemData` is the shape of one line of ``items.jsonl`` (and of
:meth:`tracktale.item.Item.to_dict`), checked strictly (no coercion, no unknown fields, finite
numbers); :func:`item_problem` says what is wrong in the words the item reader has always used
(``item field 'choice.good' must be a string``). Validation only checks: the item is built
from the data as given, so its canonical JSON, and with it its content id, never depends on
the schema (``tests/tracktale/test_byte_identity.py``). The paradigms' own payloads (the
``truth`` of each kind of item) are declared in :mod:`tracktale.schema.payloads`.

:class:`Manifest` is a record like those of :mod:`tracktale.schema.records`: its validator is
derived (:func:`tracktale.schema.derive.build_record`).
"""

import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Annotated, Any, NotRequired

import pydantic
from pydantic import ConfigDict, TypeAdapter, with_config
from pydantic_core import ErrorDetails
from typing_extensions import TypedDict

from tracktale.schema.fields import number, text
from tracktale.schema.records import ROLES, Role

STRICT_DATA = ConfigDict(strict=True, extra="forbid", allow_inf_nan=False)
"""As :data:`tracktale.schema.derive.STRICT`, for the ``TypedDict`` shapes of JSON data."""

ConditionValue = str | int | float | bool
"""A design factor's value: a JSON scalar (strictly: ``true`` is not a number)."""


@with_config(STRICT_DATA)
class ChoiceData(TypedDict):
    """An item's ``choice``: see :class:`tracktale.item.ChoicePair`."""

    prefix: str
    good: str
    bad: str
    neutral_prefix: NotRequired[str | None]
    question: NotRequired[str | None]


@with_config(STRICT_DATA)
class MessageData(TypedDict):
    """One chat turn of an item's ``messages``."""

    role: str
    content: str


@with_config(STRICT_DATA)
class ItemData(TypedDict):
    """One item as JSON: see :class:`tracktale.item.Item` for what each field means."""

    item_id: str
    paradigm: str
    role: Role
    condition: dict[str, ConditionValue]
    context: str
    question: NotRequired[str | None]
    answer: str
    choice: NotRequired[ChoiceData | None]
    prompt: NotRequired[str | None]
    messages: NotRequired[list[MessageData] | None]
    truth: NotRequired[dict[str, Any]]
    meta: NotRequired[dict[str, Any]]


ITEM_FIELDS: tuple[str, ...] = tuple(ItemData.__annotations__)
"""The item's fields in declaration order (the order :class:`tracktale.item.Item` has)."""
CHOICE_FIELDS: tuple[str, ...] = tuple(ChoiceData.__annotations__)

ITEM_ADAPTER: TypeAdapter[ItemData] = TypeAdapter(ItemData)

_WHAT = {
    "item_id": "a string",
    "paradigm": "a string",
    "role": f"one of {', '.join(ROLES)}",
    "condition": "an object of strings, numbers and booleans",
    "context": "a string",
    "question": "a string or null",
    "answer": "a string",
    "choice": "an object or null",
    "prompt": "a string or null",
    "messages": "a list of {role, content} objects",
    "truth": "an object",
    "meta": "an object",
}
"""What each field must be, as the messages say it."""


def check_item_data(data: Any) -> str | None:
    """The first problem of one item's plain data, or ``None`` when it is a valid item."""
    try:
        ITEM_ADAPTER.validate_python(data)
    except pydantic.ValidationError as error:
        return item_problem(error.errors(include_url=False), data)
    return None


def item_problem(errors: list[ErrorDetails], data: Any) -> str:
    """The message for pydantic's ``errors`` of item ``data``.

    Unknown fields come first, then missing ones, then the first wrong value in field order.
    """
    if not isinstance(data, Mapping):
        return f"an item must be a JSON object, got {type(data).__name__}"
    unknown = sorted(str(e["loc"][0]) for e in errors if _top(e, "extra_forbidden"))
    if unknown:
        return f"unknown item field {unknown[0]!r}"
    missing = next((e for e in errors if _top(e, "missing")), None)
    if missing is not None:
        return f"item field {missing['loc'][0]!r} is missing"
    first = errors[0]
    name = str(first["loc"][0])
    if name == "choice" and len(first["loc"]) > 1:
        return _choice_problem(errors, data["choice"])
    if name == "role" and not isinstance(first["input"], str):
        return "item field 'role' must be a string"
    return f"item field {name!r} must be {_WHAT[name]}"


def _top(error: ErrorDetails, kind: str) -> bool:
    return error["type"] == kind and len(error["loc"]) == 1


def _choice_problem(errors: list[ErrorDetails], choice: Mapping[str, Any]) -> str:
    unknown = sorted(set(choice) - set(CHOICE_FIELDS))
    if unknown:
        return f"item field 'choice' must be free of unknown fields (found {unknown})"
    inner = str(next(e for e in errors if e["loc"][0] == "choice")["loc"][1])
    required = inner in ChoiceData.__required_keys__
    return f"item field 'choice.{inner}' must be {'a string' if required else 'a string or null'}"


FORMAT = "tracktale-stimulus-set/1"
"""The on-disk format a manifest names."""


@dataclass(frozen=True)
class Manifest:
    """What produced a stimulus set and how to recognise it.

    Attributes:
        paradigm: The paradigm's registry name.
        protocol: The protocol preset (e.g. ``model`` or ``human``).
        generator: The generating module.
        generator_version: tracktale's version and the paradigm generator's revision.
        seed: The seed the set was generated with.
        config: The full resolved generation config (defaults included).
        counts: Number of items per design cell.
        n_items: Number of items.
        items_sha256: sha256 of ``items.jsonl``.
        format: The on-disk format version.
    """

    paradigm: str
    protocol: str
    generator: str
    generator_version: str
    seed: int
    config: Mapping[str, Any]
    counts: Mapping[str, Annotated[int, *number(minimum=0)]]
    n_items: Annotated[int, *number(minimum=0)]
    items_sha256: Annotated[str, *text(pattern="[0-9a-f]{64}")]
    format: str = FORMAT

    def to_json(self) -> str:
        """The manifest as indented, key-sorted JSON (stable bytes)."""
        return json.dumps(asdict(self), sort_keys=True, indent=2, ensure_ascii=False) + "\n"
