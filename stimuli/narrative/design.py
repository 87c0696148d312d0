"""The narrative design: story structures per complexity, cells, and random story plans.

A *plan* is everything an item is rendered from (its ``truth``): the character, the objects and
containers in introduction order, the sentences with their events, the focus object and the two
continuations. The sampler declares the answer from the structure's own table of final
locations; the simulator later replays the events and must agree, so the two bookkeepings check
each other.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tracktale.errors import TracktaleError
from tracktale.stimuli import lexicons
from tracktale.stimuli.narrative.render import variant_count
from tracktale.stimuli.narrative.world import Event, simulate

LURES = (
    "any",
    "previous_location",
    "other_object_location",
    "mentioned_empty",
    "unmentioned_container",
)
"""Lure policies: ``any`` draws the bad continuation's container uniformly from every container
but the true one (the source paper's structure); the others force one kind of wrong location."""

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


def sample_plan(
    rng: random.Random,
    cell: str,
    template: str,
    *,
    adjective_rate: float,
    lure: str,
    minimal_pair: bool,
) -> tuple[dict[str, Any], str]:
    """Draw one story plan for ``cell`` and declare its answer.

    Returns:
        The plan (the item's ``truth``) and the declared answer (a container noun).

    Raises:
        TracktaleError: If the requested lure kind cannot occur in this cell.
    """
    level, focus = parse_cell(cell)
    structure = STRUCTURES[level]
    character = rng.choice(lexicons.characters())
    nouns = rng.sample(lexicons.objects(template), structure.n_objects)
    boxes = rng.sample(lexicons.containers(), structure.n_containers)
    adjective_pool = rng.sample(lexicons.adjectives(), structure.n_containers)
    containers = [
        {"noun": noun, "adjective": adjective if rng.random() < adjective_rate else None}
        for noun, adjective in zip(boxes, adjective_pool, strict=True)
    ]
    sentences = []
    for frame, specs in structure.sentences:
        events = [_event(spec, nouns, boxes) for spec in specs]
        sentences.append(
            {"frame": frame, "variant": rng.randrange(variant_count(frame)), "events": events}
        )
    focus_object = nouns[focus].word
    answer = boxes[structure.final_slots[focus]]
    plan = {
        "character": {"name": character.name, "pronoun": character.pronoun},
        "objects": [{"noun": n.word, "article": n.article, "kind": n.kind} for n in nouns],
        "containers": containers,
        "sentences": sentences,
        "focus_object": focus_object,
    }
    lure_container, lure_kind = _choose_lure(rng, plan, answer, lure, cell)
    plan["lure"] = lure_kind
    plan["continuations"] = _continuations(rng, answer, lure_container, minimal_pair)
    return plan, answer


def _event(spec: EventSpec, nouns: Sequence[lexicons.Noun], boxes: Sequence[str]) -> dict[str, Any]:
    kind, obj, target, source = spec
    event = {"kind": kind, "object": nouns[obj].word, "target": boxes[target]}
    if source is not None:
        event["source"] = boxes[source]
    return event


def classify_lures(plan: Mapping[str, Any], answer: str) -> dict[str, str]:
    """Every container that could be the bad continuation's, with its kind of wrongness.

    Kinds, by precedence: the focus object's ``previous_location``; another object's
    final location (``other_object_location``); a story container now empty
    (``mentioned_empty``); a container the story never mentions (``unmentioned_container``).
    """
    story = [c["noun"] for c in plan["containers"]]
    events = [Event.from_dict(e) for s in plan["sentences"] for e in s["events"]]
    simulation = simulate(events, story)
    focus = plan["focus_object"]
    others = {where for obj, where in simulation.final_locations.items() if obj != focus}
    kinds = {}
    for container in lexicons.containers():
        if container == answer:
            continue
        if container in simulation.history.get(focus, []):
            kinds[container] = "previous_location"
        elif container in others:
            kinds[container] = "other_object_location"
        elif container in story:
            kinds[container] = "mentioned_empty"
        else:
            kinds[container] = "unmentioned_container"
    return kinds


def _choose_lure(
    rng: random.Random, plan: Mapping[str, Any], answer: str, lure: str, cell: str
) -> tuple[str, str]:
    kinds = classify_lures(plan, answer)
    candidates = sorted(c for c, kind in kinds.items() if lure in ("any", kind))
    if not candidates:
        raise TracktaleError(
            f"lure {lure!r} cannot occur in cell {cell} "
            f"(its wrong locations are: {', '.join(sorted(set(kinds.values())))})"
        )
    container = rng.choice(candidates)
    return container, kinds[container]


def _continuations(
    rng: random.Random, answer: str, lure: str, minimal_pair: bool
) -> dict[str, dict[str, str]]:
    pool = lexicons.containers()
    if minimal_pair:
        # Same destination for both, so the pair differs only in the "from" container.
        target = rng.choice([c for c in pool if c not in (answer, lure)])
        return {
            "good": {"source": answer, "target": target},
            "bad": {"source": lure, "target": target},
        }
    good_target = rng.choice([c for c in pool if c != answer])
    bad_target = rng.choice([c for c in pool if c not in (answer, lure)])
    return {
        "good": {"source": answer, "target": good_target},
        "bad": {"source": lure, "target": bad_target},
    }
