"""The paradigms' payloads, declared once: what each kind of item keeps in its ``truth``.

An item's envelope (:class:`tracktale.schema.stimulus.ItemData`) is the same for every
paradigm; its ``truth`` is the paradigm's own ground truth. Each paradigm's verifier checks a
stored item against these shapes first (:func:`truth_problems`), so that a malformed truth is
named by its key (``truth field 'states.3.opened' ...``) before the simulator is replayed.
Like the envelope, a payload is only checked, never converted: the canonical JSON and so the
content id stay what the generator wrote.
"""

import functools
from collections.abc import Mapping
from typing import Any, NotRequired

import pydantic
from pydantic import TypeAdapter, with_config
from typing_extensions import TypedDict

from tracktale.schema.stimulus import STRICT_DATA

Number = int | float
"""An integer or a float value (strictly: ``true`` is neither)."""


@with_config(STRICT_DATA)
class Character(TypedDict):
    """A story's protagonist."""

    name: str
    pronoun: str


@with_config(STRICT_DATA)
class StoryObject(TypedDict):
    """An object of a narrative story (``kind``: its lexical class, where the lexicon has one)."""

    noun: str
    article: str
    kind: NotRequired[str | None]


@with_config(STRICT_DATA)
class Container(TypedDict):
    """A container of a narrative story, with the adjective it is described with (if any)."""

    noun: str
    adjective: str | None


@with_config(STRICT_DATA)
class StoryEvent(TypedDict):
    """One event of a sentence: ``put`` an object somewhere, or ``move`` it (with a source)."""

    kind: str
    object: str
    target: str
    source: NotRequired[str]


@with_config(STRICT_DATA)
class Sentence(TypedDict):
    """One sentence of a story plan: its frame, the frame's variant and its events."""

    frame: str
    variant: int
    events: list[StoryEvent]


@with_config(STRICT_DATA)
class Transfer(TypedDict):
    """A continuation's claim: the object goes from ``source`` to ``target``."""

    source: str
    target: str


@with_config(STRICT_DATA)
class Continuations(TypedDict):
    """The consistent (``good``) and the inconsistent (``bad``) continuation."""

    good: Transfer
    bad: Transfer


@with_config(STRICT_DATA)
class NarrativeStory(TypedDict):
    """The truth of a narrative ``main`` or ``practice`` item: the story's plan."""

    character: Character
    objects: list[StoryObject]
    containers: list[Container]
    sentences: list[Sentence]
    focus_object: str
    story_key: str
    lure: str
    continuations: Continuations


@with_config(STRICT_DATA)
class NarrativeFiller(TypedDict):
    """The truth of a narrative filler: its frame, facts, the fact asked and the distractor."""

    frame: str
    character: Character
    facts: dict[str, str]
    asked: str
    distractor: str


@with_config(STRICT_DATA)
class BoxKey(TypedDict):
    """An action (``Step-t``: the box opened, the key obtained) or the example's pair."""

    box: int
    key: int


@with_config(STRICT_DATA)
class BoxWords(TypedDict):
    """The words of the box world (``OPENED(BOX-3)``), natural or synthetic."""

    box_functor: str
    key_functor: str
    box_name: str
    key_name: str


@with_config(STRICT_DATA)
class BoxState(TypedDict):
    """The simulated state after a step: which boxes are open, which keys obtained."""

    opened: list[bool]
    obtained: list[bool]


@with_config(STRICT_DATA)
class BoxesTruth(TypedDict):
    """The truth of a boxes item: the instance's plan, its simulated states and the probe."""

    n_boxes: int
    box_keys: list[int]
    compressed: list[BoxKey]
    actions: list[BoxKey]
    words: BoxWords
    example: BoxKey
    distractors: list[str] | None
    states: list[BoxState]
    instruction: str
    negated: bool
    synthetic: dict[str, str]
    distractor_source: str | None
    probe_step: int
    queried: list[str]
    expected: list[bool]


@with_config(STRICT_DATA)
class Inputs(TypedDict):
    """The procedure's two inputs."""

    x: Number
    y: Number


@with_config(STRICT_DATA)
class ArithmeticTruth(TypedDict):
    """The truth of an arithmetic item: inputs, steps, our IEEE reference and the paper's."""

    inputs: Inputs
    steps: list[str]
    reference: str
    flags: dict[str, list[int]]
    edge_case: bool
    paper_reference: str
    paper_variable: int
    paper_returned_assigned: bool
    paper_skipped: list[int]
    references_differ: bool


@functools.cache
def _adapter(payload: type) -> TypeAdapter[Any]:
    return TypeAdapter(payload)


def truth_problems(truth: Mapping[str, Any], payload: type) -> list[str]:
    """What is wrong with an item's ``truth`` as the payload ``payload`` declares it.

    Args:
        truth: The item's truth.
        payload: One of the payload ``TypedDict`` classes of this module.

    Returns:
        One sentence naming the first wrong key (``truth field 'states.0.opened' is
        missing``), or nothing when the truth has the declared shape.
    """
    try:
        _adapter(payload).validate_python(dict(truth))
    except pydantic.ValidationError as error:
        first = error.errors(include_url=False)[0]
        where = ".".join(str(part) for part in first["loc"])
        phrases = {"missing": "is missing", "extra_forbidden": "is not a field of the payload"}
        phrase = phrases.get(first["type"], f"is invalid ({first['msg'].lower()})")
        return [f"the item's truth is malformed: truth field {where!r} {phrase}"]
    return []
