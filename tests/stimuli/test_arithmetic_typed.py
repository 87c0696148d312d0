"""The human protocol, and typed answers read and scored by the models' scorer."""

import math
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tracktale.stimuli.arithmetic import HUMAN_DATASETS, HUMAN_HORIZONS, PARADIGM
from tracktale.stimuli.arithmetic.executor import execute_context
from tracktale.stimuli.arithmetic.typed import (
    STATUSES,
    parse_typed_answer,
    score_intermediates,
    score_typed_answer,
)


@pytest.fixture(scope="module")
def human_set():
    return PARADIGM.generate_set("human", 7)


@pytest.mark.parametrize(
    ("typed", "value", "status"),
    [
        ("42", 42, "number"),
        ("  -7\t\n", -7, "number"),
        ("+8", 8, "number"),
        ("3.5", 3.5, "number"),
        (".5", 0.5, "number"),
        ("42.", 42.0, "number"),
        ("1,234", 1234, "number"),
        ("1,234,567.5", 1234567.5, "number"),
        ("1 234", 1234, "number"),
        ("1\u00a0234", 1234, "number"),
        ("-1\u202f234\u202f567", -1234567, "number"),
        ("1'234", 1234, "number"),
        ("2,500", 2500, "number"),
        ("2,5", 2.5, "decimal_comma"),
        ("-0,25", -0.25, "decimal_comma"),
        ("\u22125", -5, "number"),
        ("\u20135", -5, "number"),
        ("1e3", 1000.0, "number"),
        ("inf", math.inf, "infinite"),
        ("Infinity", math.inf, "infinite"),
        ("-INF", -math.inf, "infinite"),
        ("\u221e", math.inf, "infinite"),
        ("undefined", math.nan, "undefined"),
        ("Undefined.", math.nan, "undefined"),
        ("NaN", math.nan, "undefined"),
        ("not  a number", math.nan, "undefined"),
    ],
)
def test_what_people_type_is_read_as_the_number_they_mean(typed, value, status):
    answer = parse_typed_answer(typed)
    assert answer.status == status
    assert answer.text == typed
    if value != value:
        assert answer.value != answer.value
    else:
        assert answer.value == value
        assert type(answer.value) is type(value)


@pytest.mark.parametrize(
    "typed",
    ["abc", "12 apples", "3/4", "S7", "--5", "0.1.2", "1,23,4", "12 34", "5+3", "x" * 500, "∞∞"],
)
def test_junk_is_unparseable_not_an_error(typed):
    answer = parse_typed_answer(typed)
    assert (answer.value, answer.status) == (None, "unparseable")


@pytest.mark.parametrize("typed", ["", "   ", "\u3000\n"])
def test_blank_answers_are_told_apart_from_junk(typed):
    assert parse_typed_answer(typed).status == "blank"


@pytest.mark.parametrize("typed", [None, 5, 2.5, ["4"], {"a": 1}])
def test_values_that_are_not_text_are_unparseable(typed):
    assert parse_typed_answer(typed).status == "unparseable"


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=60))
def test_any_text_is_read_without_raising(text):
    answer = parse_typed_answer(text)
    assert answer.status in STATUSES
    assert (answer.value is None) == (answer.status in ("unparseable", "blank"))


@settings(max_examples=200, deadline=None)
@given(st.integers(min_value=-(10**12), max_value=10**12))
def test_every_integer_round_trips_with_and_without_separators(number):
    assert parse_typed_answer(str(number)).value == number
    assert parse_typed_answer(f"{number:,}").value == number
    assert parse_typed_answer(f"  {number:,}  ".replace(",", " ")).value == number


def test_the_human_protocol_is_integer_addition_and_subtraction_with_look_back(human_set):
    items = list(human_set.items)
    main = [item for item in items if item.role == "main"]
    practice = [item for item in items if item.role == "practice"]
    assert len(main) == len(HUMAN_DATASETS) * len(HUMAN_HORIZONS) * 4
    assert len(practice) == 2
    cells = Counter((i.condition["dataset"], i.condition["horizon"]) for i in main)
    assert set(cells.values()) == {4}
    assert {item.condition["lookback"] for item in main} == {1, 3}
    assert {item.condition["operation"] for item in main} == {"add", "sub"}
    for item in items:
        assert PARADIGM.verify(item) == []
        values = execute_context(item.context).values
        assert all(type(value) is int for value in values)  # no decimals for a person
    assert {PARADIGM.design_cell(item).split("/")[0] for item in items} == {"main", "practice"}
    assert {item.condition["horizon"] for item in practice} == {3}


def test_the_paper_protocols_have_no_practice_key():
    assert "practice_procedures" not in PARADIGM.resolve_config("pilot")
    assert PARADIGM.resolve_config("pilot", {"practice_procedures": 1})["practice_procedures"] == 1
    assert PARADIGM.resolve_config("human")["practice_procedures"] == 2


def test_a_typed_answer_is_scored_by_the_models_scorer(human_set):
    item = next(item for item in human_set.items if item.role == "main")
    right = item.answer
    tagged = PARADIGM.score_response(item, f"<answer>{right}</answer>")
    typed = score_typed_answer(PARADIGM, item, f"  {int(right):,} ")
    for column in ("correct", "correct_any", "correct_ieee", "correct_numeric", "parseable"):
        assert typed[column] == getattr(tagged, column)
    assert typed["correct"] is True
    assert typed["unparseable"] is False
    assert typed["parsed_answer"] == str(int(right))
    assert typed["answer_position"] is None  # a typed answer has no generated trace
    wrong = score_typed_answer(PARADIGM, item, str(int(right) + 1))
    assert (wrong["correct"], wrong["parseable"]) == (False, True)
    junk = score_typed_answer(PARADIGM, item, "no idea")
    assert (junk["correct"], junk["parseable"], junk["unparseable"]) == (False, False, True)
    assert junk["answer_status"] == "unparseable"


def test_intermediate_values_are_scored_against_the_procedure(human_set):
    item = next(item for item in human_set.items if item.condition["horizon"] == 5)
    values = execute_context(item.context).values
    typed = {f"S{k}": str(values[k - 1]) for k in range(3, 6)}
    typed["S5"] = str(values[4] + 1)
    typed["S99"] = "1"  # no such variable: ignored
    scored = score_intermediates(item.context, typed)
    assert scored["intermediate_correct"] == {"S3": True, "S4": True, "S5": False}
    assert scored["first_wrong_variable"] == "S5"
    assert scored["intermediate_accuracy"] == pytest.approx(2 / 3)
    assert score_intermediates(item.context, {})["intermediate_accuracy"] is None
