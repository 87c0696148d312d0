"""The implicit task's pair of continuations: which containers the good and the bad one name.

Both continuations read ``Later, <Name> picked up the <object> from the <source> and placed it
into the <target>.`` The good one takes the object from where it really is (A). Three pair
structures:

- ``chained`` (default): the structure of all 11 implicit examples of the source paper's
  Appendix D. The good continuation moves the object from A into a container X, the bad one from
  X into a third container Y (neither A nor X): good ``from A into X``, bad ``from X into Y``.
- ``independent``: the good continuation's target, the bad one's source (the lure) and the bad
  one's target are drawn independently (the bad target only avoids A and the lure).
- ``minimal`` (``--minimal-pair``): both continuations move the object into the same target, so
  they differ only in the "from" container.

The bad continuation's source is the *lure*; its kind of wrongness is recorded
(:func:`classify_lures`) and ``--lure KIND`` restricts it to one kind under every structure.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

from tracktale.errors import TracktaleError
from tracktale.stimuli import lexicons
from tracktale.stimuli.narrative.world import Event, simulate

PAIR_STRUCTURES = ("chained", "independent")
"""Values of ``--pairs`` (``--minimal-pair`` is its own option, with ``independent``)."""
LURES = (
    "any",
    "previous_location",
    "other_object_location",
    "mentioned_empty",
    "unmentioned_container",
)
"""Lure policies: ``any`` draws the bad continuation's source uniformly from every container but
the true one; the others force one kind of wrong location (our option; the paper's examples
mix all four kinds)."""


def classify_lures(plan: Mapping[str, Any], answer: str) -> dict[str, str]:
    """Every container that could be the bad continuation's source, with its kind of wrongness.

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


def choose_pair(
    rng: random.Random,
    plan: Mapping[str, Any],
    answer: str,
    *,
    cell: str,
    lure: str,
    pairs: str,
    minimal_pair: bool,
) -> tuple[dict[str, dict[str, str]], str]:
    """Draw the two continuations' containers for a story plan.

    Returns:
        ``({"good": {"source", "target"}, "bad": {...}}, lure kind)``.

    Raises:
        TracktaleError: If the requested lure kind cannot occur in this cell.
    """
    kinds = classify_lures(plan, answer)
    candidates = sorted(c for c, kind in kinds.items() if lure in ("any", kind))
    if not candidates:
        raise TracktaleError(
            f"lure {lure!r} cannot occur in cell {cell} "
            f"(its wrong locations are: {', '.join(sorted(set(kinds.values())))})"
        )
    source = rng.choice(candidates)
    pool = lexicons.containers()
    if minimal_pair:
        # Same destination for both, so the pair differs only in the "from" container.
        target = rng.choice([c for c in pool if c not in (answer, source)])
        good, bad = (answer, target), (source, target)
    elif pairs == "chained":
        onward = rng.choice([c for c in pool if c not in (answer, source)])
        good, bad = (answer, source), (source, onward)
    else:
        good_target = rng.choice([c for c in pool if c != answer])
        bad_target = rng.choice([c for c in pool if c not in (answer, source)])
        good, bad = (answer, good_target), (source, bad_target)
    continuations = {
        "good": {"source": good[0], "target": good[1]},
        "bad": {"source": bad[0], "target": bad[1]},
    }
    return continuations, kinds[source]


def pair_problems(plan: Mapping[str, Any], pairs: str, minimal_pair: bool) -> list[str]:
    """Ways the continuations break their declared structure (sources are checked elsewhere)."""
    good, bad = plan["continuations"]["good"], plan["continuations"]["bad"]
    problems = []
    for name, continuation in (("good", good), ("bad", bad)):
        if continuation["source"] == continuation["target"]:
            problems.append(f"the {name} continuation puts the object back where it takes it from")
    if minimal_pair:
        if good["target"] != bad["target"]:
            problems.append("a minimal pair's continuations have different targets")
    elif pairs == "chained":
        if bad["source"] != good["target"]:
            problems.append("a chained pair's bad continuation does not start at the good target")
        if bad["target"] in (good["source"], good["target"]):
            problems.append("a chained pair's bad continuation ends at a container of the good one")
    elif pairs != "independent":
        problems.append(f"unknown pair structure {pairs!r}")
    return problems


def mention_flags(plan: Mapping[str, Any]) -> dict[str, bool]:
    """Which of the pair's containers the story mentions (the good source always is)."""
    story = {c["noun"] for c in plan["containers"]}
    good, bad = plan["continuations"]["good"], plan["continuations"]["bad"]
    return {
        "good_target_mentioned": good["target"] in story,
        "bad_source_mentioned": bad["source"] in story,
        "bad_target_mentioned": bad["target"] in story,
    }
