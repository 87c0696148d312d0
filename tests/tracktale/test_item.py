import dataclasses
import json
import re

import pytest

from tracktale.errors import TracktaleError
from tracktale.item import ChoicePair, Item, canonical_json, content_id, item_from_dict
from tracktale.schema.stimulus import CHOICE_FIELDS, ITEM_FIELDS


def make_item(**changes):
    fields = dict(
        paradigm="narrative",
        role="main",
        condition={"cell": "C1.F0", "complexity": 1},
        context="Anna began tidying up her room.",
        question="The key is in the",
        answer="box",
        choice=ChoicePair("Story.", " good", " bad", "Neutral."),
        prompt="prompt",
        messages=({"role": "user", "content": "prompt"},),
        truth={"events": [{"kind": "put"}]},
        meta={"n_words": 5},
    )
    fields.update(changes)
    return Item.create(**fields)


def test_id_is_a_hash_of_the_content():
    item = make_item()
    assert item.item_id == content_id(item.to_dict())
    assert make_item().item_id == item.item_id
    assert make_item(answer="bag").item_id != item.item_id


def test_dict_round_trip_is_exact():
    item = make_item()
    assert item_from_dict(item.to_dict()) == item
    assert item.choice.prompt_good == "Story. good"
    assert item.choice.prompt_bad == "Story. bad"


def test_edited_content_no_longer_matches_its_id():
    data = make_item().to_dict()
    data["answer"] = "drawer"
    with pytest.raises(TracktaleError, match="does not match the item's content"):
        item_from_dict(data)


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("role", "bonus", "role"),
        ("answer", 3, "answer"),
        ("condition", {"cell": [1]}, "condition"),
        ("choice", {"prefix": "x", "good": 1, "bad": "y"}, "choice.good"),
        ("messages", [{"role": "user"}], "messages"),
        ("surprise", 1, "unknown item field"),
    ],
)
def test_malformed_fields_are_named(field, value, message):
    data = make_item().to_dict()
    data[field] = value
    with pytest.raises(TracktaleError, match=message):
        item_from_dict(data, check_id=False)


def test_missing_field_is_named():
    data = make_item().to_dict()
    del data["context"]
    with pytest.raises(TracktaleError, match="'context' is missing"):
        item_from_dict(data)


def _variants():
    yield make_item()
    yield make_item(prompt=None, messages=None, choice=None, question=None)
    yield make_item(messages=({"role": "user", "content": "other"},))  # not the prompt
    yield make_item(
        messages=(
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "prompt"},
            {"role": "assistant", "content": 'Zoë \u2212 "quoted" \\ \n\t\u0001'},
        )
    )
    yield make_item(messages=())
    yield make_item(context="Zoë put the \u2603 in the box.\n", answer="", truth={2: [(1, 2.5)]})


def test_the_line_is_the_canonical_json_of_the_content():
    # Items serialise once, member by member; the bytes must be exactly canonical_json's.
    for item in _variants():
        assert item.to_json() == canonical_json(item.to_dict())
        assert item.item_id == content_id(item.to_dict())
        read = item_from_dict(json.loads(item.to_json()))
        assert read == item and read.to_json() == item.to_json()


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"role": 3}, "item field 'role' must be a string"),
        ({"role": "bonus"}, "item field 'role' must be one of main, filler, practice"),
        ({"question": 1}, "item field 'question' must be a string or null"),
        ({"truth": []}, "item field 'truth' must be an object"),
        ({"choice": "x"}, "item field 'choice' must be an object or null"),
        ({"choice": {"prefix": "p", "good": "g"}}, "item field 'choice.bad' must be a string"),
        (
            {"choice": {"prefix": "p", "good": "g", "bad": "b", "question": 1}},
            "item field 'choice.question' must be a string or null",
        ),
        (
            {"choice": {"prefix": "p", "good": "g", "bad": "b", "colour": "red"}},
            "item field 'choice' must be free of unknown fields (found ['colour'])",
        ),
        ({"messages": [{"role": "user", "content": 1}]}, "a list of {role, content} objects"),
        ({"condition": {"cell": True, "n": float("inf")}}, "item field 'condition' must be"),
        ({"condition": {"n": None}}, "an object of strings, numbers and booleans"),
    ],
)
def test_messages_name_the_field_and_what_it_must_be(change, message):
    data = {**make_item().to_dict(), **change}
    with pytest.raises(TracktaleError, match=re.escape(message)):
        item_from_dict(data, check_id=False)


def test_unknown_fields_are_named_before_missing_ones_and_a_non_object_is_named():
    data = make_item().to_dict()
    del data["answer"]
    data["colour"] = "red"
    with pytest.raises(TracktaleError, match="unknown item field 'colour'"):
        item_from_dict(data, check_id=False)
    with pytest.raises(TracktaleError, match="an item must be a JSON object, got list"):
        item_from_dict([data], check_id=False)


def test_optional_fields_may_be_left_out_and_the_declaration_is_the_items():
    data = {
        key: value
        for key, value in make_item().to_dict().items()
        if key not in ("question", "choice", "prompt", "messages", "truth", "meta")
    }
    item = item_from_dict(data, check_id=False)
    assert (item.question, item.choice, item.messages, dict(item.truth)) == (None, None, None, {})
    declared = [f.name for f in dataclasses.fields(Item) if not f.name.startswith("_")]
    assert list(ITEM_FIELDS) == declared == list(item.to_dict())
    assert list(CHOICE_FIELDS) == [f.name for f in dataclasses.fields(ChoicePair)]
