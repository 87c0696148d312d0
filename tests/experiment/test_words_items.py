"""An imported item set read word by word: self-paced (a word or a region a press) and Maze."""

from __future__ import annotations

import dataclasses

import pytest

from tests.experiment.conftest import ADMIN_SECRET, Participant
from tests.experiment.items_sets import dutch_set, study_folder, table_set
from tracktale.errors import TracktaleError
from tracktale.experiment.paradigms import get_human_study
from tracktale.experiment.storage.store import Storage
from tracktale.experiment.study.config import Secrets, check_study, load_study, study_from_dict
from tracktale.experiment.web.app import create_app
from tracktale.plugin import ParadigmPlugin
from tracktale.stimuli.registry import get_plugin, paradigm_names

SECRETS = Secrets(admin_secret=ADMIN_SECRET, secret_key="k", export_salt="salt")
REGIONED = [
    ("The key to the cabinets was rusty.", "The key | to the cabinets | was rusty."),
    ("The keys to the cabinet were rusty.", "The keys | to the cabinet | were rusty."),
    ("A cat on the mats was asleep.", "A cat | on the mats | was asleep."),
    ("The cats on the mat were asleep.", "The cats | on the mat | were asleep."),
]


@pytest.fixture(scope="module")
def dutch():
    return dutch_set()


@pytest.fixture
def regioned(tmp_path):
    """Two items in two conditions, each text cut into three regions by the table."""
    rows = [
        {
            "item": str(number // 2 + 1),
            "n": "sg" if number % 2 == 0 else "pl",
            "text": text,
            "regions": regions,
            "question": "Was something rusty or asleep?",
            "answer": "yes",
        }
        for number, (text, regions) in enumerate(REGIONED)
    ]
    design = {
        "columns": {
            "item": "item",
            "text": "text",
            "regions": "regions",
            "question": "question",
            "answer": "answer",
        },
        "factors": {"n": {"levels": ["sg", "pl"]}},
    }
    return table_set(tmp_path / "regioned", rows, design)


def _reader(tmp_path, stimuli, **study):
    """A participant of a study of ``stimuli`` (its study file holds ``study``), consented."""
    config = load_study(study_folder(tmp_path / "study", stimuli, **study))
    storage = Storage(config.database_url())
    app = create_app(config, storage=storage, stimulus_set=stimuli, secrets=SECRETS)
    app.testing = True
    person = Participant(app.test_client(), stimuli)
    assert person.start().status_code == 200
    assert person.consent().status_code == 200
    return person, storage


def _body(person, index):
    """A right answer to trial ``index`` of an items study (typed, or the right option)."""
    shown = person.shown(index)
    item = person.stimuli.get(shown["item_id"])
    body = person.trial_body(index) if shown["task"] == "explicit" else None
    if body is None:
        body = {**person.trial_body(index, timed_out=True), "timed_out": False}
        right = shown["options"].index(item.answer)
        body.update(response=("left", "right")[right], response_time_ms=1.0)
    return body


def _steps(shown):
    """The records the page sends: one per word, or one per region (its words from its first)."""
    steps = []
    for index, (word, region) in enumerate(zip(shown["words"], shown["regions"], strict=True)):
        if shown["step"] == "region" and steps and steps[-1]["region"] == region:
            steps[-1]["word"] += " " + word
            continue
        steps.append(
            {"word_index": index, "region": region, "word": word, "mode": "self_paced"}
            | {"rt_ms": 300.0 + index}
        )
    return steps


def test_the_plug_ins_declare_who_reads_word_by_word():
    readers = {name for name in paradigm_names() if get_plugin(name).reading_modes}
    assert readers == {"narrative", "items"}
    assert get_plugin("items").reading_modes == ("self_paced", "maze")
    with pytest.raises(ValueError, match="reading_modes needs a human study"):
        ParadigmPlugin(name="x", stimuli="tracktale.stimuli.x:P", reading_modes=("maze",))
    assert check_study(study_from_dict({"paradigm": "items", "reading_mode": "maze"}))
    with pytest.raises(TracktaleError, match="maze is not served by the arithmetic study"):
        check_study(study_from_dict({"paradigm": "arithmetic", "reading_mode": "maze"}))


def test_a_dutch_set_is_served_word_by_word_and_each_word_stored_once(tmp_path, dutch):
    person, storage = _reader(tmp_path, dutch, reading_mode="self_paced")
    shown = person.shown(0)
    item = dutch.get(shown["item_id"])
    assert shown["reading_mode"] == "self_paced" and shown["step"] == "word"
    assert shown["words"] == item.context.split() and "distractors" not in shown
    # Without a region column the regions are the sentences (the two screens' here).
    assert shown["regions"][0] == 0 and shown["regions"][-1] >= 1
    body = {**_body(person, 0), "words": _steps(shown)}
    assert person.post("/api/trials", body).status_code == 201
    again = person.post("/api/trials", body)  # the outbox's retry after a lost reply
    assert again.status_code == 200 and again.get_json()["outcome"] == "duplicate"
    stored = list(storage.words())
    assert [w.word for w in stored] == shown["words"]
    assert [w.word_index for w in stored] == list(range(len(shown["words"])))
    assert {w.item_id for w in stored} == {item.item_id}
    wrong = [{**_steps(person.shown(1))[0], "word": "Zebra"}]
    reply = person.post("/api/trials", {**_body(person, 1), "words": wrong})
    assert reply.status_code == 422 and "not the story's word" in reply.get_json()["error"]
    storage.close()


def test_a_table_with_regions_is_read_a_region_a_press(tmp_path, regioned):
    person, storage = _reader(tmp_path, regioned, reading_mode="self_paced")
    shown = person.shown(0)
    item = regioned.get(shown["item_id"])
    assert shown["step"] == "region" and shown["words"] == item.context.split()
    cut = [item.context[a:b] for a, b in item.truth["segments"]]
    steps = _steps(shown)
    assert [step["word"] for step in steps] == cut
    assert [step["region"] for step in steps] == [0, 1, 2]
    body = {**_body(person, 0), "words": steps}
    assert person.post("/api/trials", body).status_code == 201
    assert person.post("/api/trials", body).status_code == 200
    assert [w.word for w in storage.words()] == cut, "each region's record stored once"
    storage.close()


def test_simulated_people_read_the_regions(tmp_path, regioned):
    from tracktale.experiment.simulation.run import simulate_participants
    from tracktale.experiment.web.server import serve_in_thread

    config = load_study(study_folder(tmp_path / "study", regioned, reading_mode="self_paced"))
    storage = Storage(config.database_url())
    app = create_app(config, storage=storage, stimulus_set=regioned, secrets=SECRETS)
    with serve_in_thread(app) as running:
        report = simulate_participants(running.url, regioned, ADMIN_SECRET, n=1, seed=3)
    assert report.errors == [] and report.completed == 1
    words = list(storage.words())
    for trial in storage.trials():
        item = regioned.get(trial.item_id)
        mine = [w.word for w in words if w.trial_index == trial.trial_index]
        assert mine == [item.context[a:b] for a, b in item.truth["segments"]]
    storage.close()


def test_a_region_inside_a_word_is_refused_for_word_by_word_reading(regioned):
    item = regioned.items[0]
    truth = {**item.truth, "segments": [[0, 5], [5, len(item.context)]]}  # "The k|ey ..."
    broken = dataclasses.replace(item, truth=truth)
    study = get_human_study("items")
    with pytest.raises(TracktaleError, match="a region ends inside the word 'key'"):
        study.reading_units(broken)


def _with_distractors(stimuli):
    """``stimuli`` with a made-up distractor for each word (``x-x-x`` first)."""
    items = tuple(
        dataclasses.replace(
            item,
            meta={
                **item.meta,
                "distractors": ["x-x-x"] + [w[::-1] + "q" for w in item.context.split()[1:]],
            },
        )
        for item in stimuli
    )
    return dataclasses.replace(stimuli, items=items)


def test_an_imported_maze_goes_word_by_word_and_stores_each_word_once(tmp_path, regioned):
    with pytest.raises(TracktaleError, match="reading_mode maze needs distractors: item"):
        _reader(tmp_path / "none", regioned, reading_mode="maze")
    stimuli = _with_distractors(regioned)
    person, storage = _reader(tmp_path, stimuli, reading_mode="maze", maze_redo=True)
    shown = person.shown(0)
    item = stimuli.get(shown["item_id"])
    assert shown["step"] == "word", "the Maze pairs words, whatever the regions"
    assert shown["distractors"] == item.meta["distractors"] and shown["redo"] is True
    assert shown["regions"] == [0, 0, 1, 1, 1, 2, 2]
    words = [
        {
            "word_index": i,
            "region": shown["regions"][i],
            "word": word,
            "mode": "maze",
            "rt_ms": 700.0,
            "choice": "left",
            "correct": i != 2,
            "distractor": shown["distractors"][i],
            "errors": int(i == 2),
        }
        for i, word in enumerate(shown["words"])
    ]
    body = {**_body(person, 0), "words": words}
    assert person.post("/api/trials", body).status_code == 201
    assert person.post("/api/trials", body).status_code == 200
    stored = list(storage.words())
    assert [w.word for w in stored] == shown["words"] and stored[2].errors == 1
    storage.close()


@pytest.mark.parametrize(
    ("mode", "redo", "key"),
    [("self_paced", False, "spr"), ("maze", False, "maze"), ("maze", True, "maze_redo")],
)
def test_the_welcome_screen_says_how_the_texts_are_read(dutch, regioned, mode, redo, key):
    from tracktale.experiment.study.locale import load_catalogue
    from tracktale.experiment.web.app import page_config

    texts = load_catalogue("nl")
    study = get_human_study("items").bind(dutch, texts)

    def welcome(stimuli, **settings):
        config = study_from_dict({"paradigm": "items", "language": "nl", **settings})
        bound = get_human_study("items").bind(stimuli, texts)
        return page_config(config, bound, texts)["instructions"]["welcome"]

    whole = welcome(dutch)
    seconds = texts.seconds(30_000)
    reading = texts.text("read_and_answer.reading_online", reading=seconds)
    assert reading in whole
    told = welcome(dutch, reading_mode=mode, maze_redo=redo)
    said = texts.text(f"read_and_answer.{key}_online", reading=seconds)
    assert said in told and reading not in told
    assert not any("Doorgaan" in paragraph for paragraph in told), "no button to click"
    # The catalogue's opening paragraphs stay, and so does the last (keep the window open).
    assert told[:2] == whole[:2] and told[-1] == whole[-1] and len(told) == len(whole) - 1
    if mode == "self_paced":
        parts = texts.text("read_and_answer.spr_regions_online", reading=seconds)
        assert parts in welcome(regioned, reading_mode=mode, language="nl")
    assert study.word_by_word_instructions({"welcome": []}, 30_000, mode, redo) == {
        "welcome": [said]
    }
