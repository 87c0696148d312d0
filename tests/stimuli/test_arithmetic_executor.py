"""The reference executor: grammar, IEEE edge cases, and agreement with direct computation."""

import math
import sys

import numpy as np
import pytest

from tracktale.stimuli.arithmetic.datasets import ALL_DATASETS, PAPER_DATASETS
from tracktale.stimuli.arithmetic.executor import (
    ProcedureError,
    divide,
    execute,
    execute_context,
    format_value,
    parse_literal,
    parse_procedure,
    parse_value,
    round3,
    split_context,
)
from tracktale.stimuli.arithmetic.items import parse_step_text
from tracktale.stimuli.arithmetic.render import render_context, render_procedure, step_texts
from tracktale.stimuli.registry import get_paradigm

ARITHMETIC = get_paradigm("arithmetic")


def procedure(*steps):
    return render_procedure(step_texts(steps))


def run(x, y, *steps):
    return execute(procedure(*steps), x, y)


def test_figure_one_layout_and_values():
    text = procedure((1, "+", 2), (3, "*", 2), (4, "/", 2), (5, "-", 3), (6, "*", 4))
    assert text == (
        "function(x, y):\nLet S1 = x\nLet S2 = y\n"
        "Step 1: S3 = S1 + S2\nStep 2: S4 = S3 * S2\nStep 3: S5 = S4 / S2\n"
        "Step 4: S6 = S5 - S3\nStep 5: S7 = S6 * S4\nFinal Step: Return S7"
    )
    result = execute(text, 5, 8)
    assert result.values == (5, 8, 13, 104, 13.0, 0.0, 0.0)
    assert result.returned == 7 and result.result == 0.0
    assert parse_procedure(text) == (
        [(1, "+", 2), (3, "*", 2), (4, "/", 2), (5, "-", 3), (6, "*", 4)],
        7,
    )


def test_integers_stay_exact_until_a_division():
    big = 2**60 + 1
    result = run(big, 3, (1, "*", 2), (3, "+", 1), (4, "/", 2))
    assert result.values[2] == 3 * big and type(result.values[2]) is int
    assert result.values[3] == 4 * big  # beyond 2**53: exact, unlike a float
    assert type(result.values[4]) is float
    assert result.values[4] == (4 * big) / 3  # correctly rounded true division


@pytest.mark.parametrize(
    ("x", "y", "op", "expected", "flag"),
    [
        (1, 0, "/", math.inf, "division_by_zero"),
        (-1, 0, "/", -math.inf, "division_by_zero"),
        (1.5, -0.0, "/", -math.inf, "division_by_zero"),
        (-2.0, -0.0, "/", math.inf, "division_by_zero"),
        (0, 0, "/", math.nan, "division_by_zero"),
        (1e308, 10.0, "*", math.inf, "overflow"),
        (-1e308, 1e308, "-", -math.inf, "overflow"),
        (1e308, 1e-10, "/", math.inf, "overflow"),
        (10**200, 10**200, "*", math.inf, "overflow"),  # an integer past binary64's range
        (-(10**200), 10**200, "*", -math.inf, "overflow"),
        (10**300, 1, "/", 1e300, None),
    ],
)
def test_ieee_edge_cases_are_explicit_and_flagged(x, y, op, expected, flag):
    result = run(x, y, (1, op, 2))
    value = result.result
    assert (math.isnan(value) and math.isnan(expected)) or value == expected
    flagged = {name for name, steps in result.flags.items() if steps}
    assert flagged == ({flag} if flag else set()) | ({"invalid"} if x == y == 0 else set())


def test_integers_past_the_float_range_overflow_and_quotients_are_ieee():
    result = run(10**308, 1, (1, "*", 1), (3, "/", 2))
    assert result.values[2] == math.inf and result.flags["overflow"] == [1]
    assert result.result == math.inf
    # Quotients of exact integers are correctly rounded, and too large ones are inf.
    assert divide(10**300, 1) == 1e300
    assert divide(10**400, 3) == math.inf and divide(-(10**400), 3) == -math.inf


def test_nan_and_inf_propagate_and_only_their_origin_is_flagged():
    # S3 = 1/0 = inf; S4 = inf - inf = nan (invalid); S5 = nan + 1 (propagation, no flag);
    # S6 = 1 / inf = 0 (finite again).
    result = run(1, 0, (1, "/", 2), (3, "-", 3), (4, "+", 1), (1, "/", 3))
    assert math.isinf(result.values[2]) and math.isnan(result.values[3])
    assert math.isnan(result.values[4]) and result.values[5] == 0.0
    assert result.flags == {"division_by_zero": [1], "overflow": [], "invalid": [2]}


HEAD = "function(x, y):\nLet S1 = x\nLet S2 = y\n"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (HEAD.replace("(x, y)", "(x)") + "Step 1: S3 = S1 + S2\nFinal Step: Return S3", "line 1"),
        (HEAD + "Final Step: Return S2", "no steps"),
        (HEAD + "Step 1: S3 = S1 ^ S2\nFinal Step: Return S3", "line 4"),
        (HEAD + "Step 1: S3 = S01 + S2\nFinal Step: Return S3", "line 4"),
        (HEAD + "Step 2: S3 = S1 + S2\nFinal Step: Return S3", "Step 1"),
        (HEAD + "Step 1: S4 = S1 + S2\nFinal Step: Return S4", "assigning S4"),
        (HEAD + "Step 1: S3 = S1 + S2\nFinal Step: Return S2", "Return S3"),
        (HEAD + "Step 1: S3 = S1 + S2\nStep 2: S4 = S5 + S2\nFinal Step: Return S4", "S5"),
        (HEAD + "Step 1: S3 = S3 + S2\nFinal Step: Return S3", "S3"),
        (HEAD + "Step 1: S3 = S1 + S2 \nFinal Step: Return S3", "line 4"),
    ],
)
def test_text_outside_the_grammar_is_a_one_line_error(text, message):
    with pytest.raises(ProcedureError, match=message) as error:
        execute(text, 1, 2)
    assert "\n" not in str(error.value)


def test_eval_is_never_reachable():
    # A Python expression in place of an operand is not a step: it is rejected, not run.
    text = procedure((1, "+", 2)).replace("S1 + S2", "__import__('os').getpid() + S2")
    with pytest.raises(ProcedureError, match="not a step"):
        execute(text, 1, 2)


def test_context_round_trip_and_errors():
    context = render_context(procedure((1, "+", 2)), 0.5, 3.0)
    assert context.endswith("Inputs:\nx = 0.5, y = 3.0")
    text, x, y = split_context(context)
    assert (x, y) == (0.5, 3.0) and type(y) is float
    assert execute_context(context).result == 3.5
    with pytest.raises(ProcedureError, match="inputs line"):
        split_context(context.replace("y = 3.0", "y = three"))
    with pytest.raises(ProcedureError, match="Procedure:"):
        split_context(text)


def test_literals_and_stored_values():
    assert parse_literal("8") == 8 and type(parse_literal("8")) is int
    assert type(parse_literal("8.0")) is float
    with pytest.raises(ProcedureError):
        parse_literal("1e3")
    for value in (13, -4, 13.0, 0.1 + 0.2, 1.4300000000000001e190, math.inf, -math.inf, 2**900):
        restored = parse_value(format_value(value))
        assert restored == value and type(restored) is type(value)
    assert math.isnan(parse_value(format_value(math.nan)))
    with pytest.raises(ProcedureError):
        parse_value("twelve")


def direct(x, y, steps):
    """Execute parsed (t, i, op, j) steps independently of the executor: numpy for IEEE."""
    values = {1: x, 2: y}
    for t, i, op, j in steps:
        a, b = values[i], values[j]
        if op == "/":
            try:
                result = a / b
            except (ZeroDivisionError, OverflowError):
                with np.errstate(all="ignore"):
                    result = float(np.float64(a) / np.float64(b))
        else:
            result = {"+": a + b, "-": a - b, "*": a * b}[op]
        if isinstance(result, int) and abs(result) > sys.float_info.max:
            result = math.inf if result > 0 else -math.inf
        values[t] = result
    return values[len(values)]


@pytest.mark.parametrize("name", PAPER_DATASETS)
def test_executor_agrees_with_direct_computation_on_every_dataset(name):
    config = ARITHMETIC.resolve_config(
        "model", {"datasets": [name], "horizons": [5, 45, 95], "per_horizon": 4}
    )
    for item in ARITHMETIC.generate(config, seed=11):
        inputs = item.truth["inputs"]
        steps = [parse_step_text(text) for text in item.truth["steps"]]
        expected = direct(inputs["x"], inputs["y"], steps)
        reference = parse_value(item.truth["reference"])
        assert type(reference) is type(expected)
        assert reference == expected or (math.isnan(reference) and math.isnan(expected))


def test_every_nameable_dataset_executes():
    names = [name for name in ALL_DATASETS if name not in PAPER_DATASETS]
    config = ARITHMETIC.resolve_config(
        "model", {"datasets": names, "horizons": [7], "per_horizon": 1}
    )
    assert len(list(ARITHMETIC.generate(config, seed=2))) == len(names) == 175 - 55


@pytest.mark.parametrize(
    "value",
    [0.0, -0.0, 0.0005, 2.675, -1234.56789, 2.0**52 - 0.5, 2.0**52, 1.43e190, -1e300, 7, 3**200],
)
def test_round3_is_round_to_three_decimals(value):
    assert round3(value) == round(value, 3) and type(round3(value)) is type(round(value, 3))


def test_round3_leaves_inf_and_nan():
    assert round3(math.inf) == math.inf and round3(-math.inf) == -math.inf
    assert math.isnan(round3(math.nan))
