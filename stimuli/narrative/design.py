"""The narrative design: story structures per complexity, cells, and random story plans.

A *plan* is everything an item is rendered from (its ``truth``): the character, the objects and
containers in introduction order, the sentences with their events, the focus object and the two
continuations. The sampler declares the answer from the structure's own table of final
locations; the simulator later replays the events and must agree, so the two bookkeepings check
each other.

A plan is drawn in two steps. :func:`draw_story` draws a template-neutral *story*: the
character, which object slots (indices into a template's object list) and containers appear,
which containers carry an adjective, and each sentence's wording. :func:`build_plan` then
writes it out with one template's nouns, so the same story can be told with standard,
pseudoword and improbable objects (matched items; the manipulation check compares them item by
item). The continuations are added by :mod:`tracktale.stimuli.narrative.pairs`.
"""

from __future__ import annotations

import functools
import hashlib
import json
import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from tracktale.errors import TracktaleError
from tracktale.stimuli import lexicons
from tracktale.stimuli.narrative.render import container_fields, variant_count

ADJECTIVE_UNITS = ("sentence", "container")
"""What ``--adjective-rate`` is a share of: story sentences carrying an adjective (the source
paper's "descriptive adjectives in ~30% of sentences") or containers described with one."""

# (kind, object slot, target container slot, source container slot or None)
EventSpec = tuple[str, int, int, int | None]


@dataclass(frozen=True)
class Structure:
    """The fixed event structure of one complexity level."""

    n_objects: int
    n_containers: int
    sentences: tuple[tuple[str, tuple[EventSpec, ...]], ...]
    final_slots: tuple[int, ...]
    """Container slot each object slot ends in, declared independently of the simulator."""


_INTRO = ("intro", ())
_PAUSE = ("pause", ())
STRUCTURES: dict[int, Structure] = {
    1: Structure(1, 1, (_INTRO, ("put_simple", (("put", 0, 0, None),)), _PAUSE), (0,)),
    2: Structure(
        1,
        2,
        (
            _INTRO,
            ("put_simple", (("put", 0, 0, None),)),
            ("move_plain", (("move", 0, 1, 0),)),
            _PAUSE,
        ),
        (1,),
    ),
    3: Structure(
        2,
        3,
        (
            _INTRO,
            ("put_notice", (("put", 0, 0, None), ("found", 1, 0, None))),
            ("move_curious", (("move", 0, 1, 0),)),
            ("move_then", (("move", 1, 2, 0),)),
            _PAUSE,
        ),
        (1, 2),
    ),
    4: Structure(
        3,
        3,
        (
            _INTRO,
            ("put_careful", (("put", 0, 0, None),)),
            ("notice_in", (("found", 1, 1, None),)),
            ("move_and_find", (("move", 1, 2, 1), ("found", 2, 2, None))),
            ("put_back", (("move", 2, 0, 2),)),
            _PAUSE,
        ),
        (0, 2, 0),
    ),
    5: Structure(
        4,
        4,
        (
            _INTRO,
            ("hidden", (("hidden", 3, 3, None),)),
            ("put_careful", (("put", 0, 0, None),)),
            ("notice_in", (("found", 1, 1, None),)),
            ("move_and_find", (("move", 1, 2, 1), ("found", 2, 2, None))),
            ("pickup_put", (("move", 2, 3, 2),)),
            ("move_named", (("move", 3, 1, 3),)),
            _PAUSE,
        ),
        (0, 2, 3, 1),
    ),
}

CELLS = tuple(
    f"C{level}.F{focus}"
    for level, structure in STRUCTURES.items()
    for focus in range(structure.n_objects)
)
"""The 11 design cells: complexity C1-C5 by focus object F0..F(n-1)."""


def parse_cell(cell: str) -> tuple[int, int]:
    """``"C3.F1"`` -> ``(3, 1)``.

    Raises:
        TracktaleError: For a cell outside :data:`CELLS`.
    """
    if cell not in CELLS:
        raise TracktaleError(f"unknown cell {cell!r} (choose from {', '.join(CELLS)})")
    level, focus = cell[1:].split(".F")
    return int(level), int(focus)


@functools.cache
def adjective_probability(level: int, rate: float, unit: str) -> float:
    """The chance that a container of a complexity-``level`` story is described by an adjective.

    Adjectives belong to containers and are kept through the story, so the share of sentences
    with one depends on how many containers each sentence names. For ``unit="sentence"`` the
    per-container chance q solves ``mean over sentences of 1 - (1 - q)^k = rate`` (k: distinct
    containers the sentence names; the opening and closing sentences name none), so stories of
    every level carry adjectives in ``rate`` of their sentences on average. A rate above what a
    structure allows (C1: one sentence in three names a container) gives q = 1.
    """
    if unit == "container" or rate <= 0:
        return rate
    counts = [
        len(_named_slots(frame, specs))
        for frame, specs in STRUCTURES[level].sentences
        if frame != "hidden"
    ]

    def share(q: float) -> float:
        return sum(1 - (1 - q) ** k for k in counts) / len(counts)

    if share(1.0) <= rate:
        return 1.0
    low, high = 0.0, 1.0
    for _ in range(60):  # bisection to well below any printed precision
        middle = (low + high) / 2
        low, high = (middle, high) if share(middle) < rate else (low, middle)
    return round((low + high) / 2, 12)


def _named_slots(frame: str, specs: tuple[EventSpec, ...]) -> set[int]:
    fields = container_fields(frame)
    named = set()
    for index, (_, _, target, source) in enumerate(specs):
        if f"t{index}" in fields:
            named.add(target)
        if f"s{index}" in fields and source is not None:
            named.add(source)
    return named


def draw_story(
    rng: random.Random,
    cell: str,
    n_words: int,
    *,
    characters: str,
    adjective_rate: float,
    adjective_unit: str,
) -> dict[str, Any]:
    """Draw a template-neutral story for ``cell``.

    Args:
        rng: The cell's random stream.
        cell: The design cell.
        n_words: Length of the object lists the slots index into.
        characters: The character pool (:data:`tracktale.stimuli.lexicons.CHARACTER_POOLS`).
        adjective_rate: Share of sentences (or containers) with an adjective.
        adjective_unit: ``sentence`` or ``container``.

    Returns:
        ``character``, ``object_slots``, ``containers`` (noun, adjective) and ``variants``.
    """
    level, _ = parse_cell(cell)
    structure = STRUCTURES[level]
    character = rng.choice(lexicons.characters(characters))
    slots = rng.sample(range(n_words), structure.n_objects)
    boxes = rng.sample(lexicons.containers(), structure.n_containers)
    adjective_pool = rng.sample(lexicons.adjectives(), structure.n_containers)
    chance = adjective_probability(level, adjective_rate, adjective_unit)
    containers = [
        {"noun": noun, "adjective": adjective if rng.random() < chance else None}
        for noun, adjective in zip(boxes, adjective_pool, strict=True)
    ]
    variants = [rng.randrange(variant_count(frame)) for frame, _ in structure.sentences]
    return {
        "character": {"name": character.name, "pronoun": character.pronoun},
        "object_slots": slots,
        "containers": containers,
        "variants": variants,
    }


def story_key(story: dict[str, Any], salt: str = "") -> str:
    """A short content hash of a story (the same for every template that tells it)."""
    canonical = json.dumps([salt, story], sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:16]


def build_plan(
    story: dict[str, Any], cell: str, nouns: Sequence[lexicons.Noun], key: str
) -> tuple[dict[str, Any], str]:
    """Write a story out with one template's nouns, and declare its answer.

    Returns:
        The plan without its continuations, and the declared answer (a container noun).
    """
    level, focus = parse_cell(cell)
    structure = STRUCTURES[level]
    words = [nouns[slot] for slot in story["object_slots"]]
    boxes = [container["noun"] for container in story["containers"]]
    sentences = [
        {"frame": frame, "variant": variant, "events": [_event(s, words, boxes) for s in specs]}
        for (frame, specs), variant in zip(structure.sentences, story["variants"], strict=True)
    ]
    plan = {
        "character": dict(story["character"]),
        "objects": [{"noun": n.word, "article": n.article, "kind": n.kind} for n in words],
        "containers": [dict(container) for container in story["containers"]],
        "sentences": sentences,
        "focus_object": words[focus].word,
        "story_key": key,
    }
    return plan, boxes[structure.final_slots[focus]]


def _event(spec: EventSpec, nouns: Sequence[lexicons.Noun], boxes: Sequence[str]) -> dict[str, Any]:
    kind, obj, target, source = spec
    event = {"kind": kind, "object": nouns[obj].word, "target": boxes[target]}
    if source is not None:
        event["source"] = boxes[source]
    return event
