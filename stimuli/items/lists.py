"""Counterbalancing lists of an imported set: Latin squares built from item x condition.

When the table has no group (list) column, the importer assigns every test row to a list:

- The conditions that rotate are the combinations of the factors that vary **within items and
  within participants**, in the design's order (factors first to last, levels in the order
  listed): ``k`` conditions, numbered ``0 .. k-1``.
- Factors that vary **between participants** split the lists: each combination of their levels
  (numbered the same way) gets its own ``k`` lists, so a participant sees one level of each.
- The ``n``-th test item (from 0, in the table's order) of its between-item cell (its levels of
  the factors that vary between items; all items form one cell when there are none) goes, in
  condition ``c``, to list ``b * k + (c - n) mod k + 1`` where ``b`` is the number of the row's
  between-participant levels: list 1 gets item 0 in condition 0, item 1 in condition 1, ...,
  list 2 item 0 in condition 1, item 1 in condition 2, ..., so every list has every item once
  and every condition equally often when each cell's item count is a multiple of ``k``.
- Lists are named ``L1``, ``L2``, ...; with a 2 x 2 within-within design these are the four
  lists ``L1``-``L4`` the study server balances. Fillers and practice items belong to every
  list (``truth.list`` is ``None``).

With a group column, its values are the lists as given (PCIbex's ``Group``): each test row
needs one, no list may show an item twice, and a filler or practice row with a value is in that
list only (with an empty cell, in every list).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence

from tracktale.item import Item
from tracktale.stimulus_set import StimulusSet


def combinations(factors: Sequence[tuple[str, Sequence[str]]]) -> list[tuple[str, ...]]:
    """Every combination of the factors' levels, first factor slowest."""
    return list(itertools.product(*(levels for _, levels in factors)))


def latin_square_list(
    *,
    rotating: Sequence[tuple[str, Sequence[str]]],
    splitting: Sequence[tuple[str, Sequence[str]]],
    levels: Mapping[str, str],
    position: int,
) -> str:
    """The list of one test row (see the module docstring).

    Args:
        rotating: The within-item, within-participant factors with their levels.
        splitting: The between-participant factors with their levels.
        levels: The row's level of every factor.
        position: The item's number within its between-item cell, from 0.
    """
    conditions = combinations(rotating)
    condition = conditions.index(tuple(levels[name] for name, _ in rotating))
    block = combinations(splitting).index(tuple(levels[name] for name, _ in splitting))
    k = len(conditions)
    return f"L{block * k + (condition - position) % k + 1}"


def list_ids(stimulus_set: StimulusSet) -> tuple[str, ...]:
    """The set's lists, in the manifest's order."""
    return tuple(stimulus_set.manifest.config.get("lists", ()))


def study_lists(stimulus_set: StimulusSet) -> dict[str, list[Item]]:
    """List id -> the items a participant in that list sees, in set order.

    A list's items are its test items and every filler and practice item that belongs to every
    list (or to it).
    """
    return {
        list_id: [item for item in stimulus_set if item.truth.get("list") in (None, list_id)]
        for list_id in list_ids(stimulus_set)
    }
