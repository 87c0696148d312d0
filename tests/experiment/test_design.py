"""The list design: Latin square, block order, fillers, practice, sides, seeding."""

from collections import Counter

import pytest

from tracktale.errors import TracktaleError
from tracktale.experiment.study.design import (
    LIST_IDS,
    DesignConfig,
    SessionPlan,
    assign_list,
    build_session,
    format_halves,
    session_seed_for,
)


def plans(human_set, seed=7):
    return {list_id: build_session(human_set, list_id, seed) for list_id in LIST_IDS}


def test_every_list_has_the_papers_46_trials_plus_two_practice_trials_per_format(human_set):
    for plan in plans(human_set).values():
        roles = Counter((trial.role, trial.task) for trial in plan.trials)
        assert roles == {
            ("main", "explicit"): 18,
            ("main", "implicit"): 18,
            ("filler", "comprehension"): 10,
            ("practice", "explicit"): 2,
            ("practice", "implicit"): 2,
        }
        assert [trial.trial_index for trial in plan.trials] == list(range(50))
        assert len({trial.item_id for trial in plan.trials}) == 50


def test_each_list_splits_every_cell_evenly_between_the_formats(human_set):
    cells = {item.item_id: item.condition["cell"] for item in human_set.select(role="main")}
    for plan in plans(human_set).values():
        split = Counter((cells[t.item_id], t.task) for t in plan.trials if t.role == "main")
        for cell, total in Counter(cells.values()).items():
            assert split[(cell, "explicit")] == split[(cell, "implicit")] == total // 2


def test_latin_square_every_item_appears_in_both_formats_across_lists(human_set):
    by_list = plans(human_set)
    for first, second in (("L1", "L3"), ("L2", "L4")):
        tasks = [
            {t.item_id: t.task for t in by_list[name].trials if t.role == "main"}
            for name in (first, second)
        ]
        assert tasks[0].keys() == tasks[1].keys()
        assert all(tasks[0][item] != tasks[1][item] for item in tasks[0])
    # L1 and L2 share the item-to-format assignment and differ in block order.
    same = [
        {t.item_id: t.task for t in by_list[n].trials if t.role == "main"} for n in ("L1", "L2")
    ]
    assert same[0] == same[1]
    assert by_list["L1"].block_formats == ("explicit", "explicit", "implicit", "implicit")
    assert by_list["L2"].block_formats == ("implicit", "implicit", "explicit", "explicit")


def test_practice_precedes_each_block_in_its_format_and_fillers_are_spaced(human_set):
    for plan in plans(human_set).values():
        blocks = {}
        for trial in plan.trials:
            blocks.setdefault(trial.block, []).append(trial)
        assert sorted(blocks) == [0, 1, 2, 3]
        for number in (0, 2):
            assert {t.role for t in blocks[number]} == {"practice"}
            assert {t.task for t in blocks[number]} == {plan.block_formats[number]}
        for number in (1, 3):
            roles = [t.role for t in blocks[number]]
            assert roles[0] == "main" and roles.count("filler") == 5
            assert not any(a == b == "filler" for a, b in zip(roles, roles[1:], strict=False))


def test_sides_are_balanced(human_set):
    for plan in plans(human_set).values():
        sides = Counter((t.task, t.block, t.good_side) for t in plan.trials if t.good_side)
        implicit_main = next(b for b, f in enumerate(plan.block_formats) if f == "implicit") + 1
        assert sides[("implicit", implicit_main, "left")] == 9
        assert sides[("implicit", implicit_main, "right")] == 9
        fillers = Counter(t.good_side for t in plan.trials if t.task == "comprehension")
        assert fillers == {"left": 5, "right": 5}
        assert all(t.good_side is None for t in plan.trials if t.task == "explicit")


def test_seeded_reproducible_and_stored(human_set):
    first = build_session(human_set, "L3", 12345)
    assert build_session(human_set, "L3", 12345) == first
    assert SessionPlan.from_dict(first.to_dict()) == first
    other = build_session(human_set, "L3", 54321)
    assert [t.item_id for t in other.trials] != [t.item_id for t in first.trials]
    # The order changes with the participant; the item-to-format assignment does not.
    assert {(t.item_id, t.task) for t in other.trials} == {
        (t.item_id, t.task) for t in first.trials
    }
    changed = build_session(human_set, "L3", 12345, DesignConfig(seed=2))
    assert {(t.item_id, t.task) for t in changed.trials} != {
        (t.item_id, t.task) for t in first.trials
    }
    assert session_seed_for(1, "study", "PID") == session_seed_for(1, "study", "PID")
    assert session_seed_for(1, "study", "PID") != session_seed_for(1, "study", "PID2")


def test_list_assignment_is_balanced_and_refills_dropouts():
    counts: Counter[str] = Counter()
    for _ in range(12):
        counts[assign_list(counts)] += 1
    assert set(counts.values()) == {3}
    counts["L2"] -= 1  # someone on L2 returned the study
    assert assign_list(counts) == "L2"


def test_format_halves_share_out_odd_cells(human_set):
    items = (
        human_set.select(role="main", cell="C1.F0")[:3]
        + human_set.select(role="main", cell="C2.F0")[:3]
    )
    first, second = format_halves(items, seed=1)
    assert len(first) + len(second) == 6 and abs(len(first) - len(second)) <= 1
    per_cell = Counter(item.condition["cell"] for item in first)
    assert sorted(per_cell.values()) == [1, 2]


def test_bad_inputs_are_refused(human_set):
    with pytest.raises(TracktaleError, match="unknown list 'L9'"):
        build_session(human_set, "L9", 1)
    with pytest.raises(TracktaleError, match="needs 10 practice items"):
        build_session(human_set, "L1", 1, DesignConfig(practice_per_format=5))


def test_each_format_practises_both_practice_cells_and_the_versions_swap_them(human_set):
    cells = {item.item_id: item.condition["cell"] for item in human_set.select(role="practice")}
    assert sorted(cells.values()) == ["C1.F0", "C1.F0", "C2.F0", "C2.F0"]
    by_list = plans(human_set)
    for plan in by_list.values():
        practised = Counter((t.task, cells[t.item_id]) for t in plan.trials if t.role == "practice")
        assert practised == {
            ("explicit", "C1.F0"): 1,
            ("explicit", "C2.F0"): 1,
            ("implicit", "C1.F0"): 1,
            ("implicit", "C2.F0"): 1,
        }
    for first, second in (("L1", "L3"), ("L2", "L4")):
        tasks = [
            {t.item_id: t.task for t in by_list[name].trials if t.role == "practice"}
            for name in (first, second)
        ]
        assert all(tasks[0][item] != tasks[1][item] for item in tasks[0])
