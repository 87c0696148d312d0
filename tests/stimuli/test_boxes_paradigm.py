"""The boxes paradigm: protocols, probing, compression, prompts, verification and bad input."""

import re
import sys
import types
from collections import Counter

import pytest

from tracktale.errors import TracktaleError
from tracktale.item import Item, item_from_dict
from tracktale.stimuli.boxes import PARADIGM, distractors
from tracktale.stimuli.boxes.items import verify_item
from tracktale.stimuli.registry import get_paradigm
from tracktale.stimulus_set import items_jsonl


@pytest.fixture(scope="module")
def model_set():
    return PARADIGM.generate_set("model", 1)


@pytest.fixture(scope="module")
def probed_set():
    overrides = {"compress": 2, "max_steps": 5, "boxes": 7, "instances": 6, "shots": [2, 3]}
    return PARADIGM.generate_set("probing", 2, overrides)


def test_registered_and_generation_is_deterministic_by_seed():
    assert get_paradigm("boxes") is PARADIGM
    first = PARADIGM.generate_set("smoke", 7, {"distractors": ["on"]})
    again = PARADIGM.generate_set("smoke", 7, {"distractors": ["on"]})
    other = PARADIGM.generate_set("smoke", 8, {"distractors": ["on"]})
    assert items_jsonl(first.items) == items_jsonl(again.items)
    assert first.manifest.to_json() == again.manifest.to_json()
    assert items_jsonl(first.items) != items_jsonl(other.items)


def test_model_protocol_is_the_papers_table_1_grid_with_50_instances(model_set):
    cells = Counter(PARADIGM.design_cell(item) for item in model_set)
    assert len(model_set) == 900 == PARADIGM.expected_count(PARADIGM.resolve_config("model"))
    assert len(cells) == 18 and set(cells.values()) == {50}
    assert "main/5-shot/synthetic+flipped-truth+single-turn" in cells
    for item in model_set:
        condition = item.condition
        assert condition["final"] and condition["probe_step"] == condition["n_steps"]
        assert condition["shots"] <= condition["n_steps"] <= 9  # the paper's 10 - shots extra steps
        assert len(item.truth["expected"]) == 20
        assert item.meta["max_new_tokens"] <= PARADIGM.max_new_tokens
    cell = model_set.select(shots=2, language="nl", instruction="normal")
    steps = Counter(i.condition["n_steps"] for i in cell)
    assert sorted(steps) == list(range(2, 10)) and set(steps.values()) == {6, 7}  # balanced


def test_worlds_are_matched_across_conditions_and_differ_between_instances(model_set):
    by_world = {}
    for item in model_set.select(shots=3):
        actions = [(a["box"], a["key"]) for a in item.truth["actions"]]
        by_world.setdefault(item.condition["world"], set()).add(tuple(actions))
    assert len(by_world) == 50 and all(len(v) == 1 for v in by_world.values())
    assert len({next(iter(v)) for v in by_world.values()}) > 45
    vocabularies = {
        tuple(item.truth["words"].values()) for item in model_set.select(language="synthetic")
    }
    assert len(vocabularies) > 100  # fresh synthetic words per instance


def test_prompt_layout_follows_the_papers_example_1(model_set):
    item = model_set.select(shots=3, language="nl", instruction="normal")[0]
    lines = item.prompt.split("\n")
    assert lines[0].startswith("Instructions: As an agent, you need to find the way")
    assert lines[1] == "Step-0: Initialization. Do nothing."
    assert lines[2].startswith("Question: OPENED(BOX-0)=? OPENED(BOX-1)=?")
    assert lines[3] == "Answer: " + ", ".join(
        f"OPENED(BOX-{i})=False" for i in range(10)
    ) + ", " + (", ".join(f"OBTAINED(KEY-{i})=False" for i in range(10)))
    assert re.fullmatch(r"Step-1: Open BOX-\d and retrieve KEY-\d\.", lines[4])
    assert sum(line.startswith("Answer: ") for line in lines) == 3  # the 3 shots
    assert lines[-2] == item.question and lines[-1] == "Answer:"
    assert item.prompt == f"{item.context}\n{item.question}\nAnswer:"
    test_step = item.condition["n_steps"]
    assert lines[-3].startswith(f"Step-{test_step}: Open ")
    assert item.messages == (
        {"role": "system", "content": "You are a helpful assistant."},
        {"role": "user", "content": item.prompt},
    )


def test_faked_multi_round_chat_alternates_demonstrations():
    stimulus_set = PARADIGM.generate_set(
        "formats", 1, {"shots": [3], "instances": 3, "language": ["nl"]}
    )
    single, multi = (stimulus_set.select(prompt_format=f) for f in ("single-turn", "multi-round"))
    for one, chat in zip(single, multi, strict=True):
        roles = [m["role"] for m in chat.messages]
        assert roles == [
            "system",
            "user",
            "assistant",
            "user",
            "assistant",
            "user",
            "assistant",
            "user",
        ]
        assert chat.messages[1]["content"].startswith("Instructions: ")
        assert chat.messages[2]["content"].startswith("Answer: OPENED(BOX-0)=False")
        assert chat.messages[-1]["content"].endswith(chat.question)
        assert chat.truth["expected"] == one.truth["expected"] and chat.prompt == one.prompt
        joined = "\n".join(m["content"] for m in chat.messages[1:])
        assert joined + "\nAnswer:" == one.prompt


def test_probing_gives_one_item_per_step_with_demonstrations_only_before_it(probed_set):
    config = PARADIGM.resolve_config(
        "probing", {"compress": 2, "max_steps": 5, "boxes": 7, "instances": 6, "shots": [2, 3]}
    )
    assert len(probed_set) == PARADIGM.expected_count(config)
    instances = {}
    for item in probed_set:
        instances.setdefault(item.condition["instance"], []).append(item)
    for items in instances.values():
        steps = sorted(i.condition["probe_step"] for i in items)
        assert steps == list(range(1, items[0].condition["n_steps"] + 1))
        assert len({i.condition["world"] for i in items}) == 1
        for item in items:
            probe, shots = item.condition["probe_step"], item.condition["shots"]
            demonstrated = min(shots, probe)
            assert item.condition["n_demonstrations"] == demonstrated
            assert item.condition["in_demonstrations"] == (probe < shots)
            assert item.prompt.count("\nAnswer: ") == demonstrated
            assert f"Step-{probe}: Open" in item.prompt and f"Step-{probe + 1}:" not in item.prompt
            assert item.truth["probe_step"] == probe


def test_compressed_initialization_starts_k_steps_in_and_ends_in_the_same_state(probed_set):
    final = [i for i in probed_set if i.condition["final"]]
    for compressed in (i for i in final if i.condition["initialization"] == "compressed"):
        normal = next(
            i
            for i in final
            if i.condition["initialization"] == "normal"
            and i.condition["world"] == compressed.condition["world"]
            and i.condition["language"] == compressed.condition["language"]
            and i.condition["instruction"] == compressed.condition["instruction"]
        )
        k = compressed.condition["compressed_steps"]
        assert k == 2 and normal.condition["compressed_steps"] == 0
        assert normal.condition["n_steps"] == compressed.condition["n_steps"] + k
        assert compressed.truth["states"][0] == normal.truth["states"][k]
        assert compressed.truth["expected"] == normal.truth["expected"]
        assert compressed.truth["compressed"] == normal.truth["actions"][:k]
        opened = sum(compressed.truth["states"][0]["opened"])
        first_answer = compressed.prompt.split("\n")[3]
        assert (
            first_answer.count(f"={compressed.condition['instruction'] == 'normal'}") == 2 * opened
        )


def test_distractors_append_one_bank_sentence_to_every_action_step():
    stimulus_set = PARADIGM.generate_set("distractors", 1, {"instances": 4, "shots": [2]})
    bank = set(distractors.bank())
    for item in stimulus_set.select(distractors="on"):
        lines = [line for line in item.context.split("\n") if line.startswith("Step-")]
        assert lines[0] == "Step-0: Initialization. Do nothing."
        for line, sentence in zip(lines[1:], item.truth["distractors"], strict=True):
            assert line.endswith(". " + sentence) and sentence in bank
        assert item.truth["distractor_source"] == "bank"
    for item in stimulus_set.select(distractors="off"):
        assert item.truth["distractors"] is None


def test_the_sentence_bank_never_mentions_the_task():
    sentences = distractors.bank()
    assert len(sentences) >= 150 and len(set(sentences)) == len(sentences)
    assert not any(distractors.mentions_the_task(s) for s in sentences)
    assert distractors.mentions_the_task("He opened the door.")


def test_brown_corpus_is_used_when_nltk_has_it(monkeypatch):
    sents = [
        ["It", "was", "a", "nice", "day", "."],
        ["She", "opened", "the", "box", "at", "noon", "."],
        ["``", "Well", ",", "''", "he", "said", ",", "``", "we", "can't", "stay", "''", "."],
        ["Too", "short", "."],
    ]
    corpus = types.SimpleNamespace(brown=types.SimpleNamespace(sents=lambda: sents))
    monkeypatch.setitem(sys.modules, "nltk", types.ModuleType("nltk"))
    monkeypatch.setitem(sys.modules, "nltk.corpus", corpus)
    distractors.brown.cache_clear()
    try:
        assert distractors.brown() == ("It was a nice day.", '"Well," he said, "we can\'t stay".')
        stimulus_set = PARADIGM.generate_set(
            "smoke", 1, {"distractors": ["on"], "distractor_source": "brown"}
        )
        item = stimulus_set.items[0]
        assert item.truth["distractor_source"] == "brown"
        assert set(item.truth["distractors"]) <= set(distractors.brown())
        assert verify_item(item) == []
    finally:
        distractors.brown.cache_clear()


def test_brown_without_nltk_is_a_one_line_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "nltk", None)
    monkeypatch.setitem(sys.modules, "nltk.corpus", None)
    distractors.brown.cache_clear()
    with pytest.raises(TracktaleError, match=r"needs NLTK and its Brown corpus \(pip install nltk"):
        PARADIGM.resolve_config("smoke", {"distractors": ["on"], "distractor_source": "brown"})
    distractors.brown.cache_clear()


def _edited(item: Item, **changes) -> Item:
    data = item.to_dict()
    for path, value in changes.items():
        target = data
        *parents, last = path.split("__")
        for name in parents:
            target = target[int(name)] if isinstance(target, list) else target[name]
        target[int(last) if isinstance(target, list) else last] = value
    data.pop("item_id")
    return Item.create(**data)  # a new, self-consistent id: only verify can catch it


def test_verify_catches_edited_text_and_wrong_truth(model_set):
    item = model_set.select(shots=5, language="synthetic", instruction="flipped-truth")[3]
    assert PARADIGM.verify(item) == []
    flipped_first = not item.truth["expected"][0]
    cases = {
        "context": dict(context=item.context.replace("Step-1: Open", "Step-1: Close")),
        "answer": dict(answer=item.answer.replace("=True", "=False", 1)),
        "expected": dict(truth__expected__0=flipped_first),
        "states": dict(truth__states__1__opened__0=not item.truth["states"][1]["opened"][0]),
        "actions": dict(truth__actions__0__key=(item.truth["actions"][0]["key"] + 1) % 10),
        "words": dict(truth__words__box_functor="OPENED"),
        "example": dict(truth__example__box=12),
        "shots": dict(condition__shots=9),
        "messages": dict(messages__1__content="Hello"),
        "instance": dict(condition__instance="i000000000000"),
        "world": dict(condition__world="w2.001"),
        "meta": dict(meta__n_states=3),
    }
    for name, change in cases.items():
        problems = PARADIGM.verify(_edited(item, **change))
        assert problems, f"an edited {name} went unnoticed"
    assert (
        "differs from what the plan renders"
        in PARADIGM.verify(_edited(item, **cases["context"]))[0]
    )
    assert "not the simulated state" in PARADIGM.verify(_edited(item, **cases["expected"]))[0]
    assert (
        "Step-1 differs from the simulation" in PARADIGM.verify(_edited(item, **cases["states"]))[0]
    )
    assert "not possible in the box world" in PARADIGM.verify(_edited(item, **cases["actions"]))[0]
    broken = item.to_dict()
    del broken["truth"]["box_keys"]
    assert "malformed" in verify_item(item_from_dict(broken, check_id=False))[0]


def test_verify_catches_a_distractor_from_elsewhere():
    item = PARADIGM.generate_set("smoke", 1, {"distractors": ["on"]}).items[0]
    edited = _edited(item, truth__distractors__0="A sentence we never wrote.")
    assert "not from the sentence bank" in PARADIGM.verify(edited)[0]
    smuggled = _edited(item, truth__distractors__0="Then he opened the other door.")
    assert "mentions the task" in PARADIGM.verify(smuggled)[0]


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"shots": [2, 5], "max_steps": 4}, "--shots 5 needs at least 5 steps"),
        ({"boxes": 0}, "--boxes must be at least 1, got 0"),
        ({"shots": [0]}, "--shots must be at least 1"),
        ({"shots": [3, 3]}, "--shots names 3 twice"),
        ({"min_steps": 6, "max_steps": 5}, "--min-steps 6 is more than --max-steps 5"),
        ({"compress": 4}, "--compress 4 and --max-steps 9 open 13 boxes, but there are only 10"),
        ({"max_steps": 12}, "open 12 boxes, but there are only 10"),
        ({"language": ["klingon"]}, "--language: 'klingon' is not one of"),
        ({"instances": 0}, "--instances must be at least 1"),
        ({"templates": ["standard"]}, "has no option --templates"),
        ({"compress": "some"}, "--compress must be int or 'random', got 'some'"),
        ({"compress": "random", "probe": "every"}, "use it with --probe final"),
        ({"compress": "random", "compress_max": 2, "shots": [9]}, "which is empty for"),
    ],
)
def test_bad_configs_are_one_line_errors(overrides, message):
    with pytest.raises(TracktaleError, match=re.escape(message)) as error:
        PARADIGM.resolve_config("model", overrides)
    assert "\n" not in str(error.value)


def test_design_cells_and_condition_fields(probed_set):
    cells = {PARADIGM.design_cell(i) for i in probed_set}
    assert "main/2-shot/nl+normal+single-turn" in cells
    assert "main/3-shot/synthetic+flipped-truth+single-turn+compressed-2" in cells
    for item in probed_set:
        assert all(isinstance(v, str | int | float | bool) for v in item.condition.values())
        assert item.role == "main" and item.choice is None and item.question


def run_cli(argv, capsys):
    from tracktale.app.cli import main

    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    out, err = capsys.readouterr()
    return exit_info.value.code, out, err


def test_cli_generates_validates_and_reports_bad_options_in_one_line(tmp_path, capsys):
    out_dir = tmp_path / "boxes"
    argv = ["stimuli", "generate", "--paradigm", "boxes", "--protocol", "smoke", "--out"]
    code, out, _ = run_cli([*argv, str(out_dir), "--language", "nl,argument-only"], capsys)
    assert code == 0 and "nl+flipped-truth+single-turn" in out and "argument-only" in out
    code, out, _ = run_cli(["stimuli", "validate", str(out_dir)], capsys)
    assert code == 0 and "all 20 items verified" in out
    path = out_dir / "items.jsonl"
    lines = path.read_text().splitlines()
    lines[4] = lines[4].replace("retrieve KEY-", "retrieve KEY-1", 1)
    path.write_text("\n".join(lines) + "\n")
    code, _, err = run_cli(["stimuli", "validate", str(out_dir)], capsys)
    assert code == 1 and "line 5" in err
    for bad, fragment in [
        (["--shots", "3", "--max-steps", "2"], "--shots 3 needs at least 3 steps"),
        (["--boxes", "0"], "--boxes must be at least 1"),
        (["--shots", "two"], "is not a list of int values"),
        (["--probe", "sometimes"], "--probe: 'sometimes' is not one of final, every"),
    ]:
        code, _, err = run_cli([*argv, str(tmp_path / "bad"), *bad], capsys)
        assert code == 1 and err.count("\n") == 1 and fragment in err, err


def test_csv_export_round_trips_boxes_items(tmp_path, probed_set):
    from tracktale.stimuli.csv_export import read_items_csv, write_items_csv

    items = list(probed_set)[:40]
    write_items_csv(items, tmp_path / "items.csv")
    assert read_items_csv(tmp_path / "items.csv") == items


def test_every_protocol_yields_its_expected_count():
    for protocol in ("smoke", "compressed", "distractors"):
        config = PARADIGM.resolve_config(protocol)
        assert len(list(PARADIGM.generate(config, 5))) == PARADIGM.expected_count(config)
    for protocol in ("languages", "probing", "formats"):
        config = PARADIGM.resolve_config(protocol, {"instances": 3})
        assert len(list(PARADIGM.generate(config, 5))) == PARADIGM.expected_count(config)


def test_the_real_nltk_either_gives_brown_sentences_or_says_how_to_get_them():
    pytest.importorskip("nltk")
    distractors.brown.cache_clear()
    try:
        sentences = distractors.brown()
    except TracktaleError as error:
        assert str(error) == (
            "NLTK is installed but its Brown corpus is not "
            "(pip install nltk, then python -m nltk.downloader brown)"
        )
    else:
        assert len(sentences) > 1000
        assert not any(distractors.mentions_the_task(s) for s in sentences)
    finally:
        distractors.brown.cache_clear()


def test_random_compression_draws_k_per_instance_like_the_authors_generator():
    config = PARADIGM.resolve_config("compressed")
    assert config["compress"] == "random" and config["probe"] == "final"
    items = list(PARADIGM.generate(config, 2))
    compressed = [i for i in items if i.condition["initialization"] == "compressed"]
    by_world = {}
    for item in items:
        by_world.setdefault((item.condition["world"], item.condition["language"]), []).append(item)
    ks = {}
    for item in compressed:
        k, shots = item.condition["compressed_steps"], item.condition["shots"]
        assert 1 <= k <= min(10 - shots, config["compress_max"]) - 1
        # The actions stop when the boxes run out (the authors' loop breaks there).
        assert k + item.condition["n_steps"] <= 10
        ks.setdefault(shots, set()).add(k)
        pair = by_world[(item.condition["world"], item.condition["language"])]
        normal = next(i for i in pair if i.condition["initialization"] == "normal")
        assert normal.condition["n_steps"] == item.condition["n_steps"] + k
        assert normal.truth["expected"] == item.truth["expected"]
    assert ks[2] == set(range(1, 8)) and ks[5] == set(range(1, 5))
    capped = PARADIGM.resolve_config("compressed", {"compress_max": 3})
    assert {
        i.condition["compressed_steps"]
        for i in PARADIGM.generate(capped, 2)
        if i.condition["initialization"] == "compressed"
    } == {1, 2}


def test_compress_random_from_the_command_line(tmp_path, capsys):
    out = tmp_path / "set"
    argv = ["stimuli", "generate", "--paradigm", "boxes", "--protocol", "compressed"]
    argv += ["--instances", "4", "--compress", "random", "--compress-max", "4", "--out", str(out)]
    status, _, err = run_cli(argv, capsys)
    assert status == 0, err
    fixed = ["stimuli", "generate", "--paradigm", "boxes", "--protocol", "compressed"]
    fixed += ["--instances", "2", "--compress", "3", "--max-steps", "7", "--out", str(out / "b")]
    assert run_cli(fixed, capsys)[0] == 0
    bad = [*fixed[:-2], "--compress", "lots", "--out", str(tmp_path / "c")]
    status, _, err = run_cli(bad, capsys)
    assert status != 0 and "--compress: 'lots' is not int or one of random" in err
