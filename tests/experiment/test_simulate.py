"""Simulated participants through the real HTTP API."""

from __future__ import annotations

import random
import time
from collections import defaultdict

import pytest

from tests.experiment.conftest import ADMIN_SECRET
from tracktale.app.cli import main
from tracktale.experiment.simulation.run import (
    BASE_ACCURACY,
    SimulatedPerson,
    draw_person,
    item_effect,
    p_correct,
    session_report,
    simulate_participants,
)
from tracktale.experiment.web.server import serve_in_thread


@pytest.fixture
def server(app):
    with serve_in_thread(app) as running:
        yield running


def test_simulated_sessions_complete_and_are_marked(server, storage, human_set):
    report = simulate_participants(server.url, human_set, ADMIN_SECRET, n=24, seed=3, concurrency=4)
    assert report.errors == []
    assert (report.started, report.completed) == (24, 24)
    assert report.trials_sent == report.trials_acknowledged == 24 * 50
    trials = list(storage.trials())
    assert len(trials) == 24 * 50
    assert {t.source for t in trials} == {"simulated"}
    assert {p.status for p in storage.participants()} == {"completed"}
    assert {p.list_id: 0 for p in storage.participants()}.keys() == {"L1", "L2", "L3", "L4"}
    # Accuracy falls with complexity, in both tasks (the source paper's effect).
    tally = defaultdict(lambda: [0, 0])
    for trial in trials:
        if trial.role == "main":
            complexity = human_set.get(trial.item_id).condition["complexity"]
            tally[(trial.task, complexity)][0] += trial.correct
            tally[(trial.task, complexity)][1] += 1
    for task in ("explicit", "implicit"):
        c1 = tally[(task, 1)][0] / tally[(task, 1)][1]
        c4 = tally[(task, 4)][0] / tally[(task, 4)][1]
        assert c1 > c4 + 0.05, (task, c1, c4)
    # Plausible times: readings of several seconds, answers within the limit.
    readings = sorted(t.reading_time_ms for t in trials)
    assert 2000 < readings[len(readings) // 2] < 30000
    answered = [t.response_time_ms for t in trials if not t.timed_out]
    assert all(0 < ms < 15000 for ms in answered)


def test_the_same_seed_gives_the_same_people():
    first = [draw_person(random.Random("x"), n) for n in range(3)]
    again = [draw_person(random.Random("x"), n) for n in range(3)]
    assert first == again
    assert len({person.prolific_pid for person in first}) == 3


def test_accuracy_model(human_set):
    average = SimulatedPerson("P", 0.0, True, 1.0, (1280, 720), 30, "female")
    inattentive = SimulatedPerson("P", 0.0, False, 1.0, (1280, 720), 30, "female")
    by_complexity = {}
    for item in human_set.select(role="main"):
        by_complexity[item.condition["complexity"]] = item
    for task, table in BASE_ACCURACY.items():
        values = [p_correct(average, by_complexity[c], task, 0, 0) for c in (1, 2, 3, 4)]
        assert values == sorted(values, reverse=True)
        # Above the table's mean over people and items (their spread pulls a mean to 50%).
        assert table[1] < values[0] < table[1] + 0.04
        assert p_correct(inattentive, by_complexity[1], task) < 0.55


def test_story_items_vary_in_difficulty_and_keep_it_from_run_to_run(human_set):
    import statistics

    from tracktale.experiment.simulation.run import ITEM_SD, item_effect

    average = SimulatedPerson("P", 0.0, True, 1.0, (1280, 720), 30, "female")
    main = human_set.select(role="main")
    effects = [item_effect(item) for item in main]
    assert effects == [item_effect(item) for item in main]  # a property of the item
    assert len(set(effects)) == len(main)
    assert 0.6 * ITEM_SD < statistics.stdev(effects) < 1.5 * ITEM_SD
    cell = human_set.select(role="main", cell="C1.F0")
    chances = {round(p_correct(average, item, "explicit"), 6) for item in cell}
    assert len(chances) == len(cell)  # before: every item of a cell alike (item SD 0)
    filler = human_set.select(role="filler")[0]
    assert p_correct(average, filler, "comprehension") == pytest.approx(0.92)


def test_participants_have_complexity_slopes_of_their_own(human_set):
    import statistics

    from tracktale.experiment.simulation.run import SLOPE_SD, person_slope

    people = [draw_person(random.Random(f"s{n}"), n) for n in range(400)]
    slopes = [person_slope(person) for person in people]
    assert 0.8 * SLOPE_SD < statistics.stdev(slopes) < 1.2 * SLOPE_SD
    steep = max(people, key=person_slope)
    flat = min(people, key=person_slope)
    items = {item.condition["complexity"]: item for item in human_set.select(role="main")}

    def drop(person):
        chances = [p_correct(person, items[c], "explicit", item_sd=0) for c in (1, 4)]
        return chances[0] - chances[1]

    assert drop(flat) > drop(steep) + 0.1  # the table's slope, steeper or flatter by person


def test_item_effects_are_normal_around_zero():
    import statistics
    from types import SimpleNamespace

    items = [SimpleNamespace(item_id=f"item{n}") for n in range(4000)]
    effects = [item_effect(item, 1.0) for item in items]
    assert abs(statistics.fmean(effects)) < 0.06
    assert statistics.stdev(effects) == pytest.approx(1.0, abs=0.05)


def test_a_repeated_run_reports_the_refused_participants(server, human_set):
    simulate_participants(server.url, human_set, ADMIN_SECRET, n=1, seed=9)
    again = simulate_participants(server.url, human_set, ADMIN_SECRET, n=1, seed=9)
    assert again.completed == 0 and "already completed" in again.errors[0]


def test_a_session_stops_before_its_next_trial_once_its_window_closed(server, storage, human_set):
    rng = random.Random("window")
    stopped = session_report(
        server.url, human_set, draw_person(rng, 0, "WIN"), 7, ADMIN_SECRET, 0.0, time.monotonic()
    )
    assert stopped.errors == []
    counts = (stopped.started, stopped.stopped, stopped.completed, stopped.trials_sent)
    assert counts == (1, 1, 0, 0)
    assert [p.status for p in storage.participants()] == ["started"]
    open_window = time.monotonic() + 3600
    whole = session_report(
        server.url, human_set, draw_person(rng, 1, "WIN"), 8, ADMIN_SECRET, 0.0, open_window
    )
    assert (whole.stopped, whole.completed, whole.trials_acknowledged) == (0, 1, 50)
    assert len(whole.acknowledged_at) == len(whole.latencies) == 50
    assert whole.acknowledged_at == sorted(whole.acknowledged_at)


def test_the_simulate_command_serves_the_study_in_process(monkeypatch, tmp_path, capsys):
    study = tmp_path / "study.yaml"
    study.write_text(f"database: {tmp_path / 'sim.sqlite'}\n")
    with pytest.raises(SystemExit) as exit_info:
        main(["experiment", "simulate", "--study", str(study), "--n", "2", "--concurrency", "2"])
    out = capsys.readouterr().out
    assert exit_info.value.code == 0, out
    assert "2/2 simulated participants completed; 100/100 trials acknowledged" in out


def test_the_simulate_command_needs_the_secret_for_a_remote_server(monkeypatch, capsys):
    monkeypatch.delenv("TRACKTALE_ADMIN_SECRET", raising=False)
    with pytest.raises(SystemExit) as exit_info:
        main(["experiment", "simulate", "--url", "http://127.0.0.1:9"])
    assert exit_info.value.code == 1
    assert "TRACKTALE_ADMIN_SECRET" in capsys.readouterr().err
