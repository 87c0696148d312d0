"""Judging responses to imported items: typed answers, forced choice, segmenters, verification."""

from __future__ import annotations

import unicodedata

import pytest

from tracktale.errors import TracktaleError
from tracktale.item import ChoicePair, Item
from tracktale.stimuli.items import ItemsJudgement
from tracktale.stimuli.items.answers import normalise, words
from tracktale.stimuli.items.segment import (
    default_segmenter,
    register_segmenter,
    segment,
    segmenter_names,
)
from tracktale.stimuli.registry import get_paradigm

PARADIGM = get_paradigm("items")


def _item(
    kind="typed", accepted=("cat", "kitten"), options=(), match="exact", segmenter="whitespace"
):
    context = "The cat sat on the mat."
    accepted = list(accepted)
    return Item.create(
        paradigm="items",
        role="main",
        condition={"n": "sg"},
        context=context,
        question="Who sat?",
        answer=accepted[0] if accepted else "",
        choice=ChoicePair(context, " It purred.", " It barked."),
        truth={
            "item": "1",
            "list": "L1",
            "screens": [context],
            "response": {
                "kind": kind,
                "accepted": accepted,
                "options": list(options),
                "match": match,
            },
            "segments": [list(span) for span in segment(context, segmenter)],
            "segmenter": segmenter,
            "segments_from": "segmenter",
        },
    )


@pytest.mark.parametrize(
    ("response", "matched"),
    [
        ("cat", "cat"),
        ("  CAT. ", "cat"),
        ("Kitten!", "kitten"),
        ("\u00abcat\u00bb", "cat"),  # guillemets are punctuation
        ("the cat", None),  # exact: the whole response
        ("\n cat\nQuestion: Where is the dog?", "cat"),  # its first non-blank line
        ("", None),
        ("dog", None),
    ],
)
def test_a_typed_answer_is_correct_when_it_is_an_accepted_one_normalised(response, matched):
    judged = PARADIGM.score_response(_item(), response)
    assert judged == ItemsJudgement(correct=matched is not None, matched=matched, options_named=0)


def test_normalisation_is_nfc_case_folded_and_whitespace_collapsed():
    decomposed = unicodedata.normalize("NFD", "Caf\u00e9  Stra\u00dfe")
    assert normalise(decomposed) == "caf\u00e9 strasse"
    assert normalise(" \u00bfQu\u00e9?  ") == "qu\u00e9"
    item = _item(accepted=["caf\u00e9"])
    assert PARADIGM.score_response(item, unicodedata.normalize("NFD", "CAF\u00c9")).correct


def test_contains_finds_the_answer_s_words_in_a_longer_response():
    item = _item(accepted=["the cat"], match="contains")
    assert PARADIGM.score_response(item, "I think it was the cat.").correct
    assert not PARADIGM.score_response(item, "the category").correct  # whole words only
    assert not PARADIGM.score_response(item, "cat the").correct


def test_forced_choice_needs_the_right_option_and_no_other():
    item = _item(kind="choice", accepted=["cat"], options=["cat", "dog"])
    assert PARADIGM.score_response(item, "Cat") == ItemsJudgement(
        correct=True, matched="cat", options_named=1
    )
    assert PARADIGM.score_response(item, "dog") == ItemsJudgement(
        correct=False, matched="dog", options_named=1
    )
    contains = _item(kind="choice", accepted=["cat"], options=["cat", "dog"], match="contains")
    assert PARADIGM.score_response(contains, "the cat, I think").correct
    assert PARADIGM.score_response(contains, "cat or dog") == ItemsJudgement(
        correct=False, matched=None, options_named=2
    )


def test_an_item_without_a_response_is_never_correct():
    assert PARADIGM.score_response(_item(kind="none", accepted=()), "").correct is False


def test_segmenters_are_pluggable_per_language():
    assert default_segmenter("nl") == "whitespace" and default_segmenter("zh-Hans") == "characters"
    text = "猫在 睡觉"
    assert [text[a:b] for a, b in segment(text, "characters")] == list("猫在睡觉")
    assert words("我 看到 一只猫。", "characters") == list("我看到一只猫")
    register_segmenter("hyphens", lambda text: [(0, len(text))], languages=("xx",))
    try:
        assert default_segmenter("xx-YY") == "hyphens" and "hyphens" in segmenter_names()
    finally:
        from tracktale.stimuli.items import segment as module

        del module._SEGMENTERS["hyphens"], module._LANGUAGE_DEFAULTS["xx"]
    with pytest.raises(TracktaleError, match="no word segmenter 'nope'"):
        segment("x", "nope")


def test_verify_names_what_is_inconsistent():
    item = _item()
    assert PARADIGM.verify(item) == []
    data = item.to_dict()
    data["truth"]["segments"] = [[0, 3], [2, 5]]
    broken = Item.create(
        **{k: v for k, v in data.items() if k != "item_id"} | {"choice": item.choice}
    )
    assert PARADIGM.verify(broken) == ["the segment [2, 5] is out of order or out of the text"]
    data["truth"]["response"]["kind"] = "guessed"
    wrong = Item.create(
        **{k: v for k, v in data.items() if k != "item_id"} | {"choice": item.choice}
    )
    assert PARADIGM.verify(wrong)[0].startswith(
        "the item's truth is malformed: truth field 'response.kind'"
    )
