"""The human study of an imported item set: lists, sessions, trials, scoring, texts, people."""

from __future__ import annotations

import math
import random
from collections import Counter

import pytest

from tests.experiment.conftest import ADMIN_SECRET
from tests.experiment.items_sets import DUTCH, ETHICS_NL, dutch_set, study_folder, table_set
from tracktale.errors import TracktaleError
from tracktale.experiment.paradigms import get_human_study
from tracktale.experiment.paradigms.items import STUDY, spaced
from tracktale.experiment.simulation.run import SimulatedPerson, simulate_study
from tracktale.experiment.storage.store import Storage
from tracktale.experiment.study.config import Secrets, load_study
from tracktale.experiment.study.design import LIST_IDS, DesignConfig, assign_list
from tracktale.experiment.study.locale import load_catalogue
from tracktale.experiment.study.service import StudyService
from tracktale.experiment.web.app import page_config
from tracktale.stimuli.items.importer import import_table

SECRETS = Secrets(admin_secret=ADMIN_SECRET, secret_key="k", export_salt="salt")
AVERAGE = SimulatedPerson("P", 0.0, True, 1.0, (1280, 720), 30, "female")


@pytest.fixture(scope="module")
def dutch():
    return dutch_set()


@pytest.fixture
def six_lists(tmp_path):
    """Three conditions within participants x two groups between them: six lists."""
    rows = [
        {
            "item": str(item),
            "cond": cond,
            "group": group,
            "text": f"Text {item} in {cond}, group {group}.",
            "question": f"Which text is this ({item})?",
            "answer": f"text {item}",
        }
        for item in range(1, 7)
        for cond in ("a", "b", "c")
        for group in ("x", "y")
    ]
    design = {
        "columns": {"item": "item", "text": "text", "question": "question", "answer": "answer"},
        "factors": {
            "cond": {"levels": ["a", "b", "c"]},
            "group": {"levels": ["x", "y"], "within_participants": False},
        },
    }
    return table_set(tmp_path / "six", rows, design)


def _service(tmp_path, stimuli, **study) -> StudyService:
    config = load_study(study_folder(tmp_path / "study", stimuli, **study))
    return StudyService(config, Storage(config.database_url()), stimuli, salt="salt")


def test_six_lists_from_the_set_are_filled_in_turn(tmp_path, six_lists):
    service = _service(tmp_path, six_lists)
    assert service.list_ids == ("L1", "L2", "L3", "L4", "L5", "L6")
    lists = [service.start_session(f"PID{n:04d}").participant.list_id for n in range(60)]
    assert lists[:12] == [f"L{n % 6 + 1}" for n in range(12)]
    assert Counter(lists) == {f"L{n}": 10 for n in range(1, 7)}
    # Each list shows one group, every item once, each condition twice.
    for list_id in service.list_ids:
        plan = service.plan(list_id, 5)
        items = [six_lists.get(trial.item_id) for trial in plan.trials]
        assert len({item.truth["item"] for item in items}) == len(items) == 6
        assert len({item.condition["group"] for item in items}) == 1
        assert Counter(item.condition["cond"] for item in items) == {"a": 2, "b": 2, "c": 2}
    service.storage.close()


def test_the_lists_of_the_paper_studies_stay_the_four(human_set):
    assert get_human_study("narrative").list_ids(human_set) == LIST_IDS == ("L1", "L2", "L3", "L4")
    rng = random.Random(3)
    for _ in range(200):
        counts = {list_id: rng.randrange(4) for list_id in LIST_IDS if rng.random() < 0.8}
        assert assign_list(counts) == assign_list(counts, LIST_IDS)
        least = min(counts.get(list_id, 0) for list_id in LIST_IDS)
        assert assign_list(counts) == next(lid for lid in LIST_IDS if counts.get(lid, 0) == least)
    with pytest.raises(TracktaleError, match="no lists"):
        assign_list({}, ())


def test_a_session_is_practice_then_tests_and_fillers(dutch):
    design = DesignConfig()
    plan = STUDY.build_session(dutch, "L2", 11, design)
    roles = [trial.role for trial in plan.trials]
    assert roles[:2] == ["practice", "practice"] and plan.block_formats == ("text", "text")
    assert [dutch.get(t.item_id).truth["item"] for t in plan.trials[:2]] == ["p1", "p2"]
    assert Counter(roles) == {"practice": 2, "main": 8, "filler": 4}
    main = plan.trials[2:]
    assert {trial.block for trial in main} == {1} and main[0].role == "main"
    assert not any(a.role == b.role == "filler" for a, b in zip(main, main[1:], strict=False))
    assert {(t.role, t.task) for t in plan.trials} == {
        ("practice", "comprehension"),
        ("practice", "explicit"),
        ("main", "comprehension"),
        ("filler", "explicit"),
    }
    assert STUDY.build_session(dutch, "L2", 11, design) == plan
    assert STUDY.build_session(dutch, "L2", 12, design).trials != plan.trials
    with pytest.raises(TracktaleError, match="unknown list 'L9'"):
        STUDY.build_session(dutch, "L9", 1, design)


def test_fillers_are_spread_or_shuffled_in_when_they_outnumber_the_tests():
    rng = random.Random(1)
    for tests, fillers in ((5, 5), (8, 3), (2, 5)):
        mixed = spaced(rng, [f"t{n}" for n in range(tests)], [f"f{n}" for n in range(fillers)])
        assert sorted(mixed) == sorted(
            [f"t{n}" for n in range(tests)] + [f"f{n}" for n in range(fillers)]
        )
        if fillers <= tests:
            assert mixed[0].startswith("t")
            assert not any(a[0] == b[0] == "f" for a, b in zip(mixed, mixed[1:], strict=False))


def test_a_trial_serves_its_screens_question_and_options_and_never_the_answer(dutch):
    study = STUDY.bind(dutch, load_catalogue("nl"))
    plan = study.build_session(dutch, "L1", 3, DesignConfig())
    choice = next(t for t in plan.trials if t.role == "main")
    item = dutch.get(choice.item_id)
    shown = study.served_content(item, choice)
    assert shown["screens"] == item.truth["screens"] and len(shown["screens"]) == 2
    assert shown["story"] == item.context and shown["probe"] == item.question
    assert shown["options"] == item.truth["response"]["options"] and shown["keys"] == ["f", "j"]
    typed = next(t for t in plan.trials if t.role == "filler")
    shown = study.served_content(dutch.get(typed.item_id), typed)
    assert "options" not in shown and "screens" not in shown
    assert not {"answer", "accepted", "feedback", "truth"} & set(shown)


def test_answers_are_scored_by_the_design(dutch):
    study = STUDY.bind(dutch, load_catalogue("nl"))
    plan = study.build_session(dutch, "L1", 3, DesignConfig())
    choice = next(t for t in plan.trials if t.role == "main")
    item = dutch.get(choice.item_id)
    right = item.truth["response"]["options"].index(item.answer)
    sides = ("left", "right")
    scored = study.score_trial(item, choice, sides[right], "one-answer")
    assert (scored.response, scored.correct) == (item.answer, True)
    assert not study.score_trial(item, choice, sides[1 - right], "one-answer").correct
    with pytest.raises(TracktaleError, match="a choice must be one of left, right"):
        study.score_trial(item, choice, "3", "one-answer")
    assert study.score_trial(item, choice, None, "one-answer").correct is False
    filler = next(t for t in plan.trials if t.role == "filler")
    item = dutch.get(filler.item_id)
    accepted = item.truth["response"]["accepted"]
    for typed in (accepted[-1], f"  {accepted[0].upper()}. "):
        assert study.score_trial(item, filler, typed, "one-answer").correct, typed
    scored = study.score_trial(item, filler, "iets anders", "one-answer")
    assert (scored.response, scored.correct) == ("iets anders", False)
    feedback = study.practice_feedback(item, filler, False, False)
    assert feedback == {"correct": False, "timed_out": False, "answer": accepted[0]}


def test_three_options_take_number_keys(tmp_path):
    rows = [
        {
            "item": str(n),
            "level": level,
            "text": f"Text {n}.",
            "question": "Which?",
            "o1": "one",
            "o2": "two",
            "o3": "three",
            "answer": "two",
        }
        for n in range(1, 3)
        for level in ("p", "q")
    ]
    design = {
        "columns": {
            "item": "item",
            "text": "text",
            "question": "question",
            "options": ["o1", "o2", "o3"],
            "answer": "answer",
        },
        "factors": {"level": {"levels": ["p", "q"]}},
    }
    stimuli = table_set(tmp_path / "three", rows, design)
    study = STUDY.bind(stimuli, load_catalogue("en"))
    plan = study.build_session(stimuli, "L1", 1, DesignConfig())
    item = stimuli.get(plan.trials[0].item_id)
    assert study.served_content(item, plan.trials[0])["keys"] == ["1", "2", "3"]
    assert study.score_trial(item, plan.trials[0], "2", "one-answer").correct
    assert not study.score_trial(item, plan.trials[0], "3", "one-answer").correct


def test_the_set_gives_the_study_its_language_title_and_time_limits(tmp_path, dutch):
    config = load_study(study_folder(tmp_path, dutch, ethics=ETHICS_NL))
    assert (config.language, config.title, config.study_id) == ("nl", "Waar is het?", "set")
    assert (config.timing.reading_ms, config.timing.response_ms) == (20_000, 10_000)
    assert config.text_direction == "ltr"
    changed = study_folder(tmp_path / "b", dutch, title="Anders", timing={"response_ms": 9000})
    config = load_study(changed)
    assert (config.title, config.timing.reading_ms, config.timing.response_ms) == (
        "Anders",
        20_000,
        9000,
    )


def test_the_page_speaks_dutch(tmp_path, dutch):
    service = _service(tmp_path, dutch, ethics=ETHICS_NL)
    page = page_config(service.config, service.human, service.texts)
    assert (page["language"], page["direction"]) == ("nl", "ltr")
    assert page["nouns"] == {"title": "Tekst", "singular": "tekst", "plural": "teksten"}
    assert page["reading_prompt"].startswith("Druk op de SPATIEBALK")
    assert page["texts"]["buttons.continue"] == "Doorgaan"
    welcome = " ".join(page["instructions"]["welcome"])
    assert "hooguit 20 seconden" in welcome and "bestaan uit delen" in welcome
    assert page["instructions"]["welcome_html"] == (
        "<p>Lees elk verhaaltje goed. <em>Daarna</em> vragen we waar iets is.</p>"
    )
    assert any("10 seconden" in line for line in page["instructions"]["text"])
    assert "Ik ga akkoord" in page["consent_html"] and "EC-2026-17" in page["consent_html"]
    service.storage.close()


def test_simulated_accuracy_follows_the_declared_factors(tmp_path, dutch):
    study = STUDY.bind(dutch, None)
    main = {tuple(sorted(item.condition.items())): item for item in dutch.select(role="main")}
    cell = {
        (moved, far): study.p_correct(AVERAGE, main[(("afstand", far), ("beweging", moved))])
        for moved in ("bleef", "verplaatst")
        for far in ("dichtbij", "ver")
    }
    # The default: each level after a factor's first lowers the log-odds by 0.5.
    assert cell["bleef", "dichtbij"] == pytest.approx(0.85)
    assert cell["verplaatst", "ver"] < cell["bleef", "ver"] < cell["bleef", "dichtbij"]
    filler = dutch.select(role="filler")[0]
    assert study.p_correct(AVERAGE, filler) == pytest.approx(0.92)
    inattentive = SimulatedPerson("P", 0.0, False, 1.0, (1280, 720), 30, "female")
    assert study.p_correct(inattentive, main[(("afstand", "ver"), ("beweging", "bleef"))]) == 0.5


def test_simulated_effects_are_settable_in_the_design(tmp_path):
    folder = tmp_path / "set"
    folder.mkdir()
    (folder / "items.csv").write_bytes((DUTCH / "items.csv").read_bytes())
    design = (DUTCH / "design.yaml").read_text(encoding="utf-8")
    (folder / "design.yaml").write_text(
        design + "simulation:\n  accuracy: 0.7\n  effects: {beweging: {verplaatst: -1.0}}\n",
        encoding="utf-8",
    )
    stimuli = import_table(folder / "items.csv", folder / "design.yaml")
    study = STUDY.bind(stimuli, None)
    moved = 0.7 / (0.7 + 0.3 * math.e)  # log-odds of 0.7, less 1
    for item in stimuli.select(role="main"):
        expected = 0.7 if item.condition["beweging"] == "bleef" else moved
        assert study.p_correct(AVERAGE, item) == pytest.approx(expected)


def test_simulated_people_take_the_study_through_the_server(tmp_path, dutch):
    config = load_study(study_folder(tmp_path, dutch, ethics=ETHICS_NL))
    report = simulate_study(config, n=8, seed=2, concurrency=2, stimulus_set=dutch)
    assert report.errors == [] and report.completed == 8
    storage = Storage(config.database_url())
    trials = list(storage.trials())
    assert len(trials) == report.trials_acknowledged == 8 * 14
    assert Counter(p.list_id for p in storage.participants()) == {f"L{n}": 2 for n in range(1, 5)}
    assert {t.task for t in trials} == {"explicit", "comprehension"}
    choices = [t for t in trials if t.task == "comprehension" and not t.timed_out]
    options = {o for item in dutch for o in item.truth["response"]["options"]}
    assert choices and all(t.response in options for t in choices)
    assert 0.5 < sum(t.correct for t in trials) / len(trials) < 1.0
    storage.close()


def test_a_set_without_questions_is_refused(tmp_path):
    rows = [{"item": "1", "level": level, "text": f"Text {level}."} for level in ("p", "q")]
    design = {
        "columns": {"item": "item", "text": "text"},
        "factors": {"level": {"levels": ["p", "q"]}},
    }
    stimuli = table_set(tmp_path / "bare", rows, design)
    with pytest.raises(TracktaleError, match="has no answer or options"):
        _service(tmp_path, stimuli)


def test_an_items_study_needs_its_set():
    with pytest.raises(TracktaleError, match="name it in the study file"):
        STUDY.generate_stimuli(1)
