"""The ``Item`` contract: one stimulus with its ground truth, as every stage reads it.

An item carries everything a human trial or a model prompt needs, already rendered, so no later
stage re-derives text from the design: the story people read (``context``), the explicit probe
(``question``/``answer``), the implicit pair of continuations (``choice``), the model prompt for
generation (``prompt`` as plain text, ``messages`` as chat turns) and the simulator's ground
truth (``truth``). Analyses group by ``condition``.

Whitespace convention for continuations: the prefix has no trailing space and each continuation
starts with its own separating space (``" Later, ..."``), so ``prefix + good`` is the full text
and tokenizers that merge a leading space into the next word see it on the continuation's side.

``item_id`` is a hash of the item's content, so an item edited by hand no longer matches its id.
The item's JSON shape is declared in :mod:`tracktale.schema.stimulus` (``ItemData``, which
:func:`item_from_dict` validates against) and each paradigm's ``truth`` in
:mod:`tracktale.schema.payloads`.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from tracktale.errors import TracktaleError
from tracktale.schema import records
from tracktale.schema.stimulus import CHOICE_FIELDS, ConditionValue, check_item_data

ROLES = records.ROLES
"""``main`` items enter the analyses; ``filler`` and ``practice`` items only the human study."""


@dataclass(frozen=True, slots=True)
class ChoicePair:
    """Two continuations of one prefix: the implicit task (2AFC for people, log-probs for models).

    Attributes:
        prefix: The shared context, without trailing whitespace.
        good: The continuation consistent with the world state, with its leading space.
        bad: The inconsistent continuation, with its leading space.
        neutral_prefix: A prefix without the informative events, for scoring the model's prior
            for each continuation (calibration); ``None`` where it does not apply.
        question: For comprehension questions, the question shown above the two options;
            ``None`` where the options are continuations of the story.
    """

    prefix: str
    good: str
    bad: str
    neutral_prefix: str | None = None
    question: str | None = None

    @property
    def prompt_good(self) -> str:
        """The full text with the good continuation."""
        return self.prefix + self.good

    @property
    def prompt_bad(self) -> str:
        """The full text with the bad continuation."""
        return self.prefix + self.bad


@dataclass(frozen=True, slots=True)
class Item:
    """One stimulus with its ground truth.

    Attributes:
        item_id: Content hash (see :func:`content_id`); stable across runs and machines.
        paradigm: The paradigm that generated it (``narrative``, ``boxes``, ``arithmetic``).
        role: One of :data:`ROLES`.
        condition: The design factors analyses group by (flat, JSON scalars only).
        context: The text people read and models condition on (story, procedure, ...).
        question: The explicit probe shown to people (e.g. ``"The key is in the"``).
        answer: The expected answer of the explicit probe.
        choice: The implicit task's two continuations, or ``None``.
        prompt: The full plain-text model prompt for generation (instruction, context, question).
        messages: The same prompt as chat turns (``{"role", "content"}`` dicts), for chat
            templates; may hold several rounds.
        truth: The simulator's ground truth (events, final states, reference values, flags).
        meta: Descriptive details that are not design factors (names, lexical choices).
    """

    item_id: str
    paradigm: str
    role: str
    condition: Mapping[str, ConditionValue]
    context: str
    question: str | None
    answer: str
    choice: ChoicePair | None = None
    prompt: str | None = None
    messages: tuple[Mapping[str, str], ...] | None = None
    truth: Mapping[str, Any] = field(default_factory=dict)
    meta: Mapping[str, Any] = field(default_factory=dict)
    _line: str | None = field(default=None, init=False, repr=False, compare=False)
    """The canonical JSON line, computed once where the item is created or read (items are
    immutable), so writing a large set does not serialise every item a second time."""

    @classmethod
    def create(cls, **fields: Any) -> Item:
        """Build an item and give it its content id.

        Args:
            **fields: Every attribute except ``item_id``.

        Returns:
            The item, validated.
        """
        data = cls(item_id="", **fields).to_dict()
        item = item_from_dict(data, check_id=False)  # validated, with an empty id for now
        head, tail = _halves(data)
        item_id = _hash(head + tail)
        object.__setattr__(item, "item_id", item_id)
        object.__setattr__(item, "_line", head + _ID_MEMBER + canonical_json(item_id) + tail)
        return item

    def to_dict(self) -> dict[str, Any]:
        """The item as plain JSON-ready data (the JSONL line's content)."""
        return {
            "item_id": self.item_id,
            "paradigm": self.paradigm,
            "role": self.role,
            "condition": dict(self.condition),
            "context": self.context,
            "question": self.question,
            "answer": self.answer,
            "choice": None if self.choice is None else _choice_to_dict(self.choice),
            "prompt": self.prompt,
            "messages": None if self.messages is None else [dict(m) for m in self.messages],
            "truth": plain_data(self.truth),
            "meta": plain_data(self.meta),
        }

    def to_json(self) -> str:
        """One canonical JSON line (sorted keys, no extra whitespace)."""
        if self._line is None:
            line = canonical_json(self.to_dict())
            object.__setattr__(self, "_line", line)
            return line
        return self._line


_ENCODER = json.JSONEncoder(
    sort_keys=True, ensure_ascii=False, separators=(",", ":"), allow_nan=False
)


def canonical_json(data: Any) -> str:
    """JSON with sorted keys and compact separators: equal data gives equal bytes."""
    # What json.dumps does with these arguments, without building an encoder per call.
    return _ENCODER.encode(data)


def content_id(data: Mapping[str, Any]) -> str:
    """The item id for ``data``: sha256 of the canonical JSON of everything but the id.

    Args:
        data: An item's dict, with or without ``item_id`` (it is ignored).

    Returns:
        The first 16 hex digits of the hash.
    """
    payload = {key: value for key, value in data.items() if key != "item_id"}
    return _hash(canonical_json(payload))


def _hash(payload: str) -> str:
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:16]


_BEFORE_ID = ("answer", "choice", "condition", "context")
"""The item fields whose names sort before ``item_id``: the id's member follows theirs."""
_ID_MEMBER = ',"item_id":'


def _halves(data: Mapping[str, Any]) -> tuple[str, str]:
    """The canonical JSON of an item's ``data`` without ``item_id``, cut where the id goes.

    Keys are sorted, so the canonical JSON of a whole item is the members of
    :data:`_BEFORE_ID`, then ``item_id``'s, then the rest: ``head + tail`` is the payload
    :func:`content_id` hashes and ``head + id member + tail`` the item's line. The members
    are written one by one with the encoder's own string function, byte for byte what
    :func:`canonical_json` gives, so that a chat message repeating the prompt (the usual case)
    is encoded once. ``data`` must be a validated item's :meth:`Item.to_dict`.
    """
    prompt = data["prompt"]
    prompt_json = _optional_string(prompt)
    messages = data["messages"]
    if messages is None:
        messages_json = "null"
    else:
        messages_json = (
            "["
            + ",".join(
                '{"content":'
                + (prompt_json if message["content"] is prompt else _string(message["content"]))
                + ',"role":'
                + _string(message["role"])
                + "}"
                for message in messages
            )
            + "]"
        )
    head = _object_start(
        ("answer", _string(data["answer"])),
        ("choice", canonical_json(data["choice"])),
        ("condition", canonical_json(data["condition"])),
        ("context", _string(data["context"])),
    )
    tail = _object_end(
        ("messages", messages_json),
        ("meta", canonical_json(data["meta"])),
        ("paradigm", _string(data["paradigm"])),
        ("prompt", prompt_json),
        ("question", _optional_string(data["question"])),
        ("role", _string(data["role"])),
        ("truth", canonical_json(data["truth"])),
    )
    return head, tail


_string = json.encoder.encode_basestring
"""How the canonical encoder writes a string (``ensure_ascii=False``): the same function."""


def _object_start(*members: tuple[str, str]) -> str:
    """``{"a":1,"b":2`` (keys in order; values already JSON)."""
    return "{" + ",".join(f'"{key}":{value}' for key, value in members)


def _object_end(*members: tuple[str, str]) -> str:
    """``,"c":3,"d":4}``: the members that follow others in an object."""
    return "".join(f',"{key}":{value}' for key, value in members) + "}"


def _optional_string(value: str | None) -> str:
    return "null" if value is None else _string(value)


def item_from_dict(data: Mapping[str, Any], *, check_id: bool = True) -> Item:
    """Validate plain data against the declared item (``ItemData``) and build an ``Item``.

    The item is built from ``data`` as given, so its canonical JSON is the data's.

    Args:
        data: The parsed JSON of one item.
        check_id: Whether ``item_id`` must equal the content hash.

    Returns:
        The item.

    Raises:
        TracktaleError: Naming the first field that is missing, unknown or of the wrong type, or
            saying that the id does not match the content.
    """
    problem = check_item_data(data)
    if problem is not None:
        raise TracktaleError(problem)
    item = Item(
        item_id=data["item_id"],
        paradigm=data["paradigm"],
        role=data["role"],
        condition=dict(data["condition"]),
        context=data["context"],
        question=data.get("question"),
        answer=data["answer"],
        choice=_choice_from(data.get("choice")),
        prompt=data.get("prompt"),
        messages=_messages_from(data.get("messages")),
        truth=dict(data.get("truth", {})),
        meta=dict(data.get("meta", {})),
    )
    if check_id:
        _check_id(item)
    return item


def _check_id(item: Item) -> None:
    """Raise unless ``item_id`` is the content hash; keep the canonical line.

    One serialisation gives both the line (kept for writing and for the reader's
    canonical-form check) and, without the id's member, the hashed payload.
    """
    head, tail = _halves(item.to_dict())
    if item.item_id != _hash(head + tail):
        raise TracktaleError(
            f"item_id {item.item_id!r} does not match the item's content (was it edited by hand?)"
        )
    object.__setattr__(item, "_line", head + _ID_MEMBER + canonical_json(item.item_id) + tail)


def _choice_to_dict(choice: ChoicePair) -> dict[str, str | None]:
    return {name: getattr(choice, name) for name in CHOICE_FIELDS}


def _choice_from(data: Mapping[str, Any] | None) -> ChoicePair | None:
    if data is None:
        return None
    return ChoicePair(
        data["prefix"], data["good"], data["bad"], data.get("neutral_prefix"), data.get("question")
    )


def _messages_from(data: list[Mapping[str, str]] | None) -> tuple[Mapping[str, str], ...] | None:
    return None if data is None else tuple(dict(m) for m in data)


_SCALARS = frozenset({str, int, float, bool, type(None)})


def plain_data(value: Any) -> Any:
    """Deep-copy mappings and sequences into JSON-ready dicts (string keys) and lists.

    Scalars and anything else are returned as they are. Items' truth and meta are copied
    through it, and so are the details and scores of a stored model result
    (:mod:`tracktale.models.store`).
    """
    # Exact-type checks first: large truths are long lists of scalars, and the ABC checks
    # below cost more than the copy itself.
    kind = type(value)
    if kind in _SCALARS:
        return value
    if kind is list or kind is tuple:
        return [inner if type(inner) in _SCALARS else plain_data(inner) for inner in value]
    if kind is dict or isinstance(value, Mapping):
        return {str(key): plain_data(inner) for key, inner in value.items()}
    if isinstance(value, list | tuple):
        return [plain_data(inner) for inner in value]
    return value
