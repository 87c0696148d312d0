"""Parsing answers into (functor, argument, value) triples, State-EM and Step-EM."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tracktale.errors import TracktaleError
from tracktale.stimuli.boxes import PARADIGM
from tracktale.stimuli.boxes.scoring import ScoringRules, parse_answer, state_scores

EXAMPLE_4 = {"box_functor": "NvSWxvJb", "key_functor": "B", "box_name": "jqC", "key_name": "bsS"}
# Query order is box 0, box 1, key 0, key 1.
EXAMPLE_4_TRUTH = [True, False, False, False]
NL = {"box_functor": "OPENED", "key_functor": "OBTAINED", "box_name": "BOX", "key_name": "KEY"}


def score(response, words=EXAMPLE_4, expected=EXAMPLE_4_TRUTH):
    return state_scores(expected, parse_answer(response, words, len(expected) // 2))


def test_the_papers_example_4_has_75_percent_state_em_and_step_em_0():
    model_answer = "NvSWxvJb(jqC-0)=True, B(bsS-0)=True, NvSWxvJb(jqC-1)=False, B(bsS-1)=False"
    result = score(model_answer)
    assert result.state_em == 0.75 and result.step_em == 0 and result.correct is False
    assert result.n_matched == 3 and result.parsed and result.parse_rate == 1.0
    correct = "NvSWxvJb(jqC-0)=True, B(bsS-0)=False, NvSWxvJb(jqC-1)=False, B(bsS-1)=False"
    assert score(correct).step_em == 1 and score(correct).state_em == 1.0


@pytest.mark.parametrize(
    "response",
    [
        "Answer: NvSWxvJb(jqC-0)=True, B(bsS-0)=False, NvSWxvJb(jqC-1)=False, B(bsS-1)=False",
        "  NvSWxvJb(jqC-0)=true.B(bsS-0)=false.NvSWxvJb(jqC-1)=FALSE.B(bsS-1)=False.\n",
        "nvswxvjb( JQC - 0 ) = True\nb(bsS-0) == False\nNvSWxvJb(jqC-1): False\nB(bsS-1)=False",
        "Sure! Here are the states:\n* NvSWxvJb(jqC-0)=True\n* B(bsS-0)=False\n"
        "* NvSWxvJb(jqC-1)=False\n* B(bsS-1)=False\nLet me know if you need more.",
        "B(bsS-1)=False, B(bsS-0)=False, NvSWxvJb(jqC-1)=False, NvSWxvJb(jqC-0)=True, "
        "B(bsS-0)=False",
        "NvSWxvJb(jqC-0)=True, B(bsS-0)=False, NvSWxvJb(jqC-1)=False, B(bsS-1)=False\n"
        "Step-9: Open jqC-1 and retrieve bsS-0.\nQuestion: NvSWxvJb(jqC-0)=?\n"
        "Answer: NvSWxvJb(jqC-0)=False, NvSWxvJb(jqC-7)=True",
    ],
    ids=[
        "label",
        "dots-and-case",
        "spaces-and-signs",
        "chatty-lines",
        "order-and-repeat",
        "next-round",
    ],
)
def test_sloppy_but_complete_answers_are_exact(response):
    assert score(response).step_em == 1


def test_multi_digit_indices_are_read():
    expected = [False] * 24
    expected[11] = expected[12 + 10] = True
    names = [f"OPENED(BOX-{i})" for i in range(12)] + [f"OBTAINED(KEY-{i})" for i in range(12)]
    answer = ", ".join(f"{n}={v}" for n, v in zip(names, expected, strict=True))
    assert score(answer, NL, expected).step_em == 1


def test_extra_missing_and_conflicting_states():
    extra = (
        "NvSWxvJb(jqC-0)=True, B(bsS-0)=False, NvSWxvJb(jqC-1)=False, B(bsS-1)=False, B(bsS-7)=True"
    )
    result = score(extra)
    assert result.state_em == 1.0 and result.step_em == 0 and result.n_extra == 1
    mismatched = "NvSWxvJb(bsS-0)=True, B(bsS-0)=False"  # a box functor on a key
    result = score(mismatched)
    assert result.n_extra == 1 and result.n_matched == 1 and result.predicted == "??F?"
    conflict = "NvSWxvJb(jqC-0)=True, NvSWxvJb(jqC-0)=False, B(bsS-0)=False"
    result = score(conflict)
    assert result.predicted == "!?F?" and result.n_conflicts == 1
    assert result.n_matched == 1 and result.parse_rate == 0.5


@pytest.mark.parametrize(
    "response",
    [
        "",
        "   ",
        "I don't know.",
        "True False True",
        "OPENED(BOX)=True",
        None,
        42,
        "\x00\ud800",
        "(" * 5000,
    ],
)
def test_garbage_is_unparsed_never_an_error(response):
    result = score(response)
    assert result.parsed is False and result.state_em == 0 and result.correct is False
    assert result.predicted == "????"


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=300))
def test_any_text_scores_within_bounds(text):
    result = score(text)
    assert 0 <= result.state_em <= 1 and result.step_em in (0, 1)
    assert len(result.predicted) == 4


def test_score_response_on_generated_items_reads_the_items_truth():
    stimulus_set = PARADIGM.generate_set(
        "smoke", 3, {"language": ["synthetic"], "instruction": ["counterintuitive-language"]}
    )
    for item in stimulus_set:
        assert PARADIGM.score_response(item, item.answer).correct is True
        assert PARADIGM.score_response(item, "Answer: " + item.answer.lower()).step_em == 1
        flipped = (
            item.answer.replace("=True", "=X").replace("=False", "=True").replace("=X", "=False")
        )
        assert PARADIGM.score_response(item, flipped).state_em == 0
    assert PARADIGM.max_new_tokens >= max(item.meta["max_new_tokens"] for item in stimulus_set)


RIGHT = "NvSWxvJb(jqC-0)=True, B(bsS-0)=False, NvSWxvJb(jqC-1)=False, B(bsS-1)=False"


@pytest.mark.parametrize(
    "response",
    [
        f"Sure, here are the states.\nAnswer: {RIGHT}",
        f"Here is my answer after Step-3.\n\nAnswer:\n{RIGHT}",
        f"Question: NvSWxvJb(jqC-0)=? B(bsS-0)=?\nAnswer: {RIGHT}",
        f"{RIGHT}\n\nI hope this helps! Let me know if you have another step.",
        f"Answer: {RIGHT}.\nQuestion: anything else?\nAnswer: NvSWxvJb(jqC-0)=False",
        # The paper's own answers (Example 1, Example 4): a space after "=", a "Model Answer:".
        "Answer: NvSWxvJb(jqC-0)= True, B(bsS-0)= False, NvSWxvJb(jqC-1)= False, B(bsS-1)= False",
        f"Model Answer: {RIGHT}",
    ],
    ids=[
        "preamble",
        "label-own-line",
        "echoed-question",
        "chatter",
        "then-another-round",
        "example-1-spacing",
        "example-4-label",
    ],
)
def test_preambles_and_chatter_around_a_right_answer(response):
    assert score(response).step_em == 1


def test_the_authors_functor_rule_counts_a_wrong_functor_on_the_right_argument():
    wrong_functor = "B(jqC-0)=True, B(bsS-0)=False, NvSWxvJb(jqC-1)=False, B(bsS-1)=False"
    ours = score(wrong_functor)
    assert ours.n_extra == 1 and ours.predicted == "?FFF" and ours.step_em == 0
    rules = ScoringRules(functor="any")
    theirs = state_scores(EXAMPLE_4_TRUTH, parse_answer(wrong_functor, EXAMPLE_4, 2, rules))
    assert theirs.n_extra == 0 and theirs.predicted == "TFFF" and theirs.step_em == 1


def test_the_authors_unparsed_rule_sets_the_whole_step_aside():
    conflict = RIGHT + ", NvSWxvJb(jqC-0)=False"
    ours = score(conflict)
    assert ours.state_em == 0.75 and ours.predicted == "!FFF" and not ours.unparsed_step
    rules = ScoringRules(unparsed="whole-step")
    theirs = state_scores(EXAMPLE_4_TRUTH, parse_answer(conflict, EXAMPLE_4, 2, rules))
    assert theirs.state_em == 0 and theirs.predicted == "????" and theirs.unparsed_step
    partial = state_scores(EXAMPLE_4_TRUTH, parse_answer("B(bsS-0)=False", EXAMPLE_4, 2, rules))
    assert partial.state_em == 0.25 and not partial.unparsed_step  # parsed, in part
    with pytest.raises(TracktaleError, match="is not one of strict, any"):
        ScoringRules(functor="loose")
