"""The list design of the human study: pure, seeded and independent of any front end.

The browser study and the lab mode build a participant's session from this module alone, so
both run exactly one design:

- **Latin square.** The main items of every design cell are split into two halves (seeded by the
  design seed). In lists L1/L2 the first half is answered explicitly and the second half by the
  two-alternative forced choice; in L3/L4 the other way round. Each item therefore appears in
  both formats across participants, and each participant sees every cell in both formats.
- **Block order.** L1/L3 start with the explicit block, L2/L4 with the implicit block.
- **Practice.** Before each main block, practice trials in that block's format. Within every
  practice cell the items alternate between the two formats, so each format practises every
  practice cell (C1 and C2: one of each per format), and the Latin-square version swaps them.
  Practice trials, like the four lists and the blocked formats, are this project's design, not
  the source paper's.
- **Fillers.** The fillers (comprehension questions) are shared out between the two main blocks
  and inserted after randomly chosen main trials, never first in a block and never two in a row.
- **Sides.** In every block of two-alternative trials, exactly half (rounded) show the good
  option on the left; which ones is random.
- **Order.** The order of main trials within a block is shuffled per participant.

Everything random is drawn from ``random.Random`` streams named by the design seed and the
participant's session seed, both of which are stored with the participant, so
``build_session`` gives the identical session again from the same inputs.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Annotated, Any

from pydantic import Field

from tracktale.errors import TracktaleError
from tracktale.experiment.study.config_schema import Comment
from tracktale.item import Item
from tracktale.stimulus_set import StimulusSet

FORMATS = ("explicit", "implicit")
"""The two response formats of main trials (the TrialRecord ``task`` values)."""
LIST_IDS = ("L1", "L2", "L3", "L4")
"""The counterbalancing lists: (Latin-square version) x (block order)."""
_LISTS = {
    "L1": (0, ("explicit", "implicit")),
    "L2": (0, ("implicit", "explicit")),
    "L3": (1, ("explicit", "implicit")),
    "L4": (1, ("implicit", "explicit")),
}


@dataclass(frozen=True)
class DesignConfig:
    """The study's design settings.

    Attributes:
        seed: Seed of the item-to-format split (the same for every participant of a study).
        practice_per_format: Practice trials before each main block.
    """

    seed: Annotated[
        int, Comment("which items are explicit in lists L1/L2 (and implicit in L3/L4)")
    ] = 1
    practice_per_format: Annotated[int, Field(ge=0)] = 2


@dataclass(frozen=True)
class PlannedTrial:
    """One trial of a session, as planned before the participant sees it.

    Attributes:
        trial_index: Position in the session, from 0 (practice included).
        item_id: The item shown.
        role: The item's role (``main``, ``filler`` or ``practice``).
        task: ``explicit``, ``implicit`` or ``comprehension``.
        block: Block number (practice blocks included), from 0.
        good_side: ``left`` or ``right`` for two-alternative trials, else ``None``.
    """

    trial_index: int
    item_id: str
    role: str
    task: str
    block: int
    good_side: str | None


@dataclass(frozen=True)
class SessionPlan:
    """A participant's whole sequence of trials and the inputs that produced it.

    Attributes:
        list_id: One of :data:`LIST_IDS`.
        design_seed: The study's design seed.
        session_seed: The participant's seed (trial order, filler positions, sides).
        block_formats: The format of each block, in order (practice blocks included).
        trials: The trials in presentation order.
    """

    list_id: str
    design_seed: int
    session_seed: int
    block_formats: tuple[str, ...]
    trials: tuple[PlannedTrial, ...]

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready data (stored with the participant)."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SessionPlan:
        """Rebuild a plan stored with :meth:`to_dict`."""
        return cls(
            list_id=data["list_id"],
            design_seed=data["design_seed"],
            session_seed=data["session_seed"],
            block_formats=tuple(data["block_formats"]),
            trials=tuple(PlannedTrial(**trial) for trial in data["trials"]),
        )


def default_cell(item: Item) -> str:
    """The design cell the Latin square balances within (the item's ``cell`` condition)."""
    return str(item.condition.get("cell", ""))


def session_seed_for(design_seed: int, study_id: str, participant_key: str) -> int:
    """A participant's session seed, derived from stable identifiers (reproducible, stored)."""
    digest = hashlib.sha256(f"{design_seed}|{study_id}|{participant_key}".encode()).digest()
    return int.from_bytes(digest[:6], "big")


def assign_list(counts: Mapping[str, int], list_ids: Sequence[str] = LIST_IDS) -> str:
    """The list for the next participant: the least-filled one, ties by list order.

    Args:
        counts: Participants per list so far (missing lists count as 0); count only those who
            still take part (started or completed), so dropouts are refilled.
        list_ids: The study's lists, in order
            (:meth:`~tracktale.experiment.paradigms.HumanStudy.list_ids`).

    Raises:
        TracktaleError: If there are no lists.
    """
    if not list_ids:
        raise TracktaleError("the study has no lists to assign participants to")
    order = {list_id: index for index, list_id in enumerate(list_ids)}
    return min(list_ids, key=lambda list_id: (counts.get(list_id, 0), order[list_id]))


def format_halves(
    items: Sequence[Item], seed: int, cell_of: Callable[[Item], str] = default_cell
) -> tuple[list[Item], list[Item]]:
    """Split items into two halves balanced within every design cell (the Latin square).

    Where a cell has an odd number of items, the extra one goes alternately to each half.

    Returns:
        The two halves, each in stimulus-set order.
    """
    cells: dict[str, list[Item]] = {}
    for item in items:
        cells.setdefault(cell_of(item), []).append(item)
    first: set[str] = set()
    odd_cells = 0
    for cell in sorted(cells):
        members = list(cells[cell])
        random.Random(f"design|{seed}|halves|{cell}").shuffle(members)
        size = len(members) // 2
        if len(members) % 2:
            size += odd_cells % 2 == 0
            odd_cells += 1
        first.update(item.item_id for item in members[:size])
    return (
        [item for item in items if item.item_id in first],
        [item for item in items if item.item_id not in first],
    )


def build_session(
    stimulus_set: StimulusSet,
    list_id: str,
    session_seed: int,
    config: DesignConfig | None = None,
    cell_of: Callable[[Item], str] = default_cell,
) -> SessionPlan:
    """Build one participant's session for a list.

    Args:
        stimulus_set: The human-protocol set (main, filler and practice items).
        list_id: One of :data:`LIST_IDS`.
        session_seed: The participant's seed (see :func:`session_seed_for`).
        config: The design settings.
        cell_of: Names an item's design cell (the Latin square balances within cells).

    Returns:
        The plan.

    Raises:
        TracktaleError: For an unknown list, or a set without main items or with too few
            practice items for the configured practice trials.
    """
    config = config or DesignConfig()
    if list_id not in _LISTS:
        raise TracktaleError(f"unknown list {list_id!r} (choose from {', '.join(LIST_IDS)})")
    version, order = _LISTS[list_id]
    main, practice = _main_and_practice(stimulus_set, config)
    main_halves = format_halves(main, config.seed, cell_of)
    practice_halves = _alternate(practice, cell_of)
    if version == 1:
        main_halves, practice_halves = main_halves[::-1], practice_halves[::-1]
    by_format = {
        "explicit": (main_halves[0], practice_halves[0]),
        "implicit": (main_halves[1], practice_halves[1]),
    }
    fillers = stimulus_set.select(role="filler")
    rng = random.Random(f"session|{config.seed}|{session_seed}")
    rng.shuffle(fillers)
    filler_split = (fillers[: (len(fillers) + 1) // 2], fillers[(len(fillers) + 1) // 2 :])
    blocks: list[list[tuple[Item, str]]] = []
    formats: list[str] = []
    for position, fmt in enumerate(order):
        main_items, practice_items = by_format[fmt]
        blocks.append([(item, fmt) for item in practice_items])
        blocks.append(_main_block(rng, main_items, fmt, filler_split[position]))
        formats.extend((fmt, fmt))
    return SessionPlan(
        list_id=list_id,
        design_seed=config.seed,
        session_seed=session_seed,
        block_formats=tuple(formats),
        trials=_number(rng, blocks),
    )


def _main_and_practice(
    stimulus_set: StimulusSet, config: DesignConfig
) -> tuple[list[Item], list[Item]]:
    """The set's main items and the practice items the design shows (the first it needs).

    Raises:
        TracktaleError: For a set without main items or with too few practice items.
    """
    main = stimulus_set.select(role="main")
    if not main:
        raise TracktaleError("the stimulus set has no main items (is it a human-protocol set?)")
    practice = stimulus_set.select(role="practice")
    needed = 2 * config.practice_per_format
    if len(practice) < needed:
        raise TracktaleError(
            f"the design needs {needed} practice items; the stimulus set has {len(practice)}"
        )
    return main, practice[:needed]


def _alternate(
    items: Sequence[Item], cell_of: Callable[[Item], str]
) -> tuple[list[Item], list[Item]]:
    """Two equal halves in which every cell's items alternate (both cells in both halves)."""
    by_cell = sorted(items, key=cell_of)  # stable: set order within a cell
    return list(by_cell[0::2]), list(by_cell[1::2])


def _main_block(
    rng: random.Random, main_items: Sequence[Item], fmt: str, fillers: Sequence[Item]
) -> list[tuple[Item, str]]:
    order = list(main_items)
    rng.shuffle(order)
    if len(fillers) > len(order):
        raise TracktaleError(f"{len(fillers)} fillers cannot be spaced among {len(order)} trials")
    # Gap k is "after the k-th main trial" (1..n): never first, never two fillers in a row.
    gaps = set(rng.sample(range(1, len(order) + 1), len(fillers)))
    block: list[tuple[Item, str]] = []
    remaining = list(fillers)
    for position, item in enumerate(order, start=1):
        block.append((item, fmt))
        if position in gaps:
            block.append((remaining.pop(), "comprehension"))
    return block


def _number(
    rng: random.Random, blocks: Sequence[Sequence[tuple[Item, str]]]
) -> tuple[PlannedTrial, ...]:
    # Sides are balanced within each block of implicit trials and across all fillers.
    groups: dict[tuple[str, int], list[tuple[int, int]]] = {}
    for block_number, block in enumerate(blocks):
        for index, (_, task) in enumerate(block):
            if task != "explicit":
                group = block_number if task == "implicit" else -1
                groups.setdefault((task, group), []).append((block_number, index))
    sides: dict[tuple[int, int], str] = {}
    for positions in groups.values():
        drawn = (["left", "right"] * len(positions))[: len(positions)]
        rng.shuffle(drawn)
        sides.update(zip(positions, drawn, strict=True))
    trials: list[PlannedTrial] = []
    for block_number, block in enumerate(blocks):
        for index, (item, task) in enumerate(block):
            trials.append(
                PlannedTrial(
                    trial_index=len(trials),
                    item_id=item.item_id,
                    role=item.role,
                    task=task,
                    block=block_number,
                    good_side=sides.get((block_number, index)),
                )
            )
    return tuple(trials)
