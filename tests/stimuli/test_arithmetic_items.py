"""Arithmetic items: datasets, counts, determinism, the look-back rule, the prompt, verify."""

import functools
from collections import Counter

import pytest

from tests.conftest import SHARED
from tracktale.errors import TracktaleError
from tracktale.item import content_id, item_from_dict
from tracktale.stimuli.arithmetic import HORIZONS, PAPER_MAX_NEW_TOKENS
from tracktale.stimuli.arithmetic.datasets import (
    ALL_DATASETS,
    PAPER_DATASETS,
    expand_datasets,
    get_dataset,
)
from tracktale.stimuli.arithmetic.executor import parse_procedure, split_context
from tracktale.stimuli.arithmetic.items import parse_step_text
from tracktale.stimuli.arithmetic.render import INSTRUCTION_LINES, instructions
from tracktale.stimuli.registry import get_paradigm
from tracktale.stimulus_set import items_jsonl

ARITHMETIC = get_paradigm("arithmetic")
SMALL = {"datasets": ["int_1-10_add_lb1", "float_0-1_mixed_lb3"], "horizons": [5, 25]}


@functools.cache
def generated(seed=1, **overrides):
    config = {**SMALL, "per_horizon": 3, **overrides}
    return ARITHMETIC.generate_set("model", seed, config)


def test_the_paper_datasets():
    assert len(PAPER_DATASETS) == 55 and len(set(PAPER_DATASETS)) == 55
    datasets = [ALL_DATASETS[name] for name in PAPER_DATASETS]
    first = [d for d in datasets if d.lookback == 1]
    assert len(first) == 25 and {d.operation for d in first} == {
        "add",
        "sub",
        "mul",
        "div",
        "mixed",
    }
    deeper = [d for d in datasets if d.lookback > 1]
    assert len(deeper) == 30 and {d.operation for d in deeper} == {"mixed"}
    assert {d.setting.name for d in datasets} == {
        "float_0-1",
        "int_1-10",
        "float_1-10",
        "int_10-100",
        "float_10-100",
    }
    assert HORIZONS == (5, 15, 25, 35, 45, 55, 65, 75, 85, 95)


def test_model_protocol_is_55000_items_and_pilot_1100():
    assert ARITHMETIC.expected_count(ARITHMETIC.resolve_config("model")) == 55_000
    assert ARITHMETIC.expected_count(ARITHMETIC.resolve_config("pilot")) == 1_100
    assert ARITHMETIC.max_new_tokens < PAPER_MAX_NEW_TOKENS == 32_768


def test_counts_match_and_each_cell_has_per_horizon_items():
    stimulus_set = generated()
    config = ARITHMETIC.resolve_config("model", {**SMALL, "per_horizon": 3})
    assert len(stimulus_set) == ARITHMETIC.expected_count(config) == 12
    assert set(stimulus_set.manifest.counts.values()) == {3}
    assert "main/h05/int_1-10_add_lb1" in stimulus_set.manifest.counts
    assert stimulus_set.manifest.config["datasets"] == SMALL["datasets"]


def test_same_seed_same_bytes_other_seed_other_items():
    first = ARITHMETIC.generate_set("model", 4, {**SMALL, "per_horizon": 3})
    again = ARITHMETIC.generate_set("model", 4, {**SMALL, "per_horizon": 3})
    other = ARITHMETIC.generate_set("model", 5, {**SMALL, "per_horizon": 3})
    assert items_jsonl(first.items) == items_jsonl(again.items)
    assert first.manifest == again.manifest
    assert not {i.item_id for i in first} & {i.item_id for i in other}


def test_a_cell_does_not_depend_on_the_other_cells_and_smaller_sets_are_prefixes():
    whole = generated(per_horizon=5)
    alone = ARITHMETIC.generate_set(
        "model", 1, {"datasets": ["float_0-1_mixed_lb3"], "horizons": [25], "per_horizon": 2}
    )
    cell = whole.select(dataset="float_0-1_mixed_lb3", horizon=25)
    assert [i.item_id for i in alone] == [i.item_id for i in cell[:2]]


def test_items_are_distinct_even_where_few_procedures_exist():
    # Horizon 1 with integer inputs in 1..10 and one operator: 100 inputs x 2 orders.
    stimulus_set = ARITHMETIC.generate_set(
        "model", 1, {"datasets": ["int_1-10_add_lb1"], "horizons": [1], "per_horizon": 150}
    )
    assert len({item.context for item in stimulus_set}) == 150
    with pytest.raises(TracktaleError, match="cannot draw another distinct procedure"):
        ARITHMETIC.generate_set(
            "model", 1, {"datasets": ["int_1-10_add_lb1"], "horizons": [1], "per_horizon": 201}
        )


def test_item_fields_carry_what_a_generic_runner_needs():
    item = generated().items[0]
    assert item.paradigm == "arithmetic" and item.role == "main"
    assert item.prompt.endswith(item.context)
    assert item.messages == ({"role": "user", "content": item.prompt},)
    assert item.question is None and item.choice is None
    assert item.condition == {
        "dataset": "int_1-10_add_lb1",
        "input_range": "1-10",
        "data_type": "int",
        "operation": "add",
        "lookback": 1,
        "horizon": 5,
    }
    assert set(item.truth) == {
        "inputs",
        "steps",
        "reference",
        "flags",
        "edge_case",
        "paper_reference",
        "paper_variable",
        "paper_returned_assigned",
        "paper_skipped",
        "references_differ",
    }
    assert item.meta == {"example": 0, "prompt_version": "paper"}
    score = ARITHMETIC.score_response(item, f"<answer>{item.answer}</answer>")
    assert score.correct and score.parseable


def test_the_prompt_is_appendix_b_line_for_line():
    item = generated().items[0]
    lines = item.prompt.split("\n")
    assert lines[: len(INSTRUCTION_LINES)] == list(INSTRUCTION_LINES)
    assert lines[len(INSTRUCTION_LINES)] == "Procedure:"
    assert lines[len(INSTRUCTION_LINES) + 1 : len(INSTRUCTION_LINES) + 4] == [
        "function(x, y):",
        "Let S1 = x",
        "Let S2 = y",
    ]
    assert lines[-2] == "Inputs:" and lines[-1].startswith("x = ")
    assert "" not in lines
    assert "<answer>42</answer>\nExample (incorrect)" in instructions("completed")
    assert "- Example (correct):\nExample (incorrect):" in instructions("paper")


def test_the_paper_prompt_text_is_in_the_seed_paper():
    paper = SHARED / "seeds" / "001_ce24e7b476551b6b.txt"
    if not paper.is_file():
        pytest.skip(f"{paper} is not here")
    text = paper.read_text(encoding="utf-8").replace("\u2019", "'")
    positions = [text.index(line) for line in INSTRUCTION_LINES]  # each is there ...
    assert positions == sorted(positions)  # ... in the paper's order


def test_completed_prompt_version_differs_only_in_the_example():
    paper = generated().items[0]
    completed = generated(prompt_version="completed").items[0]
    assert completed.context == paper.context
    assert completed.prompt.replace("<answer>42</answer>\n", "", 1) == paper.prompt


def operands(item):
    steps, _ = parse_procedure(split_context(item.context)[0])
    return steps


@pytest.mark.parametrize("lookback", range(2, 8))
def test_operands_are_two_distinct_of_the_k_most_recent(lookback):
    stimulus_set = ARITHMETIC.generate_set(
        "model",
        3,
        {"datasets": [f"int_10-100_mixed_lb{lookback}"], "horizons": [60], "per_horizon": 60},
    )
    pairs = Counter()
    for item in stimulus_set:
        for t, (i, op, j) in enumerate(operands(item), start=3):
            assert i != j
            assert max(1, t - lookback) <= min(i, j) and max(i, j) < t
            if t > lookback + 1:
                pairs[(t - i, t - j)] += 1
            assert op in "+-*/"
    # Every ordered pair of distinct distances 1..k occurs, about equally often.
    expected = lookback * (lookback - 1)
    assert len(pairs) == expected
    mean = sum(pairs.values()) / expected
    assert min(pairs.values()) > 0.6 * mean and max(pairs.values()) < 1.4 * mean


def test_lookback_one_pairs_the_previous_variable_with_y():
    stimulus_set = ARITHMETIC.generate_set(
        "model", 3, {"datasets": ["float_1-10_sub_lb1"], "horizons": [50], "per_horizon": 10}
    )
    orders = Counter()
    for item in stimulus_set:
        steps = operands(item)
        assert {steps[0][0], steps[0][2]} == {1, 2}
        for t, (i, op, j) in enumerate(steps[1:], start=4):
            assert {i, j} == {t - 1, 2} and op == "-"
            orders[i == 2] += 1
    assert 0.4 < orders[True] / sum(orders.values()) < 0.6


def test_mixed_operators_are_uniform_and_single_ones_fixed():
    stimulus_set = generated(per_horizon=50)
    ops = Counter(
        op for item in stimulus_set.select(operation="mixed") for _, op, _ in operands(item)
    )
    assert set(ops) == set("+-*/")
    assert max(ops.values()) < 1.3 * min(ops.values())
    assert {op for item in stimulus_set.select(operation="add") for _, op, _ in operands(item)} == {
        "+"
    }


def test_inputs_follow_the_input_setting():
    for item in generated(per_horizon=10):
        dataset = get_dataset(item.condition["dataset"])
        for value in item.truth["inputs"].values():
            assert dataset.setting.low <= value <= dataset.setting.high
            if dataset.setting.data_type == "int":
                assert type(value) is int
            else:
                assert type(value) is float and round(value, 3) == value


def test_edge_cases_are_kept_and_flagged():
    stimulus_set = ARITHMETIC.generate_set(
        "model", 1, {"datasets": ["float_0-1_mixed_lb2"], "horizons": [95], "per_horizon": 40}
    )
    flagged = [item for item in stimulus_set if item.truth["edge_case"]]
    assert flagged, "95-step mixed procedures on [0,1] hit IEEE edge cases"
    for item in flagged:
        flags = item.truth["flags"]
        assert any(flags.values()) or item.answer in ("inf", "-inf", "nan")
        assert ARITHMETIC.score_response(item, f"<answer>{item.answer}</answer>").correct
    assert all(
        not any(item.truth["flags"].values()) for item in stimulus_set if item not in flagged
    )


def test_generated_items_verify():
    for item in generated(per_horizon=5):
        assert ARITHMETIC.verify(item) == []


def tampered(item, **changes):
    """The item edited by hand, its id fixed up to match (so only verify can tell)."""
    data = item.to_dict()
    data["truth"] = {**data["truth"], **changes.pop("truth", {})}
    data.update(changes)
    data["item_id"] = content_id(data)
    return item_from_dict(data)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda i: {"answer": "12"}, "field 'answer'"),
        (lambda i: {"context": i.context.replace(" + ", " - ", 1)}, "field 'context'"),
        (lambda i: {"truth": {"reference": "1"}}, "truth 'reference'"),
        (lambda i: {"truth": {"edge_case": True}}, "truth 'edge_case'"),
        (lambda i: {"truth": {"inputs": {"x": 11, "y": 2}}}, "outside"),
        (lambda i: {"truth": {"inputs": {"x": 2.0, "y": 2}}}, "is not int"),
        (lambda i: {"truth": {"steps": i.truth["steps"][:-1]}}, "horizon says"),
        (lambda i: {"truth": {"steps": ["S3 = S1 + S1", *i.truth["steps"][1:]]}}, "distinct"),
        (lambda i: {"truth": {"steps": ["S3 = S1 * S2", *i.truth["steps"][1:]]}}, "operator"),
        (lambda i: {"truth": {"steps": ["S3 = S1 plus S2"]}}, "truth step"),
        (lambda i: {"condition": {**i.condition, "lookback": 2}}, "condition"),
        (lambda i: {"condition": {**i.condition, "dataset": "nope"}}, "unknown dataset"),
        (lambda i: {"meta": {"example": 0, "prompt_version": "completed"}}, "field 'prompt'"),
        (lambda i: {"paradigm": "narrative"}, "belongs to paradigm"),
    ],
)
def test_verify_reports_items_edited_after_generation(change, message):
    item = generated().items[1]
    edited = tampered(item, **change(item))
    problems = ARITHMETIC.verify(edited)
    assert problems and any(message in problem for problem in problems), problems


def test_steps_of_truth_parse():
    assert parse_step_text("S7 = S6 * S4") == (7, 6, "*", 4)


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"datasets": ["int_1-10_pow_lb1"]}, "unknown dataset"),
        ({"datasets": ["int_1-10_add_lb8"]}, "unknown dataset"),
        ({"datasets": ["all", "int_1-10_add_lb1"]}, "twice"),
        ({"horizons": [0]}, "positive"),
        ({"horizons": [5, 5]}, "twice"),
        ({"horizons": [1001]}, "at most 1000"),
        ({"per_horizon": 0}, "at least 1"),
        ({"prompt_version": "new"}, "not one of"),
        ({"templates": ["standard"]}, "no option --templates"),
    ],
)
def test_bad_configs_are_one_line_errors(overrides, message):
    with pytest.raises(TracktaleError, match=message) as error:
        ARITHMETIC.resolve_config("model", overrides)
    assert "\n" not in str(error.value)


def test_all_expands_to_the_paper_datasets_in_order():
    assert [d.name for d in expand_datasets(["all"])] == list(PAPER_DATASETS)
    assert [d.name for d in expand_datasets(["all", "int_1-10_add_lb2"])][-1] == "int_1-10_add_lb2"
