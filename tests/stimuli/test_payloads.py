"""The paradigms' payloads: every generated truth has its declared shape; a wrong one is named."""

from __future__ import annotations

import copy

import pytest

from tracktale.item import item_from_dict
from tracktale.schema.payloads import (
    ArithmeticTruth,
    BoxesTruth,
    NarrativeFiller,
    NarrativeStory,
    truth_problems,
)
from tracktale.stimuli.registry import get_paradigm

PAYLOADS = {
    ("narrative", "main"): NarrativeStory,
    ("narrative", "practice"): NarrativeStory,
    ("narrative", "filler"): NarrativeFiller,
    ("boxes", "main"): BoxesTruth,
    ("arithmetic", "main"): ArithmeticTruth,
}


@pytest.fixture(scope="module")
def generated():
    sets = [("narrative", "human"), ("boxes", "distractors"), ("boxes", "compressed")]
    items = [
        item for name, protocol in sets for item in get_paradigm(name).generate_set(protocol, 7)
    ]
    arithmetic = get_paradigm("arithmetic").generate_set("pilot", 7)
    return items + list(arithmetic.items[:200])


def test_every_generated_truth_has_its_paradigms_declared_shape(generated):
    seen = set()
    for item in generated:
        payload = PAYLOADS[(item.paradigm, item.role)]
        assert truth_problems(item.truth, payload) == [], item.item_id
        seen.add((item.paradigm, item.role))
    assert seen == set(PAYLOADS)


def _first(generated, paradigm, role="main"):
    return next(i for i in generated if i.paradigm == paradigm and i.role == role)


@pytest.mark.parametrize(
    ("paradigm", "role", "edit", "message"),
    [
        ("boxes", "main", lambda t: t["states"][0].pop("opened"), "'states.0.opened' is missing"),
        ("boxes", "main", lambda t: t.update(negated=1), "'negated' is invalid"),
        ("boxes", "main", lambda t: t.update(colour="red"), "'colour' is not a field"),
        ("arithmetic", "main", lambda t: t["inputs"].update(x="1"), "'inputs.x"),
        ("arithmetic", "main", lambda t: t.pop("reference"), "'reference' is missing"),
        ("narrative", "main", lambda t: t["continuations"]["bad"].pop("target"), "bad.target"),
        ("narrative", "filler", lambda t: t["facts"].update(film=3), "'facts.film' is invalid"),
    ],
)
def test_a_malformed_truth_is_named_by_its_key_before_the_replay(
    generated, paradigm, role, edit, message
):
    data = copy.deepcopy(_first(generated, paradigm, role).to_dict())
    edit(data["truth"])
    problems = get_paradigm(paradigm).verify(item_from_dict(data, check_id=False))
    assert len(problems) == 1 and "the item's truth is malformed: truth field" in problems[0]
    assert message in problems[0], problems[0]
