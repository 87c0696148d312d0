"""The box world: N boxes with one key inside each, changed only by opening a box.

The state is two tables of truth values, ``opened[box]`` and ``obtained[key]`` (2N states). A
step opens one box that is still closed and retrieves the key inside it, so exactly two states
turn from False to True and stay there. :func:`simulate` replays a trajectory and refuses any
step the world does not allow; every state table in an item's ground truth comes from it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tracktale.errors import TracktaleError


class InconsistentWorld(TracktaleError):
    """A trajectory the box world does not allow, or truth that contradicts its simulation."""


@dataclass(frozen=True, slots=True)
class Action:
    """One step: open ``box`` and retrieve ``key`` from it."""

    box: int
    key: int

    def to_dict(self) -> dict[str, int]:
        """Plain data for the item's ``truth``."""
        return {"box": self.box, "key": self.key}

    @classmethod
    def from_dict(cls, data: Any) -> Action:
        """Rebuild an action from ``truth`` data.

        Raises:
            InconsistentWorld: If the data is not ``{"box": int, "key": int}``.
        """
        if (
            not isinstance(data, Mapping)
            or set(data) != {"box", "key"}
            or not all(isinstance(data[k], int) and not isinstance(data[k], bool) for k in data)
        ):
            raise InconsistentWorld(f"not an action: {data!r}")
        return cls(data["box"], data["key"])


@dataclass(frozen=True, slots=True)
class State:
    """Which boxes are opened and which keys obtained (index = box or key number)."""

    opened: tuple[bool, ...]
    obtained: tuple[bool, ...]

    @classmethod
    def initial(cls, n_boxes: int) -> State:
        """Every box closed, no key obtained."""
        return cls((False,) * n_boxes, (False,) * n_boxes)

    def to_dict(self) -> dict[str, list[bool]]:
        """Plain data for the item's ``truth``."""
        return {"opened": list(self.opened), "obtained": list(self.obtained)}

    def values(self) -> tuple[bool, ...]:
        """All 2N states in query order: every box, then every key."""
        return self.opened + self.obtained


def check_box_keys(box_keys: Sequence[int]) -> None:
    """Check that ``box_keys[box]`` puts exactly one key into each box.

    Raises:
        InconsistentWorld: If the list is not a permutation of ``0..N-1``.
    """
    if (
        not isinstance(box_keys, list | tuple)
        or not box_keys
        or not all(isinstance(k, int) and not isinstance(k, bool) for k in box_keys)
        or sorted(box_keys) != list(range(len(box_keys)))
    ):
        raise InconsistentWorld(
            f"the keys in the boxes must be a permutation of 0..N-1 (one key per box), "
            f"got {box_keys!r}"
        )


def apply(state: State, action: Action, box_keys: Sequence[int]) -> State:
    """The state after ``action``.

    Raises:
        InconsistentWorld: If the box does not exist or is already open, or the key is not the
            one inside that box.
    """
    n_boxes = len(box_keys)
    if not 0 <= action.box < n_boxes:
        raise InconsistentWorld(f"there is no box {action.box} (boxes are 0..{n_boxes - 1})")
    if state.opened[action.box]:
        raise InconsistentWorld(f"box {action.box} is already open")
    if box_keys[action.box] != action.key:
        raise InconsistentWorld(
            f"box {action.box} holds key {box_keys[action.box]}, not key {action.key}"
        )
    opened = list(state.opened)
    obtained = list(state.obtained)
    opened[action.box] = True
    obtained[action.key] = True
    return State(tuple(opened), tuple(obtained))


def simulate(
    box_keys: Sequence[int], actions: Iterable[Action], start: State | None = None
) -> list[State]:
    """Replay ``actions`` from ``start`` (default: everything closed).

    Args:
        box_keys: The key inside each box.
        actions: The steps, in order.
        start: The state before the first action.

    Returns:
        The state before the first action followed by the state after each action.

    Raises:
        InconsistentWorld: At the first action the world does not allow, naming its position.
    """
    check_box_keys(box_keys)
    states = [start or State.initial(len(box_keys))]
    for number, action in enumerate(actions, start=1):
        try:
            states.append(apply(states[-1], action, box_keys))
        except InconsistentWorld as error:
            raise InconsistentWorld(f"action {number} (open box {action.box}): {error}") from None
    return states


def encode(value: bool, negated: bool) -> bool:
    """The truth value an answer writes for a world state (negated under flipped instructions)."""
    return value != negated
