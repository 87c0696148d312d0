"""The box world simulator, the state language and ground truth under every instruction."""

import random
import re

import pytest

from tracktale.errors import TracktaleError
from tracktale.stimuli.boxes import PARADIGM
from tracktale.stimuli.boxes.language import (
    INSTRUCTIONS,
    check_synthetic_words,
    instruction_text,
    negates,
    sample_synthetic_words,
    vocabulary,
)
from tracktale.stimuli.boxes.world import Action, InconsistentWorld, State, simulate


def test_each_step_opens_one_box_and_obtains_its_key_permanently():
    box_keys = [2, 0, 1]
    states = simulate(box_keys, [Action(1, 0), Action(0, 2), Action(2, 1)])
    assert states[0] == State.initial(3)
    assert states[1] == State((False, True, False), (True, False, False))
    assert states[2] == State((True, True, False), (True, False, True))
    assert states[3] == State((True, True, True), (True, True, True))
    for before, after in zip(states, states[1:], strict=False):
        changed = [b != a for b, a in zip(before.values(), after.values(), strict=True)]
        assert sum(changed) == 2
        assert all(a for b, a in zip(before.values(), after.values(), strict=True) if b)


@pytest.mark.parametrize(
    ("actions", "message"),
    [
        ([Action(0, 2), Action(0, 2)], "action 2 (open box 0): box 0 is already open"),
        ([Action(0, 1)], "box 0 holds key 2, not key 1"),
        ([Action(3, 0)], "there is no box 3"),
    ],
)
def test_the_simulator_refuses_impossible_steps(actions, message):
    with pytest.raises(InconsistentWorld, match=re.escape(message)):
        simulate([2, 0, 1], actions)


@pytest.mark.parametrize("box_keys", [[0, 0, 1], [1, 2, 3], [], [True, False]])
def test_one_key_in_each_box(box_keys):
    with pytest.raises(InconsistentWorld, match="permutation"):
        simulate(box_keys, [])


def test_simulation_can_start_from_a_compressed_state():
    start = simulate([1, 0], [Action(0, 1)])[-1]
    assert simulate([1, 0], [Action(1, 0)], start)[-1] == State((True, True), (True, True))


def test_synthetic_words_are_letters_of_length_1_to_10_and_distinct_ignoring_case():
    rng = random.Random(0)
    for _ in range(500):
        words = sample_synthetic_words(rng)
        check_synthetic_words(words)
        assert len({w.lower() for w in words.values()}) == 4
    with pytest.raises(TracktaleError, match="not distinct"):
        check_synthetic_words({"box_functor": "ab", "key_functor": "AB"})
    with pytest.raises(TracktaleError, match="not 1-10 ASCII letters"):
        check_synthetic_words({"box_functor": "a1"})
    with pytest.raises(TracktaleError, match="not distinct"):
        check_synthetic_words({"box_name": "Key"})


def test_partial_synthetic_languages_keep_the_other_part_natural():
    synthetic = {"box_functor": "Qz", "key_functor": "Wy", "box_name": "xx", "key_name": "yyy"}
    assert vocabulary("nl", synthetic).state_names(1) == ["OPENED(BOX-0)", "OBTAINED(KEY-0)"]
    assert vocabulary("functor-only", synthetic).state_names(1) == ["Qz(BOX-0)", "Wy(KEY-0)"]
    assert vocabulary("argument-only", synthetic).state_names(1) == [
        "OPENED(xx-0)",
        "OBTAINED(yyy-0)",
    ]
    assert vocabulary("synthetic", synthetic).state_names(1) == ["Qz(xx-0)", "Wy(yyy-0)"]


def test_instruction_variants_state_the_papers_mappings():
    words = vocabulary("nl", {})
    normal = instruction_text("normal", words, 10, 3, 1)
    assert "OPENED(BOX-3)=True means that BOX-3 has been opened." in normal
    assert "OBTAINED(KEY-1)=False means that KEY-1 has not been obtained." in normal
    flipped = instruction_text("flipped-truth", words, 10, 3, 1)  # the paper's Example 2
    assert flipped.endswith(
        "OPENED(BOX-3)=False means that BOX-3 has been opened. OBTAINED(KEY-1)=False means that "
        "KEY-1 has been obtained. OPENED(BOX-3)=True means that BOX-3 has not been opened. "
        "OBTAINED(KEY-1)=True means that KEY-1 has not been obtained."
    )
    language = instruction_text("counterintuitive-language", words, 10, 3, 1)  # Example 3
    assert language.endswith(
        "OPENED(BOX-3)=True means that BOX-3 has not been opened. OBTAINED(KEY-1)=True means "
        "that KEY-1 has not been obtained. OPENED(BOX-3)=False means that BOX-3 has been "
        "opened. OBTAINED(KEY-1)=False means that KEY-1 has been obtained."
    )
    assert "There are 10 boxes and 10 keys here." in normal
    assert "There is 1 box and 1 key here." in instruction_text("normal", words, 1, 0, 0)
    assert [negates(i) for i in INSTRUCTIONS] == [False, True, True]
    with pytest.raises(TracktaleError, match="unknown instruction"):
        negates("reversed")


@pytest.mark.parametrize("instruction", INSTRUCTIONS)
def test_ground_truth_is_the_simulated_state_written_under_each_instruction(instruction):
    stimulus_set = PARADIGM.generate_set(
        "smoke", 5, {"instruction": [instruction], "language": ["nl"], "boxes": 4, "max_steps": 4}
    )
    negated = instruction != "normal"
    for item in stimulus_set:
        truth = item.truth
        states = simulate(
            truth["box_keys"],
            [Action(**a) for a in truth["compressed"] + truth["actions"]],
        )
        state = states[item.condition["probe_step"]]
        assert truth["expected"] == [value != negated for value in state.values()]
        opened_box = truth["actions"][0]["box"]
        assert f"OPENED(BOX-{opened_box})={not negated}" in item.answer
        assert item.answer.count(f"={negated}") == 8 - 2 * item.condition["probe_step"]
        assert truth["negated"] is negated and truth["instruction"] == instruction
