"""Stories read word by word: each word's record stored once with its trial, and exported."""

from __future__ import annotations

import csv
import dataclasses
import io

import pytest

from tracktale.analysis.reading.records import read_reading_times
from tracktale.errors import TracktaleError
from tracktale.experiment.export.files import export_study
from tracktale.experiment.study.words import story_regions
from tracktale.experiment.web.app import create_app
from tracktale.schema import WordRecord

from .conftest import Participant


@pytest.fixture
def spr_client(study_config, storage, human_set, secrets):
    config = dataclasses.replace(study_config, reading_mode="self_paced")
    app = create_app(config, storage=storage, stimulus_set=human_set, secrets=secrets)
    app.testing = True
    return app.test_client()


@pytest.fixture
def reader(spr_client, human_set):
    person = Participant(spr_client, human_set)
    assert person.start().status_code == 200
    assert person.consent().status_code == 200
    return person


def spr_words(shown, rt=250.0):
    return [
        {"word_index": i, "region": region, "word": word, "mode": "self_paced", "rt_ms": rt + i}
        for i, (word, region) in enumerate(zip(shown["words"], shown["regions"], strict=True))
    ]


def test_the_served_trial_carries_its_words_and_regions(reader, human_set):
    shown = reader.shown(0)
    story = human_set.get(shown["item_id"]).context
    assert shown["reading_mode"] == "self_paced"
    assert shown["words"] == story.split()
    assert shown["regions"][0] == 0 and shown["regions"][-1] >= 1
    assert "distractors" not in shown


def test_words_are_stored_once_and_exported(reader, storage, tmp_path):
    body = {**reader.trial_body(0), "words": spr_words(reader.shown(0))}
    first = reader.post("/api/trials", body)
    assert first.status_code == 201, first.get_json()
    again = reader.post("/api/trials", body)  # the outbox's retry after a lost reply
    assert again.status_code == 200 and again.get_json()["outcome"] == "duplicate"
    stored = list(storage.words())
    assert len(stored) == len(reader.shown(0)["words"])
    assert [w.word_index for w in stored] == list(range(len(stored)))
    assert {w.client_trial_id for w in stored} == {body["client_trial_id"]}
    assert stored[3].rt_ms == 253.0 and stored[0].received_at is not None
    written = export_study(storage, tmp_path / "out", formats=("csv",), salt="s")
    assert "words.csv" in {path.name for path in written}
    rows = list(csv.DictReader(io.StringIO((tmp_path / "out" / "words.csv").read_text())))
    assert list(rows[0]) == [f.name for f in dataclasses.fields(WordRecord)]
    assert len(rows) == len(stored) and rows[0]["word"] == stored[0].word


def test_a_retry_whose_first_words_were_lost_stores_them(reader, storage):
    body = reader.trial_body(0)
    assert reader.post("/api/trials", body).status_code == 201
    words = spr_words(reader.shown(0))
    assert reader.post("/api/trials", {**body, "words": words}).status_code == 200
    assert len(list(storage.words())) == len(words)


def test_a_whole_story_export_has_no_words_file(participant, storage, tmp_path):
    person = participant()
    person.start()
    person.consent()
    assert person.answer(0).status_code == 201
    names = {path.name for path in export_study(storage, tmp_path, formats=("csv",), salt="s")}
    assert names == {"accuracy.csv", "participants.csv", "trials.csv"}


@pytest.mark.parametrize(
    ("change", "status", "message"),
    [
        (lambda w: "not a list", 400, "field 'words' must be a list"),
        (lambda w: [], 400, "field 'words' must be a list"),
        (lambda w: [{**w[0], "rt_ms": -1}], 400, "words[0]: field 'rt_ms' must be at least 0"),
        (lambda w: [{**w[0], "mode": "fast"}], 400, "words[0]: field 'mode' must be one of"),
        (lambda w: [{**w[0], "extra": 1}], 400, "words[0]: unknown field 'extra'"),
        (lambda w: [w[0], w[0]], 400, "words[1]: field 'word_index' repeats"),
        (lambda w: [{**w[0], "word": "Zebra"}], 422, "words[0]: not the story's word"),
        (lambda w: [{**w[0], "word_index": 9999}], 422, "words[0]: not the story's word"),
        (lambda w: [{**w[0], "mode": "maze"}], 422, "reading mode is self_paced"),
        (lambda w: [{**w[0], "choice": "left"}], 422, "a self-paced word has Maze fields"),
        (lambda w: ["word"], 400, "words[0]: the request body must be a JSON object"),
    ],
)
def test_bad_words_are_refused_and_nothing_is_stored(reader, storage, change, status, message):
    body = {**reader.trial_body(0), "words": change(spr_words(reader.shown(0)))}
    reply = reader.post("/api/trials", body)
    assert reply.status_code == status, reply.get_json()
    assert message in reply.get_json()["error"]
    assert list(storage.trials()) == [] and list(storage.words()) == []


def test_a_region_is_sent_as_its_words_from_its_first(reader, storage):
    shown = reader.shown(0)
    region = [i for i, r in enumerate(shown["regions"]) if r == 0]
    word = {
        "word_index": 0,
        "region": 0,
        "word": " ".join(shown["words"][i] for i in region),
        "mode": "self_paced",
        "rt_ms": 900.0,
    }
    reply = reader.post("/api/trials", {**reader.trial_body(0), "words": [word]})
    assert reply.status_code == 201, reply.get_json()
    assert [w.word for w in storage.words()] == [word["word"]]


def test_words_in_a_whole_story_study_are_refused(participant):
    person = participant()
    person.start()
    person.consent()
    shown = person.shown(0)
    word = {"word_index": 0, "region": 0, "word": shown["story"].split()[0]}
    body = {**person.trial_body(0), "words": [{**word, "mode": "self_paced", "rt_ms": 1.0}]}
    reply = person.post("/api/trials", body)
    assert reply.status_code == 422 and "whole stories" in reply.get_json()["error"]


def test_maze_without_distractors_fails_clearly(study_config, storage, human_set, secrets):
    config = dataclasses.replace(study_config, reading_mode="maze")
    with pytest.raises(TracktaleError, match="reading_mode maze needs distractors: item"):
        create_app(config, storage=storage, stimulus_set=human_set, secrets=secrets)


def test_regions_are_sentences():
    words = ["Mia", "sat.", '"Go!"', "she", "said.", "Then", "(she", "left.)", "Done"]
    assert story_regions(words) == [0, 0, 1, 2, 2, 3, 3, 3, 4]


def test_simulated_participants_read_word_by_word(spr_client, storage, human_set, tmp_path):
    from tests.experiment.conftest import ADMIN_SECRET
    from tracktale.experiment.simulation.run import simulate_participants
    from tracktale.experiment.web.server import serve_in_thread

    with serve_in_thread(spr_client.application) as running:
        report = simulate_participants(running.url, human_set, ADMIN_SECRET, n=2, seed=5)
    assert report.errors == [] and report.completed == 2
    trials = list(storage.trials())
    words = list(storage.words())
    per_trial = {(w.participant_id, w.trial_index) for w in words}
    read = [t for t in trials if not t.reading_timed_out]
    assert read and all((t.participant_id, t.trial_index) in per_trial for t in read)
    for trial in read:
        mine = [
            w
            for w in words
            if (w.participant_id, w.trial_index) == (trial.participant_id, trial.trial_index)
        ]
        assert [w.word for w in mine] == human_set.get(trial.item_id).context.split()
        assert trial.reading_time_ms == pytest.approx(sum(w.rt_ms for w in mine), abs=0.5)
    rts = sorted(w.rt_ms for w in words)
    assert 250 < rts[len(rts) // 2] < 600
    assert {w.mode for w in words} == {"self_paced"} and {w.source for w in words} == {"simulated"}
    # The export is what `tracktale analysis reading --times` reads, as it is written.
    export_study(storage, tmp_path, formats=("csv",), salt="s")
    table = read_reading_times(tmp_path / "words.csv")
    assert len(table) == len(words) and set(table["item"]) <= {item.item_id for item in human_set}
    assert table["rt_ms"].sum() == pytest.approx(sum(w.rt_ms for w in words))


def maze_set(stimuli):
    """``stimuli`` with a made-up distractor for every word (``x-x-x`` first, as usual)."""

    def distractors(story: str) -> list[str]:
        return ["x-x-x"] + [word[::-1].lower() + "q" for word in story.split()[1:]]

    items = tuple(
        dataclasses.replace(item, meta={**item.meta, "distractors": distractors(item.context)})
        for item in stimuli
    )
    return dataclasses.replace(stimuli, items=items)


def maze_reader(study_config, storage, stimuli, secrets, redo=False):
    config = dataclasses.replace(study_config, reading_mode="maze", maze_redo=redo)
    app = create_app(config, storage=storage, stimulus_set=stimuli, secrets=secrets)
    app.testing = True
    person = Participant(app.test_client(), stimuli)
    assert person.start().status_code == 200
    assert person.consent().status_code == 200
    return person


def maze_words(shown, wrong_at=None, errors=None):
    words = []
    for i, (word, region) in enumerate(zip(shown["words"], shown["regions"], strict=True)):
        words.append(
            {
                "word_index": i,
                "region": region,
                "word": word,
                "mode": "maze",
                "rt_ms": 700.0,
                "choice": "left",
                "correct": i != wrong_at,
                "distractor": shown["distractors"][i],
            }
        )
        if errors is not None:
            words[-1]["errors"] = int(i == wrong_at)
    return words


def test_the_maze_serves_distractors_and_stores_choices(study_config, storage, human_set, secrets):
    stimuli = maze_set(human_set)
    reader = maze_reader(study_config, storage, stimuli, secrets)
    shown = reader.shown(0)
    assert shown["distractors"] == stimuli.get(shown["item_id"]).meta["distractors"]
    assert shown["redo"] is False and isinstance(shown["seed"], int)
    assert reader.shown(0)["seed"] == shown["seed"], "the same sides when served again"
    words = maze_words(shown, wrong_at=5)[:6]  # a wrong choice ends the reading
    body = {**reader.trial_body(0), "words": words}
    assert reader.post("/api/trials", body).status_code == 201
    stored = list(storage.words())
    assert [w.correct for w in stored] == [True] * 5 + [False]
    assert {w.mode for w in stored} == {"maze"} and stored[2].distractor == shown["distractors"][2]
    for bad, message in [
        (maze_words(reader.shown(1), wrong_at=2), "a wrong choice ends the Maze without redo"),
        (maze_words(reader.shown(1), errors=0), "has no errors count"),
        ([{**maze_words(reader.shown(1))[0], "distractor": None}], "needs 'distractor'"),
    ]:
        reply = reader.post("/api/trials", {**reader.trial_body(1), "words": bad})
        assert reply.status_code == 422 and message in reply.get_json()["error"]


def test_maze_redo_counts_errors(study_config, storage, human_set, secrets):
    reader = maze_reader(study_config, storage, maze_set(human_set), secrets, redo=True)
    shown = reader.shown(0)
    assert shown["redo"] is True
    plain = maze_words(shown, wrong_at=2)
    reply = reader.post("/api/trials", {**reader.trial_body(0), "words": plain})
    assert reply.status_code == 422 and "counts its errors" in reply.get_json()["error"]
    words = maze_words(shown, wrong_at=2, errors=True)
    assert reader.post("/api/trials", {**reader.trial_body(0), "words": words}).status_code == 201
    stored = list(storage.words())
    assert len(stored) == len(shown["words"]) and stored[2].errors == 1 and not stored[2].correct


@pytest.mark.parametrize("redo", [False, True])
def test_simulated_participants_take_the_maze(study_config, storage, human_set, secrets, redo):
    from tests.experiment.conftest import ADMIN_SECRET
    from tracktale.experiment.simulation.run import simulate_participants
    from tracktale.experiment.web.server import serve_in_thread

    stimuli = maze_set(human_set)
    config = dataclasses.replace(study_config, reading_mode="maze", maze_redo=redo)
    app = create_app(config, storage=storage, stimulus_set=stimuli, secrets=secrets)
    with serve_in_thread(app) as running:
        report = simulate_participants(running.url, stimuli, ADMIN_SECRET, n=1, seed=2)
    assert report.errors == [] and report.completed == 1
    words = list(storage.words())
    assert words and {w.mode for w in words} == {"maze"}
    assert all(w.choice in ("left", "right") and w.distractor for w in words)
    assert any(not w.correct for w in words), "one wrong choice in 50 over about 4000 words"
    assert all((w.errors is not None) == redo for w in words)


def test_word_by_word_settings_are_checked(study_config, tmp_path):
    from tracktale.experiment.lab.launch import run_lab
    from tracktale.experiment.study.config import check_study, study_from_dict

    def check(data):
        return check_study(study_from_dict(data))

    assert check({"reading_mode": "maze", "maze_redo": True}).maze_redo
    with pytest.raises(TracktaleError, match="maze_redo applies to reading_mode maze only"):
        check({"maze_redo": True})
    with pytest.raises(TracktaleError, match="reading_mode"):
        check({"reading_mode": "fast"})
    with pytest.raises(TracktaleError, match="self_paced is not served by the boxes study"):
        check({"paradigm": "boxes", "reading_mode": "self_paced"})
    config = dataclasses.replace(study_config, reading_mode="self_paced")
    with pytest.raises(TracktaleError, match="the lab mode shows whole stories"):
        run_lab(config, "P1")


def test_the_admin_page_offers_the_words(reader, spr_client, client):
    from tests.experiment.conftest import ADMIN_SECRET

    headers = {"Authorization": f"Bearer {ADMIN_SECRET}"}
    body = {**reader.trial_body(0), "words": spr_words(reader.shown(0))}
    assert reader.post("/api/trials", body).status_code == 201
    assert 'id="words-csv"' in spr_client.get("/admin/", headers=headers).get_data(as_text=True)
    download = spr_client.get("/admin/export/words.csv", headers=headers)
    assert download.status_code == 200
    lines = download.get_data(as_text=True).splitlines()
    assert lines[0].startswith("client_trial_id,") and len(lines) == 1 + len(body["words"])
    assert 'id="words-csv"' not in client.get("/admin/", headers=headers).get_data(as_text=True)


@pytest.mark.parametrize(("mode", "redo"), [("self_paced", False), ("maze", False), ("maze", True)])
def test_the_welcome_screen_says_how_stories_are_read_word_by_word(mode, redo):
    from tracktale.experiment.paradigms import get_human_study
    from tracktale.experiment.study.instructions import instructions

    study = get_human_study("narrative")
    whole = study.instructions(40_000, 15_000, "online")
    told = study.word_by_word_instructions(whole, 40_000, mode, redo)["welcome"]
    assert len(told) == len(whole["welcome"]) and told[0] == whole["welcome"][0]
    assert not any("stays on the screen" in paragraph for paragraph in told)
    said = told[1]
    assert ("dashes" in said) == (mode == "self_paced") and ("E for the left" in said) == (
        mode == "maze"
    )
    assert ("choose again" in said) == redo and "at most 40 seconds" in said
    assert "must answer within 15 seconds" in said  # the question after the story stays
    assert instructions(40_000, 15_000)["welcome"] == whole["welcome"]  # the paper's text
