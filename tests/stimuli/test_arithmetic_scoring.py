"""Scoring model outputs: answer extraction, number parsing, matching and the five metrics."""

import dataclasses
import math

import pytest

from tracktale.errors import TracktaleError
from tracktale.stimuli.arithmetic.scoring import (
    answer_position,
    caa_column,
    extract_spans,
    faa_column,
    parse_number,
    score_output,
    step_following,
    values_match,
)


def texts(output):
    return [span.text for span in extract_spans(output)]


@pytest.mark.parametrize(
    ("output", "spans"),
    [
        ("<answer>42</answer>", ["42"]),
        ("no tags at all: 42", []),
        ("", []),
        ("<answer>1</answer> then <answer>2</answer>", ["1", "2"]),  # repeated
        ("<answer><answer>7</answer></answer>", ["7"]),  # nested: the inner span, once
        ("<answer>1 <answer>2</answer> 3</answer>", ["2"]),  # an open tag reopened
        ("<answer>42", []),  # never closed
        ("42</answer>", []),  # stray closing tag
        ("</answer><answer>5</answer></answer>", ["5"]),
        ("<ANSWER> 3.5 </Answer>", [" 3.5 "]),  # tags in any case
        ("<answer></answer>", [""]),
        ("<answer>a\nb</answer>", ["a\nb"]),  # spans may cross lines
        ("<answer >4</answer>", []),  # not the tag
    ],
)
def test_extraction_of_nested_repeated_malformed_and_missing_tags(output, spans):
    assert texts(output) == spans


def test_span_positions_point_at_the_opening_tag():
    output = "S3 = 5\n<answer>5</answer>"
    (span,) = extract_spans(output)
    assert output[span.start :].startswith("<answer>") and span.value == 5


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("42", 42),
        (" -12 ", -12),
        ("+7", 7),
        ("0.5", 0.5),
        (".5", 0.5),
        ("3.", 3.0),
        ("1.2e-5", 1.2e-5),
        ("1E3", 1000.0),
        ("1,234,567.5", 1234567.5),
        ("\u22123", -3),
        ("1.2 x 10^5", 1.2e5),
        ("1.2 × 10^{-3}", 1.2e-3),
        ("-2 \\times 10^(4)", -2e4),
        ("5*10^2", 500.0),
        ("inf", math.inf),
        ("-Infinity", -math.inf),
        ("+∞", math.inf),
        ("1e400", math.inf),
        ("9" * 5000, math.inf),  # too long for an exact integer: binary64 says inf
        ("FINAL_RESULT", None),
        ("S7", None),
        ("3/4", None),
        ("undefined", None),
        ("", None),
        ("42 apples", None),
        ("1,23", None),
        ("1_000", None),
    ],
)
def test_number_grammar(text, value):
    parsed = parse_number(text)
    assert parsed == value and type(parsed) is type(value)


def test_long_unparseable_spans_fail_fast():
    # A backtracking pattern would take minutes on this; the grammar's takes milliseconds.
    assert parse_number("9" * 100_000 + "x") is None
    assert parse_number("1" * 100_000 + ".5 x 10^") is None


def test_integers_parse_exactly_and_nan_is_a_number():
    assert parse_number(str(3**200)) == 3**200
    assert math.isnan(parse_number("NaN")) and math.isnan(parse_number("-nan"))


@pytest.mark.parametrize(
    ("answer", "reference", "match"),
    [
        (0.333, 1 / 3, True),
        (0.3333, 1 / 3, True),
        (0.33, 1 / 3, False),
        (13, 13.0, True),
        (13.0004, 13, True),
        (13.0006, 13, False),
        (0, -0.0004, True),  # -0.0 equals 0
        (3**200, 3**200, True),  # exact integers compare exactly
        (float(3**200), 3**200, False),  # a float is not the exact integer
        (1.4300000000000001e190, 1.4300000000000001e190, True),
        (math.inf, math.inf, True),
        (-math.inf, -math.inf, True),
        (math.inf, -math.inf, False),
        (1e308, math.inf, False),
        (math.nan, math.nan, True),  # NaN answers a NaN reference
        (0, math.nan, False),
        (math.nan, 0, False),
        (math.inf, math.nan, False),
    ],
)
def test_matching_after_rounding_to_three_decimals(answer, reference, match):
    assert values_match(answer, reference) is match


def test_faa_and_caa_differ_when_a_later_answer_is_right():
    output = "Step 1: S3 = 13\n<answer>12</answer>\nWait.\n<answer>13</answer>"
    score = score_output(output, 13, 1)
    assert not score.correct and score.correct_any and score.parseable
    assert score.n_spans == score.n_answers == 2 and score.first_answer == "12"


def test_an_echoed_template_is_the_first_extracted_answer_but_not_the_first_number():
    output = "Format: <answer>FINAL_RESULT</answer> so <answer> 7 </answer>"
    score = score_output(output, 7, 3)
    # The paper's words: the first extracted answer counts, and it is no number.
    assert not score.correct and score.correct_any and score.parseable
    assert score.correct_numeric and score.first_answer_rules_differ
    assert score.n_spans == 2 and score.n_answers == 1
    assert score.first_answer == "FINAL_RESULT" and score.first_numeric_answer == "7"
    assert score.answer_position == 50.0  # AP: the first *parseable* span (token 2 of 4)
    empty = score_output("<answer>FINAL_RESULT</answer>", 7, 3)
    assert not empty.parseable and not empty.correct and not empty.correct_any
    assert not empty.correct_numeric and not empty.first_answer_rules_differ
    assert empty.answer_position is None and empty.first_numeric_answer is None


def test_both_references_are_scored():
    output = "<answer>inf</answer> then <answer>3</answer>"
    score = score_output(output, 3, 2, ieee_reference=math.inf)
    assert not score.correct and score.correct_any  # the paper's executor: 3
    assert score.correct_ieee and score.correct_any_ieee  # ours: inf
    assert faa_column() == "correct" and faa_column("ieee", "numeric") == "correct_numeric_ieee"
    assert caa_column("ieee") == "correct_any_ieee"
    with pytest.raises(TracktaleError, match="unknown reference 'exact'"):
        faa_column("exact")


def test_missing_answer_scores_zero_everywhere():
    score = score_output("I could not finish.", 7, 3)
    assert dataclasses.asdict(score) == {
        "correct": False,
        "correct_any": False,
        "correct_numeric": False,
        "correct_ieee": False,
        "correct_any_ieee": False,
        "correct_numeric_ieee": False,
        "parseable": False,
        "answer_position": None,
        "generated_steps": 0,
        "expected_steps": 3,
        "step_following": "under",
        "n_spans": 0,
        "n_answers": 0,
        "first_answer": None,
        "first_numeric_answer": None,
        "first_answer_rules_differ": False,
    }


def test_answer_position_counts_whitespace_tokens_before_the_first_answer():
    assert score_output("<answer>5</answer> trailing words here", 5, 1).answer_position == 0
    # 3 tokens before the tag, 4 in all.
    assert score_output("one two three <answer>5</answer>", 5, 1).answer_position == 75.0
    output = "a b <answer>x</answer> c <answer>5</answer>"
    assert score_output(output, 5, 1).answer_position == 80.0  # tokens 0-3 come first
    assert score_output("is<answer>5</answer> ok", 5, 1).answer_position == 0.0


def test_answer_position_with_tokenizer_offsets():
    output = "ab<answer>5</answer>"
    # Tokens "ab", "<answer>", "5", "</answer>": one before the tag, four in all.
    offsets = [(0, 2), (2, 10), (10, 11), (11, 20)]
    assert answer_position(output, 2, offsets) == 25.0
    assert answer_position(output, 2) == 0.0  # the tag starts inside the only token
    assert answer_position(output, 2, [(0, 3), (3, 20)]) == 0.0  # a token straddling it


@pytest.mark.parametrize(
    ("output", "generated", "category"),
    [
        ("Step 1: S3 = 1\nStep 2: S4 = 2\nFinal Step: Return S4", 2, "exact"),
        ("Step 1: S3 = 1", 1, "under"),
        ("**Step 1**: 1\nStep 2: 2\nStep 2: again\nStep 3", 4, "over"),
        ("step 1 and STEP 2 and Steps 3", 0, "under"),
        ("Step 12: S14 = 3 (Step 12 checked)", 2, "exact"),
    ],
)
def test_step_following(output, generated, category):
    score = score_output(output, 0, 2)
    assert score.generated_steps == generated and score.step_following == category


def test_step_following_categories():
    assert [step_following(g, 5) for g in (0, 4, 5, 6)] == ["under", "under", "exact", "over"]


@pytest.mark.parametrize(
    ("output", "reference", "correct"),
    [
        ("<answer>inf</answer>", math.inf, True),
        ("<answer>Infinity</answer>", math.inf, True),
        ("<answer>-inf</answer>", math.inf, False),
        ("<answer>nan</answer>", math.nan, True),
        ("<answer>NaN</answer>", math.nan, True),
        ("<answer>undefined</answer>", math.nan, False),
        ("<answer>0</answer>", math.nan, False),
        ("<answer>1e999</answer>", math.inf, True),
    ],
)
def test_inf_and_nan_answers(output, reference, correct):
    assert score_output(output, reference, 1).correct is correct
