"""The boxes human study: protocol, lists, grid scoring, the server, simulated people."""

from __future__ import annotations

from collections import Counter, defaultdict

import pandas as pd
import pytest

from tests.experiment.conftest import ADMIN_SECRET, Participant
from tracktale.analysis.report.build import build_report
from tracktale.errors import TracktaleError
from tracktale.experiment.export.files import export_study
from tracktale.experiment.paradigms import get_human_study
from tracktale.experiment.paradigms.boxes import (
    answer_from_grid,
    grid_from_answer,
    list_items,
    p_state_error,
    shown_text,
)
from tracktale.experiment.simulation.run import SimulatedPerson, simulate_participants
from tracktale.experiment.storage.store import Storage
from tracktale.experiment.study.config import StudyConfig, load_study, study_from_dict
from tracktale.experiment.study.design import LIST_IDS, DesignConfig
from tracktale.experiment.web.app import create_app, page_config
from tracktale.experiment.web.server import serve_in_thread
from tracktale.stimuli.registry import get_paradigm
from tracktale.stimulus_set import write_stimulus_set

STUDY = get_human_study("boxes")


@pytest.fixture(scope="module")
def boxes_set():
    return get_paradigm("boxes").generate_set("human", 1)


@pytest.fixture
def boxes_config(tmp_path):
    return study_from_dict(
        {
            "paradigm": "boxes",
            "database": str(tmp_path / "boxes.sqlite"),
            "prolific": {"completion_code": "DONE123", "screenout_code": "OUT456"},
        }
    )


@pytest.fixture
def boxes_app(boxes_config, boxes_set, secrets):
    storage = Storage(boxes_config.database_url())
    app = create_app(boxes_config, storage=storage, stimulus_set=boxes_set, secrets=secrets)
    app.testing = True
    yield app
    storage.close()


def test_the_human_protocol_fits_a_session(boxes_set):
    paradigm = get_paradigm("boxes")
    main = boxes_set.select(role="main")
    practice = boxes_set.select(role="practice")
    assert (len(main), len(practice)) == (64, 2)
    assert all(paradigm.verify(item) == [] for item in boxes_set)
    assert {item.condition["boxes"] for item in boxes_set} == {6}
    cells = Counter(
        (i.condition["shots"], i.condition["language"], i.condition["instruction"]) for i in main
    )
    assert len(cells) == 8 and set(cells.values()) == {8}
    # Practice: the fewest shots, both manipulations shown, worlds of their own.
    assert [(i.condition["language"], i.condition["instruction"]) for i in practice] == [
        ("nl", "normal"),
        ("synthetic", "flipped-truth"),
    ]
    assert not {i.condition["world"] for i in practice} & {i.condition["world"] for i in main}


def test_model_protocols_have_no_practice_option_in_their_config():
    config = get_paradigm("boxes").resolve_config("model")
    assert "practice" not in config
    assert get_paradigm("boxes").resolve_config("human")["practice"] == 2
    assert get_paradigm("boxes").resolve_config("smoke", {"practice": 1})["practice"] == 1


def test_the_grid_writes_out_exactly_the_model_answer(boxes_set):
    paradigm = get_paradigm("boxes")
    for item in boxes_set:
        code = grid_from_answer(item, list(item.truth["expected"]))
        assert answer_from_grid(item, code) == item.answer
    item = boxes_set.select(role="main")[0]
    code = grid_from_answer(item, list(item.truth["expected"]))
    wrong = ("F" if code[0] == "T" else "T") + code[1:]
    scored = paradigm.score_response(item, answer_from_grid(item, wrong))
    assert scored.correct is False and scored.state_em == pytest.approx(11 / 12)
    for bad in ("", code[:-1], code + "T", "x" * len(code), code.lower()):
        with pytest.raises(TracktaleError, match="one T or F per queried state"):
            answer_from_grid(item, bad)


def test_people_read_the_steps_without_the_question_lines(boxes_set):
    item = boxes_set.select(role="main")[0]
    text = shown_text(item)
    assert "Question:" not in text and "Step-0" in text and "Answer:" in text
    assert [line for line in item.context.split("\n") if not line.startswith("Question:")] == (
        text.split("\n")
    )


def test_lists_are_a_latin_square_over_conditions(boxes_set):
    shown = defaultdict(list)
    for list_id in LIST_IDS:
        items = list_items(boxes_set, list_id, seed=1)
        assert len(items) == 16
        assert len({i.condition["world"] for i in items}) == 16  # every world once
        cells = Counter(
            (i.condition["shots"], i.condition["language"], i.condition["instruction"])
            for i in items
        )
        assert set(cells.values()) == {2}  # every cell twice per participant
        for item in items:
            shown[item.item_id].append(list_id)
    # Across the four lists every main item is shown exactly once.
    assert sorted(shown) == sorted(i.item_id for i in boxes_set.select(role="main"))
    assert set(map(len, shown.values())) == {1}


def test_a_session_is_practice_then_shuffled_main_trials(boxes_set):
    plan = STUDY.build_session(boxes_set, "L2", 7, DesignConfig())
    assert plan.block_formats == ("explicit", "explicit")
    roles = [(t.role, t.block, t.task) for t in plan.trials]
    assert roles[:2] == [("practice", 0, "explicit")] * 2
    assert roles[2:] == [("main", 1, "explicit")] * 16
    assert plan == STUDY.build_session(boxes_set, "L2", 7, DesignConfig())
    other = STUDY.build_session(boxes_set, "L2", 8, DesignConfig())
    assert [t.item_id for t in other.trials] != [t.item_id for t in plan.trials]
    assert sorted(t.item_id for t in other.trials) == sorted(t.item_id for t in plan.trials)
    with pytest.raises(TracktaleError, match="practice items"):
        STUDY.build_session(boxes_set, "L1", 0, DesignConfig(practice_per_format=3))


def test_the_paradigm_sets_the_study_defaults(tmp_path):
    config = load_study(None, "boxes")
    assert (config.paradigm, config.study_id) == ("boxes", "boxes-state-tracking")
    assert config.timing.response_ms == 90_000 and config.ethics.duration_minutes == 30
    assert config.stimulus_dir().name == "boxes-human-s1"
    assert load_study(None).stimulus_dir().name == "narrative-human-s1"
    path = tmp_path / "study.yaml"
    path.write_text("paradigm: boxes\nstudy_id: pilot\ntiming: {reading_ms: 60000}\n")
    config = load_study(path)
    assert (config.study_id, config.timing.reading_ms, config.timing.response_ms) == (
        "pilot",
        60_000,
        90_000,
    )
    with pytest.raises(TracktaleError, match="contradicts"):
        load_study(path, "narrative")
    path.write_text("paradigm: chess\n")
    with pytest.raises(TracktaleError, match="has no human study"):
        load_study(path)
    assert isinstance(load_study(None), StudyConfig)


def test_the_page_loads_the_grid_and_the_boxes_texts(boxes_config, boxes_app):
    page = page_config(boxes_config)
    assert page["trial_plugins"] == {"explicit": "jsPsychBoxesGrid"}
    assert "16 short puzzles" in page["consent_html"] and "90 seconds" in page["consent_html"]
    assert "True or False" in " ".join(page["instructions"]["explicit"])
    html = boxes_app.test_client().get("/").get_data(as_text=True)
    assert "plugins/boxes-grid.js" in html


def test_the_server_scores_a_grid_as_the_model_answer(boxes_app, boxes_set):
    client = boxes_app.test_client()
    person = Participant(client, boxes_set)
    assert person.start().status_code == 200
    assert person.consent().status_code == 200
    shown = person.shown(0)
    item = boxes_set.get(shown["item_id"])
    assert shown["parameters"]["states"] == item.truth["queried"]
    assert item.answer not in str(shown) and "Question:" not in shown["story"]
    body = person.trial_body(0)
    body["response"] = "T" * (len(item.truth["queried"]) - 1)
    reply = person.post("/api/trials", body)
    assert reply.status_code == 422 and "one T or F" in reply.get_json()["error"]
    body["response"] = grid_from_answer(item, list(item.truth["expected"]))
    reply = person.post("/api/trials", body)
    assert reply.status_code in (200, 201), reply.get_json()
    assert reply.get_json()["feedback"]["correct"] is True  # a practice trial
    storage = boxes_app.extensions["tracktale"].storage
    (stored,) = list(storage.trials())
    assert stored.response == item.answer and stored.correct is True


def test_simulated_error_rates_grow_with_steps(boxes_set):
    person = SimulatedPerson("P", 0.0, True, 1.0, (1280, 720), 30, "female")
    item = boxes_set.select(role="main")[0]
    rates = [p_state_error(person, item, steps) for steps in range(1, 7)]
    assert rates == sorted(rates) and rates[-1] > 2 * rates[0]
    assert p_state_error(SimulatedPerson("Q", 0.0, False, 1.0, (1, 1), 30, "male"), item, 1) == 0.5


def test_a_simulated_boxes_study_runs_through_the_real_server(
    boxes_app, boxes_set, boxes_config, tmp_path, small_reports
):
    with serve_in_thread(boxes_app) as server:
        report = simulate_participants(
            server.url, boxes_set, ADMIN_SECRET, n=16, seed=3, concurrency=4
        )
    assert report.errors == [] and report.completed == 16
    storage = boxes_app.extensions["tracktale"].storage
    trials = list(storage.trials())
    assert len(trials) == report.trials_acknowledged == 16 * 18
    assert {p.list_id for p in storage.participants()} == set(LIST_IDS)
    paradigm = get_paradigm("boxes")
    by_steps = defaultdict(list)
    for trial in trials:
        item = boxes_set.get(trial.item_id)
        if trial.response is not None:
            scored = paradigm.score_response(item, trial.response)
            assert scored.parsed and bool(scored.correct) == trial.correct
        if trial.role == "main":
            by_steps[item.condition["n_steps"]].append(trial.correct)
    short = sum(by_steps[3]) / len(by_steps[3])
    long = sum(by_steps[6]) / len(by_steps[6])
    assert short > long, (short, long)
    # The report puts these people beside a model on the same items and metrics.
    folder = tmp_path / "boxes-human"
    write_stimulus_set(boxes_set, folder)
    items = boxes_set.select(role="main")
    results = pd.DataFrame(
        {
            "model_id": "some/model",
            "revision": "",
            "item_id": [item.item_id for item in items],
            "task": "explicit",
            "output": [item.answer for item in items],
            "correct": True,
        }
    )
    export_study(storage, tmp_path / "export", formats=["csv"])
    exported = pd.read_csv(tmp_path / "export" / "trials.csv")
    assert sorted(exported["response"].dropna()) == sorted(t.response for t in trials if t.response)
    report = build_report(
        stimuli=[folder], out=tmp_path / "report", human=tmp_path / "export", models=results
    )
    (table1,) = (tmp_path / "report").rglob("boxes_table1.csv")
    layout = pd.read_csv(table1)
    assert layout["model"].tolist() == ["people"] * 4 + ["some/model"] * 4
    assert set(layout.loc[layout["model"] == "some/model", "3-shot"]) == {"100% / 100%"}
    assert "people" in report.html_path.read_text(encoding="utf-8")
    # The session rules apply: participants who did not confirm attention are left out.
    (people,) = (tmp_path / "report").rglob("boxes_human_final_step.csv")
    records = pd.read_csv(tmp_path / "export" / "participants.csv")
    attentive = set(records.loc[records["attentive"] == 1, "participant_id"])
    assert len(attentive) == 15  # seed 3 draws one inattentive participant
    assert set(pd.read_csv(people)["participants"]) == {len(attentive)}


def test_the_paradigm_option_runs_the_boxes_study_from_the_command_line(capsys, tmp_path):
    from tracktale.app.cli import main
    from tracktale.settings import data_dir

    with pytest.raises(SystemExit) as exit_info:
        main(["experiment", "simulate", "--paradigm", "boxes", "--n", "2", "--concurrency", "2"])
    out = capsys.readouterr().out
    assert exit_info.value.code == 0, out
    assert "serving boxes-state-tracking" in out
    assert "2/2 simulated participants completed; 36/36 trials acknowledged" in out
    assert (data_dir() / "stimuli" / "boxes-human-s1").is_dir()  # the default set, generated
    study = tmp_path / "study.yaml"
    study.write_text("paradigm: narrative\n")
    with pytest.raises(SystemExit) as exit_info:
        main(["experiment", "serve", "--study", str(study), "--paradigm", "boxes"])
    assert exit_info.value.code == 1
    assert "contradicts" in capsys.readouterr().err
