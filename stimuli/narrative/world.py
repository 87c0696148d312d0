"""The narrative world: objects in containers, changed only by explicit events.

A story is generated from a list of events and rendered from them; :func:`simulate` replays the
events and refuses any that the world does not allow, so an inconsistent story can never reach
a participant or a model.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from tracktale.errors import TracktaleError

EVENT_KINDS = ("put", "found", "hidden", "move")
"""``put``: the character places an object she holds (in no container yet) into ``target``.
``found``: the narrative reveals an object already lying in ``target``.
``hidden``: an object lies in ``target`` before the story starts, never narrated.
``move``: the object goes from ``source`` to ``target``."""


class InconsistentStory(TracktaleError):
    """An event list the world does not allow, or a story that contradicts its simulation."""


@dataclass(frozen=True, slots=True)
class Event:
    """One change (or revelation) of an object's location."""

    kind: str
    object: str
    target: str
    source: str | None = None

    def describe(self) -> str:
        """A short human-readable form for error messages."""
        if self.kind == "move":
            return f"move {self.object} from {self.source} to {self.target}"
        return f"{self.kind} {self.object} in {self.target}"

    def to_dict(self) -> dict[str, Any]:
        """Plain data for the item's ``truth``."""
        data = {"kind": self.kind, "object": self.object, "target": self.target}
        if self.source is not None:
            data["source"] = self.source
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Event:
        """Rebuild an event from ``truth`` data.

        Raises:
            InconsistentStory: If the data is not a well-formed event.
        """
        if not isinstance(data, Mapping) or data.get("kind") not in EVENT_KINDS:
            raise InconsistentStory(f"not an event: {data!r}")
        if not isinstance(data.get("object"), str) or not isinstance(data.get("target"), str):
            raise InconsistentStory(f"event without object or target: {data!r}")
        has_source = isinstance(data.get("source"), str)
        if has_source != (data["kind"] == "move"):
            raise InconsistentStory(f"only a move has a source: {data!r}")
        return cls(data["kind"], data["object"], data["target"], data.get("source"))


@dataclass(frozen=True)
class Simulation:
    """The result of replaying a story's events.

    Attributes:
        final_locations: Where each object is at the end.
        history: Every container each object has been in, in order.
    """

    final_locations: dict[str, str]
    history: dict[str, list[str]]


def simulate(events: Iterable[Event], containers: Iterable[str]) -> Simulation:
    """Replay ``events`` in a world with the given containers.

    Args:
        events: The story's events, in narrative order.
        containers: The container nouns that exist in the story's world.

    Returns:
        Final locations and location histories.

    Raises:
        InconsistentStory: At the first event the world does not allow, saying why.
    """
    known = set(containers)
    location: dict[str, str] = {}
    history: dict[str, list[str]] = {}
    for number, event in enumerate(events, start=1):
        where = f"event {number} ({event.describe()})"
        for container in (event.target, event.source):
            if container is not None and container not in known:
                raise InconsistentStory(f"{where}: there is no {container} in this story")
        current = location.get(event.object)
        if event.kind == "move":
            if current is None:
                raise InconsistentStory(
                    f"{where}: the {event.object} is not in any container "
                    "(no earlier event placed it there)"
                )
            if current != event.source:
                raise InconsistentStory(
                    f"{where}: the {event.object} is in the {current}, not the {event.source}"
                )
            if event.source == event.target:
                raise InconsistentStory(f"{where}: source and target are the same container")
        elif event.kind == "found" and current not in (None, event.target):
            raise InconsistentStory(f"{where}: the {event.object} is in the {current}")
        elif event.kind in ("put", "hidden") and current is not None:
            raise InconsistentStory(f"{where}: the {event.object} is already in the {current}")
        if current != event.target:
            history.setdefault(event.object, []).append(event.target)
        location[event.object] = event.target
    return Simulation(final_locations=location, history=history)
