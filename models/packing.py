"""Token trees: sequences that share their beginnings, packed into rows and run once.

Scoring asks for the log-probabilities of many token sequences that start alike: the good and
the bad continuation of one story, the stories of items that open with the same sentences, the
calibration continuations after a story's first sentence. Each sequence here is a
:class:`Path`: context tokens, then the scored continuation. Paths are merged into a prefix
tree (a trie: every distinct beginning is one node), and the tree's nodes are laid out in rows
of at most a budget of tokens, so that every path lies wholly in one row. A row is run as one
sequence whose attention mask lets each token see exactly its ancestors in the tree, with its
depth as position id; each token then has the same context as in a forward pass of its own
sequence, and every shared beginning is computed once.

This module plans rows (no torch); :mod:`tracktale.models.hf_forward` builds the tensors.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

ROW_TOKENS = 320
"""Tokens per packed row. A longer row lets more items share their opening, but attention over
a row grows with its square while everything else grows linearly; 320 was the best trade-off
on the narrative model protocol (see the README's benchmark section)."""


@dataclass(frozen=True)
class Path:
    """A token sequence to score: ``continuation`` after ``context``.

    Attributes:
        context: Tokens before the first scored one (at least one).
        continuation: The scored tokens (at least one).
    """

    context: tuple[int, ...]
    continuation: tuple[int, ...]

    def __post_init__(self) -> None:
        if not self.context or not self.continuation:
            raise ValueError("a path needs at least one context and one scored token")

    @property
    def fed(self) -> tuple[int, ...]:
        """The tokens run through the model: the last scored token predicts nothing scored."""
        return self.context + self.continuation[:-1]


@dataclass
class Row:
    """One packed row: a prefix tree of paths laid out in depth-first order.

    Attributes:
        tokens: Token id of each slot.
        parents: Parent slot of each slot (``-1`` for a root).
        depths: Depth of each slot in its tree (its position id).
        paths: For each packed sequence, its index among the caller's sequences.
        slots: For each packed sequence, the slots of its tokens, in order.
    """

    tokens: list[int] = field(default_factory=list)
    parents: list[int] = field(default_factory=list)
    depths: list[int] = field(default_factory=list)
    paths: list[int] = field(default_factory=list)
    slots: list[list[int]] = field(default_factory=list)
    _children: dict[tuple[int, int], int] = field(default_factory=dict, repr=False)

    def __len__(self) -> int:
        return len(self.tokens)

    def add(self, index: int, fed: Sequence[int]) -> None:
        """Add path ``index``: reuse the nodes it shares with the row, append the rest."""
        parent, slots = -1, []
        for depth, token in enumerate(fed):
            slot = self._children.get((parent, token))
            if slot is None:
                slot = len(self.tokens)
                self._children[parent, token] = slot
                self.tokens.append(token)
                self.parents.append(parent)
                self.depths.append(depth)
            slots.append(slot)
            parent = slot
        self.paths.append(index)
        self.slots.append(slots)


def pack(
    sequences: Sequence[Sequence[int]],
    groups: Sequence[int] | None = None,
    *,
    budget: int = ROW_TOKENS,
    share: bool = True,
) -> list[Row]:
    """Lay token sequences out in rows, each wholly in one row, sharing nodes within a row.

    Sequences are taken in token order (so those that start alike are neighbours) a group at a
    time (the continuations of one prefix stay together); when the next group would take the
    current row over ``budget`` tokens, it goes into the first earlier row it fits in whole
    (first fit: less padding), else it opens a new row. A group larger than the budget gets a
    row of its own.

    Args:
        sequences: The tokens to run of each path (:attr:`Path.fed`), or of each prompt.
        groups: A group number per sequence (``None``: each is its own group).
        budget: Tokens per row.
        share: Merge shared beginnings (``False``: one path per row, each row a plain causal
            sequence, for attention implementations that take no tree mask).

    Returns:
        The rows, longest first.
    """
    fed = [tuple(tokens) for tokens in sequences]
    rows: list[Row] = []
    if not share:
        for index, tokens in enumerate(fed):
            single = Row()
            single.add(index, tokens)
            rows.append(single)
        return sorted(rows, key=len, reverse=True)
    members: dict[int, list[int]] = {}
    for index in range(len(fed)):
        members.setdefault(index if groups is None else groups[index], []).append(index)
    ordered = sorted(
        (sorted(indices, key=lambda i: fed[i]) for indices in members.values()),
        key=lambda indices: fed[indices[0]],
    )
    row = Row()
    for indices in ordered:
        group = [fed[i] for i in indices]
        if len(row) and len(row) + _group_slots(row, group) > budget:
            # Before opening a row, fill the room an earlier one has left: rows of a batch are
            # padded to the longest, so a short row is padding.
            alone = _group_slots(Row(), group)
            earlier = next((r for r in rows if len(r) + alone <= budget), None)
            if earlier is not None:
                for index in indices:
                    earlier.add(index, fed[index])
                continue
            rows.append(row)
            row = Row()
        for index in indices:
            row.add(index, fed[index])
    if len(row):
        rows.append(row)
    return sorted(rows, key=len, reverse=True)


def _group_slots(row: Row, feds: list[tuple[int, ...]]) -> int:
    """Slots a group of paths would add to a row (the group's paths share among themselves)."""
    added: dict[tuple[int, int], int] = {}
    for fed in feds:
        parent = -1
        for token in fed:
            key = (parent, token)
            slot = row._children.get(key, added.get(key))
            if slot is None:
                slot = -2 - len(added)  # a stand-in, never -1 (the root)
                added[key] = slot
            parent = slot
    return len(added)


def batches(rows: Sequence[Row], max_rows: int) -> list[list[Row]]:
    """Consecutive rows (longest first) in batches of at most ``max_rows``."""
    return [list(rows[start : start + max_rows]) for start in range(0, len(rows), max_rows)]
