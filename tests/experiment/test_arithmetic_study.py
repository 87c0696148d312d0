"""The arithmetic study for people: lists, serving, scoring, simulated people, the server."""

from __future__ import annotations

import dataclasses
import json
import random
from collections import Counter, defaultdict

import pytest

from tests.experiment.conftest import ADMIN_SECRET
from tracktale.errors import TracktaleError
from tracktale.experiment.paradigms import get_human_study
from tracktale.experiment.paradigms.arithmetic import STUDY, list_items, p_correct
from tracktale.experiment.simulation.run import SimulatedPerson, simulate_participants
from tracktale.experiment.study.config import paradigm_defaults
from tracktale.experiment.study.design import LIST_IDS, DesignConfig
from tracktale.experiment.web.app import create_app
from tracktale.experiment.web.server import serve_in_thread
from tracktale.stimuli.registry import get_paradigm
from tracktale.stimulus_set import StimulusSet


@pytest.fixture(scope="module")
def arithmetic_set():
    return get_paradigm("arithmetic").generate_set("human", 1)


def test_the_registry_hands_out_the_arithmetic_study():
    assert get_human_study("arithmetic") is STUDY


def test_each_list_shows_every_cell_once_and_the_lists_cover_every_procedure(arithmetic_set):
    seen = Counter()
    for list_id in LIST_IDS:
        plan = STUDY.build_session(arithmetic_set, list_id, 5, DesignConfig())
        practice = [trial for trial in plan.trials if trial.role == "practice"]
        main = [trial for trial in plan.trials if trial.role == "main"]
        assert [trial.trial_index for trial in practice] == [0, 1]
        assert {trial.block for trial in practice} == {0} and {t.block for t in main} == {1}
        cells = Counter(
            (arithmetic_set.get(t.item_id).condition["dataset"],
             arithmetic_set.get(t.item_id).condition["horizon"])
            for t in main
        )  # fmt: skip
        assert len(cells) == 12 and set(cells.values()) == {1}
        seen.update(trial.item_id for trial in main)
    assert len(seen) == 48 and set(seen.values()) == {1}


def test_the_order_is_per_participant_and_rebuilt_from_the_seed(arithmetic_set):
    design = DesignConfig()
    first = STUDY.build_session(arithmetic_set, "L2", 11, design)
    assert first == STUDY.build_session(arithmetic_set, "L2", 11, design)
    other = STUDY.build_session(arithmetic_set, "L2", 12, design)
    assert [t.item_id for t in first.trials] != [t.item_id for t in other.trials]
    assert {t.item_id for t in first.trials} == {t.item_id for t in other.trials}


def test_a_set_without_practice_or_with_unequal_cells_is_refused(arithmetic_set):
    main = tuple(item for item in arithmetic_set if item.role == "main")
    no_practice = StimulusSet(manifest=arithmetic_set.manifest, items=main)
    with pytest.raises(TracktaleError, match="practice items"):
        STUDY.check_stimuli(no_practice, DesignConfig(), "stimuli")
    dropped = next(item for item in arithmetic_set if item.role == "main")
    kept = tuple(item for item in arithmetic_set if item is not dropped)
    uneven = StimulusSet(manifest=arithmetic_set.manifest, items=kept)
    with pytest.raises(TracktaleError, match="same number of procedures"):
        list_items(uneven, "L1")
    STUDY.check_stimuli(arithmetic_set, DesignConfig(), "stimuli")


def test_the_served_trial_has_the_procedure_and_never_the_result(arithmetic_set):
    plan = STUDY.build_session(arithmetic_set, "L1", 1, DesignConfig())
    for planned in plan.trials:
        item = arithmetic_set.get(planned.item_id)
        served = STUDY.served_content(item, planned)
        assert set(served["parameters"]) == {"procedure", "inputs"}
        assert served["parameters"]["procedure"].startswith("function(x, y):")
        last = f"Return S{item.condition['horizon'] + 2}"
        assert served["parameters"]["procedure"].endswith(last)
        assert served["parameters"]["inputs"].startswith("x = ")
        assert f"{item.condition['horizon']} steps" in served["story"]
        text = json.dumps(served)
        assert "answer" not in text and "reference" not in text


def test_typed_answers_are_scored_as_the_models_are(arithmetic_set):
    plan = STUDY.build_session(arithmetic_set, "L1", 1, DesignConfig())
    planned = plan.trials[5]
    item = arithmetic_set.get(planned.item_id)
    value = int(item.answer)
    for typed, right in [
        (str(value), True),
        (f"  {value:,} ", True),
        (f"{value}.0", True),
        (str(value + 1), False),
        ("no idea", False),
        ("inf", False),
    ]:
        scored = STUDY.score_trial(item, planned, typed, "one-answer")
        assert (scored.response, scored.correct, scored.correct_paper_rule) == (typed, right, right)
    timeout = STUDY.score_trial(item, planned, None, "one-answer")
    assert (timeout.response, timeout.correct) == (None, False)
    feedback = STUDY.practice_feedback(item, planned, True, False)
    assert feedback == {"correct": True, "timed_out": False, "answer": item.answer}


def test_instructions_name_the_time_and_forbid_calculators_and_ai():
    texts = STUDY.instructions(30_000, 240_000, "online")
    welcome = " ".join(texts["welcome"])
    assert "no calculator" in welcome and "AI" in welcome
    assert "4 minutes" in " ".join(texts["explicit"])
    assert {"welcome", "explicit", "main_start", "resume", "survey", "saving"} <= set(texts)


def test_simulated_people_are_right_less_often_the_longer_the_procedure(arithmetic_set):
    person = SimulatedPerson("SIM1", 0.0, True, 1.0, (1280, 800), 30, "female")
    by_horizon = defaultdict(list)
    for item in arithmetic_set.select(role="main"):
        by_horizon[item.condition["horizon"]].append(p_correct(person, item))
    means = {h: sum(ps) / len(ps) for h, ps in by_horizon.items()}
    assert means[5] > means[10] > means[15] > 0.5
    careless = dataclasses.replace(person, attentive=False)
    assert p_correct(careless, arithmetic_set.select(role="main")[0]) < 0.05
    rng = random.Random(3)
    item = arithmetic_set.select(role="main")[0]
    timing = STUDY.timing
    shown = {"index": 2, "item_id": item.item_id, "task": "explicit"}
    bodies = [STUDY.behave(rng, person, item, shown, timing) for _ in range(200)]
    right = [b for b in bodies if b["response"] is not None and STUDY.score_trial(
        item, None, b["response"], "one-answer").correct]  # fmt: skip
    assert 0.6 < len(right) / len(bodies) <= 1


@pytest.fixture
def arithmetic_app(study_config, storage, arithmetic_set, secrets):
    defaults = paradigm_defaults("arithmetic")
    config = dataclasses.replace(
        study_config, paradigm="arithmetic", timing=defaults.timing, study_id=defaults.study_id
    )
    app = create_app(config, storage=storage, stimulus_set=arithmetic_set, secrets=secrets)
    app.testing = True
    return app


def test_a_simulated_arithmetic_study_runs_through_the_real_server(
    arithmetic_app, storage, arithmetic_set
):
    with serve_in_thread(arithmetic_app) as server:
        report = simulate_participants(
            server.url, arithmetic_set, ADMIN_SECRET, n=16, seed=2, concurrency=4
        )
    assert report.errors == []
    assert (report.started, report.completed) == (16, 16)
    assert report.trials_sent == report.trials_acknowledged == 16 * 14
    trials = list(storage.trials())
    assert len(trials) == 16 * 14
    assert Counter(p.list_id for p in storage.participants()) == {lid: 4 for lid in LIST_IDS}
    tally = defaultdict(lambda: [0, 0])
    for trial in trials:
        item = arithmetic_set.get(trial.item_id)
        if trial.role == "main":
            tally[item.condition["horizon"]][0] += trial.correct
            tally[item.condition["horizon"]][1] += 1
        if not trial.timed_out:  # the server's verdict is the models' scorer's
            assert trial.correct == STUDY.score_trial(item, None, trial.response, "").correct
    assert tally[5][0] / tally[5][1] > tally[15][0] / tally[15][1]
    admin = arithmetic_app.test_client()
    bearer = {"Authorization": f"Bearer {ADMIN_SECRET}"}
    page = admin.get("/admin/", headers=bearer)
    assert page.status_code == 200 and "arithmetic-procedures" in page.get_data(as_text=True)
    for table in ("trials", "participants", "accuracy"):
        assert admin.get(f"/admin/export/{table}.csv", headers=bearer).status_code == 200


def test_the_report_puts_simulated_people_beside_a_model_on_the_same_items(
    arithmetic_app, storage, arithmetic_set, study_config, tmp_path, small_reports
):
    import pandas as pd

    from tracktale.analysis.report.build import build_report

    with serve_in_thread(arithmetic_app) as server:
        report = simulate_participants(
            server.url, arithmetic_set, ADMIN_SECRET, n=8, seed=5, concurrency=4
        )
    assert report.errors == []
    scorer = get_paradigm("arithmetic")
    rows = []
    for item in arithmetic_set:
        right = item.condition["horizon"] == 5
        output = f"<answer>{item.answer if right else 0}</answer>"
        scores = scorer.score_response(item, output)
        rows.append({"model_id": "org/model-1b", "item_id": item.item_id, "output": output,
                     "correct": scores.correct})  # fmt: skip
    results = pd.DataFrame(rows)
    results = results.assign(task="explicit", revision=None)
    results_file = tmp_path / "results.parquet"
    results.to_parquet(results_file)
    stimuli = tmp_path / "arith-human"
    from tracktale.stimulus_set import write_stimulus_set

    write_stimulus_set(arithmetic_set, stimuli)
    written = build_report(
        stimuli=[stimuli],
        human=study_config.database_url(),
        models=results_file,
        out=tmp_path / "report",
    )
    table_file = (
        tmp_path / "report" / "arithmetic" / "arith-human" / "arithmetic_people_faa_by_horizon.csv"
    )
    table = pd.read_csv(table_file)
    assert set(table["model"]) == {"people", "org/model-1b"}
    people = table[table["kind"] == "human"].set_index("horizon")
    kept = [p for p in storage.participant_records() if p.attentive and p.no_ai_assistance]
    assert 0 < len(kept) < 8  # seed 5 draws inattentive people, whom the session rules drop
    assert list(people.index) == [5, 10, 15] and set(people["participants"]) == {len(kept)}
    assert (people["ci_low"] <= people["faa"]).all() and (people["faa"] <= people["ci_high"]).all()
    assert people["par"].between(50, 100).all()  # timeouts and junk are not numbers
    assert "people and models" in written.html_path.read_text()


def test_the_paradigm_option_runs_the_arithmetic_study_from_the_command_line(capsys):
    from tracktale.app.cli import main
    from tracktale.settings import data_dir

    with pytest.raises(SystemExit) as exit_info:
        main(["experiment", "simulate", "--paradigm", "arithmetic", "--n", "2"])
    out = capsys.readouterr().out
    assert exit_info.value.code == 0, out
    assert "serving arithmetic-procedures" in out
    assert "2/2 simulated participants completed; 28/28 trials acknowledged" in out
    assert (data_dir() / "stimuli" / "arithmetic-human-s1").is_dir()  # the default set


def test_probed_variables_are_evenly_spaced_steps_never_the_answer(arithmetic_set, tmp_path):
    from tracktale.experiment.study.config import load_study

    for item in arithmetic_set.select(role="main"):
        steps = int(item.condition["horizon"])
        returned = item.context.split("Return ")[-1].split()[0]
        for count in (1, 2, 3):
            probed = STUDY.probe_variables(item, count)
            assert len(probed) == len(set(probed)) == min(count, steps - 1)
            assert returned not in probed
        assert STUDY.probe_variables(item, 1) == [f"S{round(steps / 2) + 2}"]
    study = tmp_path / "study.yaml"
    study.write_text("paradigm: arithmetic\nprobe_values: 2\n")
    assert load_study(study).probe_values == 2
    for text, message in (
        ("paradigm: arithmetic\nprobe_values: 6\n", "between 0 and 5"),
        ("paradigm: boxes\nprobe_values: 1\n", "arithmetic study only"),
    ):
        study.write_text(text)
        with pytest.raises(TracktaleError, match=message):
            load_study(study)
