"""Token trees: every path lies whole in one row, shared beginnings are one node, budgets hold."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tracktale.models.packing import Path, Row, pack


def feds(paths):
    return [path.fed for path in paths]


def test_a_prefix_and_two_continuations_share_the_prefix_and_branch():
    good, bad = Path((5, 6, 7), (8, 9, 10)), Path((5, 6, 7), (8, 11))
    (row,) = pack(feds([good, bad]), [0, 0])
    # 5 6 7 8 are shared; good adds 9, bad adds nothing else (its last token is not fed).
    assert row.tokens == [5, 6, 7, 8, 9]
    assert row.parents == [-1, 0, 1, 2, 3]
    assert row.depths == [0, 1, 2, 3, 4]
    assert sorted(zip(row.paths, row.slots, strict=True)) == [
        (0, [0, 1, 2, 3, 4]),
        (1, [0, 1, 2, 3]),
    ]


def test_items_that_open_alike_share_their_opening_within_a_row():
    paths = [Path((1, 2, 3, 4), (9,)), Path((1, 2, 7, 8), (9,)), Path((5, 6), (9,))]
    rows = pack(feds(paths))
    assert len(rows) == 1 and len(rows[0]) == 4 + 2 + 2


def test_a_row_never_goes_over_the_budget_unless_one_group_does():
    paths = [Path(tuple(range(i, i + 10)), (1, 2)) for i in range(0, 200, 20)]
    rows = pack(feds(paths), budget=25)
    assert all(len(row) <= 25 for row in rows)
    assert sorted(index for row in rows for index in row.paths) == list(range(len(paths)))
    (big,) = pack(feds([Path(tuple(range(40)), (1,))]), budget=25)
    assert len(big) == 40


def test_a_group_that_fits_an_earlier_row_fills_it_before_a_new_row_opens():
    first, second = Path(tuple(range(20)), (1,)), Path(tuple(range(100, 122)), (1,))
    short = Path(tuple(range(200, 205)), (1,))
    rows = pack(feds([first, second, short]), budget=25)
    # The short path does not fit beside the second one, but fills the first row's room.
    assert [sorted(row.paths) for row in rows] == [[0, 2], [1]]
    assert [len(row) for row in rows] == [25, 22]


def test_the_continuations_of_one_prefix_stay_in_one_row():
    paths = [Path((1,) * 8, (2, 3)), Path((1,) * 8, (4, 5)), Path((6,) * 8, (2, 3))]
    rows = pack(feds(paths), [0, 0, 1], budget=12)
    together = [row for row in rows if 0 in row.paths]
    assert len(together) == 1 and 1 in together[0].paths


def test_without_sharing_each_path_is_a_plain_row_in_order():
    paths = [Path((1, 2), (3, 4)), Path((1, 2), (3, 5))]
    rows = pack(feds(paths), share=False)
    assert [row.tokens for row in rows] == [[1, 2, 3], [1, 2, 3]]
    assert all(row.slots == [[0, 1, 2]] and row.depths == [0, 1, 2] for row in rows)


def test_a_path_needs_context_and_continuation():
    with pytest.raises(ValueError, match="at least one"):
        Path((), (1,))
    with pytest.raises(ValueError, match="at least one"):
        Path((1,), ())


tokens = st.lists(st.integers(0, 4), min_size=1, max_size=12)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(tokens, tokens), min_size=1, max_size=12), st.integers(1, 40))
def test_every_path_is_its_own_chain_of_ancestors(pairs, budget):
    paths = [Path(tuple(context), tuple(continuation)) for context, continuation in pairs]
    rows = pack(feds(paths), budget=budget)
    seen = []
    for row in rows:
        nodes = set()
        for index, slots in zip(row.paths, row.slots, strict=True):
            seen.append(index)
            # The slots hold the path's fed tokens, each the child of the one before, at its depth.
            assert [row.tokens[slot] for slot in slots] == list(paths[index].fed)
            assert [row.parents[slot] for slot in slots] == [-1, *slots[:-1]]
            assert [row.depths[slot] for slot in slots] == list(range(len(slots)))
            nodes.update((row.parents[slot], row.tokens[slot]) for slot in slots)
        # One slot per distinct (parent, token): nothing computed twice within a row.
        assert len(nodes) == len(row)
        if len(row.paths) > 1:
            assert len(row) <= budget
    assert sorted(seen) == list(range(len(paths)))


def test_a_row_reuses_a_node_it_already_has():
    row = Row()
    row.add(0, [1, 2, 3])
    row.add(1, [1, 2])
    assert row.tokens == [1, 2, 3] and row.slots == [[0, 1, 2], [0, 1]]
