import copy
import re
from collections import Counter

import pytest

from tracktale.errors import TracktaleError
from tracktale.item import Item
from tracktale.stimuli.narrative import PARADIGM, GenerationError
from tracktale.stimuli.narrative import design as design_module
from tracktale.stimuli.narrative.design import CELLS
from tracktale.stimuli.narrative.items import render_item
from tracktale.stimuli.narrative.render import EXPLICIT_INSTRUCTION


def test_same_seed_same_bytes_other_seed_other_items():
    from tracktale.stimulus_set import items_jsonl

    first = PARADIGM.generate_set("human", 7)
    again = PARADIGM.generate_set("human", 7)
    other = PARADIGM.generate_set("human", 8)
    assert items_jsonl(first.items) == items_jsonl(again.items)
    assert first.manifest.to_json() == again.manifest.to_json()
    assert items_jsonl(first.items) != items_jsonl(other.items)


def test_a_cell_does_not_depend_on_which_other_cells_are_generated():
    alone = PARADIGM.generate_set("model", 3, {"cells": ["C4.F1"], "templates": ["standard"]})
    full = PARADIGM.generate_set("model", 3)
    assert list(alone.items) == full.select(template="standard", cell="C4.F1")


def test_model_protocol_has_50_items_in_each_of_11_cells_for_3_templates(model_set):
    counts = Counter((i.condition["template"], i.condition["cell"]) for i in model_set)
    assert len(model_set) == 1650
    assert set(counts.values()) == {50}
    assert {cell for _, cell in counts} == set(CELLS) and len(CELLS) == 11
    assert {template for template, _ in counts} == {"standard", "pseudoword", "improbable"}
    assert all(item.role == "main" for item in model_set)


def test_human_protocol_is_the_papers_46_trial_list_plus_practice(human_set):
    main = Counter(i.condition["cell"] for i in human_set.select(role="main"))
    assert main == {
        "C1.F0": 8,
        "C2.F0": 8,
        "C3.F0": 4,
        "C3.F1": 4,
        "C4.F0": 4,
        "C4.F1": 4,
        "C4.F2": 4,
    }
    assert len(human_set.select(role="filler")) == 10
    assert len(human_set.select(role="practice")) == 4
    assert {i.condition["template"] for i in human_set.select(role="main")} == {"standard"}
    frames = Counter(i.truth["frame"] for i in human_set.select(role="filler"))
    assert len(frames) == 10 and set(frames.values()) == {1}  # ten structurally distinct


def test_every_item_carries_both_task_forms(model_set):
    for item in model_set:
        assert item.question == f"The {item.truth['focus_object']} is in the"
        assert item.choice.prompt_good == item.context + item.choice.good
        assert item.choice.good.startswith(" Later, ") and item.choice.bad.startswith(" Later, ")
        assert item.choice.neutral_prefix == item.context.split(". ")[0] + "."
        # Story first, then Appendix C's instruction, ending in its "Location:" cue.
        assert item.prompt.startswith(item.context + "\nQ: " + item.question + " \u2026\n\n")
        assert item.prompt.endswith(EXPLICIT_INSTRUCTION + "\nLocation:")
        assert item.messages == ({"role": "user", "content": item.prompt},)


def test_good_continuation_takes_the_object_from_the_answer_and_bad_from_elsewhere(model_set):
    for item in model_set:
        obj = item.truth["focus_object"]
        assert f"picked up the {obj} from the {item.answer} and" in item.choice.good
        assert f"picked up the {obj} from the {item.answer} and" not in item.choice.bad


def test_structures_match_the_papers_examples(model_set):
    c4 = model_set.select(template="standard", cell="C4.F2")[0]
    pattern = (
        r"^\w+ began tidying up (her|his) room\. (She|He) picked up an? \w+ and carefully "
        r"placed it into the [\w ]+\. While organizing, (she|he) noticed an? \w+ in the "
        r"[\w ]+\. Curious, (she|he) moved the \w+ to the [\w ]+ and found an? \w+ there\. "
        r"(She|He) put the \w+ into the [\w ]+\. .+\.$"
    )
    assert re.match(pattern, c4.context), c4.context
    c5 = model_set.select(template="standard", cell="C5.F3")[0]
    hidden_object = c5.truth["objects"][3]["noun"]
    assert c5.context.count(hidden_object) == 1  # first mentioned while moved out (paper D)
    assert f"moved the {hidden_object} from the" in c5.context


def test_templates_use_their_own_object_words(model_set):
    from tracktale.stimuli import lexicons

    for template in ("standard", "pseudoword", "improbable"):
        words = {noun.word for noun in lexicons.objects(template)}
        used = {o["noun"] for i in model_set.select(template=template) for o in i.truth["objects"]}
        assert used == words


def test_adjectives_are_in_about_30_percent_of_sentences_and_never_in_continuations(model_set):
    # The paper: "descriptive adjectives in ~30% of sentences" (its Appendix D: 38 of 126).
    sentences = sum(item.meta["n_sentences"] for item in model_set)
    with_adjective = sum(item.meta["adjective_sentences"] for item in model_set)
    assert 0.25 < with_adjective / sentences < 0.35
    adjectives = set(design_module.lexicons.adjectives())
    counted = 0
    for item in model_set:
        spoken = item.context.split(". ")
        counted += sum(bool(set(s.rstrip(".").split()) & adjectives) for s in spoken)
        words = set(item.choice.good.split()) | set(item.choice.bad.split())
        assert not words & adjectives
    assert counted == with_adjective  # the meta count is what the text shows
    for level in (1, 3, 5):  # every complexity level, not only the protocol as a whole
        cell = [i for i in model_set if i.condition["complexity"] == level]
        share = sum(i.meta["adjective_sentences"] for i in cell) / sum(
            i.meta["n_sentences"] for i in cell
        )
        assert 0.22 < share < 0.38, (level, share)


def test_adjective_rate_per_container_is_an_option():
    items = PARADIGM.generate_set(
        "model", 1, {"templates": ["standard"], "adjective_unit": "container"}
    )
    containers = [c for item in items for c in item.truth["containers"]]
    share = sum(c["adjective"] is not None for c in containers) / len(containers)
    assert 0.25 < share < 0.35


def test_implicit_pairs_are_chained_as_in_appendix_d(model_set):
    for item in model_set:
        good, bad = item.truth["continuations"]["good"], item.truth["continuations"]["bad"]
        assert good["source"] == item.answer  # from A ...
        assert bad["source"] == good["target"]  # ... into X; the bad one from X ...
        assert bad["target"] not in (item.answer, good["target"])  # ... into a third Y
        assert item.condition["pairs"] == "chained"
        story = {c["noun"] for c in item.truth["containers"]}
        assert item.meta["good_target_mentioned"] == (good["target"] in story)
        assert item.meta["bad_source_mentioned"] == (bad["source"] in story)
        assert item.meta["bad_target_mentioned"] == (bad["target"] in story)


def test_independent_pairs_are_todays_structure_on_request():
    items = PARADIGM.generate_set("model", 1, {"templates": ["standard"], "pairs": "independent"})
    good_into_equals_bad_into = sum(
        i.truth["continuations"]["good"]["target"] == i.truth["continuations"]["bad"]["target"]
        for i in items
    )
    assert 0 < good_into_equals_bad_into < len(items)
    assert all(PARADIGM.verify(item) == [] for item in items)
    assert {i.condition["pairs"] for i in items} == {"independent"}


def test_characters_are_the_women_of_appendix_d_unless_mixed(model_set, human_set):
    names = {"Dora", "Emma", "Lila", "Sophia", "Mia", "Anna"}
    for item in [*model_set, *human_set]:
        assert item.truth["character"]["name"] in names
        assert item.truth["character"]["pronoun"] == "she"
        assert not re.search(r"\b(he|He|his|His|him)\b", item.context), item.context
    mixed = PARADIGM.generate_set("model", 1, {"templates": ["standard"], "characters": "mixed"})
    assert {i.truth["character"]["pronoun"] for i in mixed} == {"she", "he"}
    assert len({i.truth["character"]["name"] for i in mixed}) == 20


def test_every_story_occurs_once_per_template(model_set, human_set):
    for stimulus_set in (model_set, human_set):
        stories = Counter((i.condition.get("template"), i.context) for i in stimulus_set)
        assert set(stories.values()) == {1}


def test_templates_tell_the_same_stories_item_by_item(model_set):
    keys = Counter((i.meta["story_key"], i.condition["cell"]) for i in model_set)
    assert set(keys.values()) == {3}
    by_key: dict[str, dict[str, object]] = {}
    for item in model_set:
        by_key.setdefault(item.meta["story_key"], {})[item.condition["template"]] = item
    for triple in by_key.values():
        standard, pseudoword = triple["standard"], triple["pseudoword"]
        assert standard.truth["containers"] == pseudoword.truth["containers"]
        assert standard.truth["continuations"] == pseudoword.truth["continuations"]
        assert standard.answer == pseudoword.answer
    independent = PARADIGM.generate_set(
        "model", 1, {"cells": ["C2.F0"], "template_stories": "independent"}
    )
    assert len({i.meta["story_key"] for i in independent}) == len(independent)


def test_prompt_layout_instructions_first_is_an_option():
    item = PARADIGM.generate_set(
        "model",
        1,
        {"cells": ["C1.F0:1"], "templates": ["standard"], "prompt_layout": "instructions-first"},
    ).items[0]
    assert item.prompt == (
        f"{EXPLICIT_INSTRUCTION}\n\n{item.context}\nQ: {item.question} \u2026\nLocation:"
    )
    assert PARADIGM.verify(item) == []


def test_an_object_list_of_ones_own_replaces_a_template(tmp_path):
    path = tmp_path / "mine.tsv"
    words = ["thimble", "locket", "acorn", "button", "marble", "ticket"]
    path.write_text("# my objects\n" + "".join(f"{w}\ta\n" for w in words))
    items = PARADIGM.generate_set(
        "model",
        1,
        {
            "templates": ["improbable"],
            "object_lists": [f"improbable={path}"],
            "template_stories": "independent",
        },
    )
    used = {o["noun"] for i in items for o in i.truth["objects"]}
    assert used == set(words)
    assert all(PARADIGM.verify(item) == [] for item in items)
    with pytest.raises(TracktaleError, match="one length"):
        PARADIGM.resolve_config("model", {"object_lists": [f"improbable={path}"]})
    path.write_text("thimble\tthe\n")
    with pytest.raises(TracktaleError, match="malformed row"):
        PARADIGM.resolve_config("model", {"object_lists": [f"standard={path}"]})


def test_every_lure_kind_occurs_under_the_default_and_can_be_forced():
    kinds = Counter(
        i.condition["lure"] for i in PARADIGM.generate_set("model", 1, {"templates": ["standard"]})
    )
    assert set(kinds) == {
        "previous_location",
        "other_object_location",
        "mentioned_empty",
        "unmentioned_container",
    }
    forced = PARADIGM.generate_set(
        "model", 1, {"templates": ["standard"], "cells": ["C2.F0"], "lure": "previous_location"}
    )
    assert {i.condition["lure"] for i in forced} == {"previous_location"}
    with pytest.raises(TracktaleError, match="cannot occur in cell C1.F0"):
        PARADIGM.generate_set("model", 1, {"cells": ["C1.F0"], "lure": "previous_location"})


def test_minimal_pair_continuations_differ_only_in_the_from_container():
    pairs = PARADIGM.generate_set(
        "model", 1, {"templates": ["standard"], "minimal_pair": True, "pairs": "independent"}
    )
    for item in pairs:
        good, bad = item.choice.good.split(), item.choice.bad.split()
        assert len(good) == len(bad)
        assert [g for g, b in zip(good, bad, strict=True) if g != b] == [item.answer]
    with pytest.raises(TracktaleError, match="needs --pairs independent"):
        PARADIGM.resolve_config("model", {"minimal_pair": True})


def test_fillers_ask_about_a_story_detail_with_a_distractor_not_in_the_story(human_set):
    for item in human_set.select(role="filler"):
        assert item.answer in item.context
        assert item.choice.question == item.question
        assert item.choice.bad.strip() not in item.context


def _edited(item: Item, **truth_changes) -> Item:
    plan = copy.deepcopy(dict(item.truth))
    plan.update(truth_changes)
    return render_item(
        plan,
        cell=item.condition["cell"],
        template=item.condition["template"],
        answer=item.answer,
        minimal_pair=item.condition["minimal_pair"],
        pairs=item.condition["pairs"],
        prompt_layout=item.meta["prompt_layout"],
    )


@pytest.fixture
def c3_item():
    return PARADIGM.generate_set(
        "model", 5, {"cells": ["C3.F0"], "per_condition": 1, "templates": ["standard"]}
    ).items[0]


def test_verify_rejects_a_move_from_a_container_the_object_is_not_in(c3_item):
    plan = copy.deepcopy(dict(c3_item.truth))
    plan["sentences"][3]["events"][0]["source"] = plan["containers"][1]["noun"]
    problems = PARADIGM.verify(_edited(c3_item, sentences=plan["sentences"]))
    assert any("is in the" in p for p in problems), problems


def test_verify_rejects_an_answer_that_is_not_the_final_location(c3_item):
    wrong = render_item(
        dict(c3_item.truth),
        cell="C3.F0",
        template="standard",
        answer="drawer" if c3_item.answer != "drawer" else "box",
        minimal_pair=False,
    )
    assert any("not the simulated final location" in p for p in PARADIGM.verify(wrong))


def test_verify_rejects_an_inconsistent_good_or_a_consistent_bad_continuation(c3_item):
    continuations = copy.deepcopy(dict(c3_item.truth["continuations"]))
    continuations["good"]["source"], continuations["bad"]["source"] = (
        continuations["bad"]["source"],
        continuations["good"]["source"],
    )
    problems = PARADIGM.verify(_edited(c3_item, continuations=continuations))
    assert any("good continuation" in p for p in problems)
    assert any("bad continuation" in p for p in problems)


def test_verify_rejects_two_containers_that_share_a_noun(c3_item):
    # As if the sampler had drawn "box" twice: a "blue box" and a "red box" in one story.
    import json

    first, third = c3_item.truth["containers"][0]["noun"], c3_item.truth["containers"][2]["noun"]
    plan = json.loads(json.dumps(dict(c3_item.truth)).replace(f'"{third}"', f'"{first}"'))
    plan["containers"][0]["adjective"], plan["containers"][2]["adjective"] = "blue", "red"
    problems = PARADIGM.verify(_edited(c3_item, **plan))
    assert any("share the noun" in p for p in problems), problems


def test_verify_rejects_text_edited_after_generation(c3_item):
    data = c3_item.to_dict()
    data["context"] = data["context"].replace("Curious,", "Suddenly,")
    edited = Item.create(
        **{k: v for k, v in data.items() if k != "item_id"}
        | {"choice": c3_item.choice, "messages": c3_item.messages}
    )
    assert any("differs from what the events render" in p for p in PARADIGM.verify(edited))


def test_generation_refuses_an_inconsistent_plan(monkeypatch):
    from tracktale.stimuli.narrative import pairs

    def faulty(rng, plan, answer, **kwargs):
        continuations, kind = pairs.choose_pair(rng, plan, answer, **kwargs)
        continuations["bad"]["source"] = answer
        return continuations, kind

    monkeypatch.setattr("tracktale.stimuli.narrative.choose_pair", faulty)
    with pytest.raises(GenerationError, match="bad continuation"):
        PARADIGM.generate_set("model", 1, {"cells": ["C2.F0"], "templates": ["standard"]})


def test_generated_sets_verify_cleanly(model_set, human_set):
    assert all(PARADIGM.verify(item) == [] for item in model_set)
    assert all(PARADIGM.verify(item) == [] for item in human_set)


@pytest.mark.parametrize(
    ("response", "correct"),
    [
        ("box", True),
        ("Box.", True),
        ("the red BOX", True),
        ("boxes", False),
        ("bag", False),
        ("", False),
        ("It is in the box I think", True),
    ],
)
def test_explicit_answers_are_correct_when_they_contain_the_location_word(response, correct):
    item = next(i for i in PARADIGM.generate_set("human", 1) if i.answer == "box")
    assert PARADIGM.score_response(item, response).correct is correct


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"cells": ["C3.F1:0"]}, "positive count"),
        ({"cells": ["C6.F0"]}, "unknown cell"),
        ({"cells": ["C1.F0", "C1.F0"]}, "twice"),
        ({"templates": ["fancy"]}, "not one of"),
        ({"adjective_rate": 1.5}, "at most 1"),
        ({"per_condition": 0}, "at least 1"),
        ({"colour": "red"}, "no option --colour"),
    ],
)
def test_bad_options_are_one_line_errors(overrides, message):
    with pytest.raises(TracktaleError, match=message):
        PARADIGM.resolve_config("model", overrides)


def test_asking_for_more_distinct_items_than_exist_is_an_error(monkeypatch):
    from tracktale.stimuli import lexicons

    characters, objects = lexicons.characters(), lexicons.objects
    monkeypatch.setattr(lexicons, "characters", lambda pool="female": characters[:1])
    monkeypatch.setattr(lexicons, "objects", lambda template: objects(template)[:1])
    with pytest.raises(TracktaleError, match="distinct"):
        PARADIGM.generate_set(
            "model",
            1,
            {"cells": ["C1.F0:100000"], "templates": ["standard"], "adjective_rate": 0.0},
        )
