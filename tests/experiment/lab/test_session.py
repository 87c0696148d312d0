"""The lab session's path and writes, with a scripted display (no PsychoPy, no window)."""

from __future__ import annotations

import pytest

from tests.experiment.lab.scripted import ScriptedDisplay
from tracktale.errors import TracktaleError
from tracktale.experiment.lab.runner import RunResult
from tracktale.experiment.lab.session import LabSession, Reading, Response
from tracktale.experiment.storage.pseudonyms import session_seed
from tracktale.experiment.study.design import build_session
from tracktale.experiment.study.service import StudyService
from tracktale.stimuli.registry import get_paradigm


@pytest.fixture
def service(study_config, storage, human_set):
    return StudyService(study_config, storage, human_set)


def _trials(storage):
    return {trial.trial_index: trial for trial in storage.trials()}


def test_a_whole_session_is_stored_like_a_browser_session_marked_lab(service, storage, human_set):
    display = ScriptedDisplay(human_set, reading_timeouts={9}, response_timeouts={11}, wrong={14})
    session = LabSession(service, "LAB-001", user_agent="PsychoPy test")
    result = display.play(session)
    assert result == RunResult("completed", 50, 50)
    (person,) = storage.participants()
    assert (person.source, person.status, person.consent) == ("lab", "completed", True)
    trials = _trials(storage)
    assert sorted(trials) == list(range(50))
    assert {trial.source for trial in trials.values()} == {"lab"}
    assert {trial.restarts for trial in trials.values()} == {0}
    for index, trial in trials.items():
        planned = person.plan.trials[index]
        assert (trial.item_id, trial.task, trial.role) == (
            planned.item_id,
            planned.task,
            planned.role,
        )
        assert (trial.screen_width, trial.screen_height) == (1920, 1080)
        expected = index not in (11, 14)
        assert trial.correct is expected, index
    # A story that ran out lasted until the question's onset flip.
    limit_ms = service.config.timing.reading_ms
    assert trials[9].reading_timed_out and trials[9].reading_time_ms == limit_ms
    assert (trials[11].timed_out, trials[11].response, trials[11].response_time_ms) == (
        True,
        None,
        None,
    )
    assert storage.survey(person.participant_id)[person.participant_id] == {
        "age": 37,
        "gender": "non-binary",
        "native_language": "Dutch",
        "attentive": True,
        "no_ai_assistance": True,
    }
    shown = display.shown
    assert shown[:4] == ["consent", "information", "consent", "welcome"]
    assert shown.count("block-intro") == 4 and shown.count("feedback") == 4
    assert shown[-2:] == ["debrief", "end"] and "resume" not in shown
    assert "Prolific" not in display.texts["consent"] + display.texts["debrief"]
    assert "click" not in display.texts["welcome"]


def test_the_lab_runs_the_browser_design_and_shares_its_list_balance(service, storage, human_set):
    online = service.start_session("5f0c0ffee0000000000000aa").participant
    lab = LabSession(service, "LAB-002").participant
    assert (online.list_id, lab.list_id) == ("L1", "L2")  # the least-filled list, across sources
    design = service.config.design
    seed = session_seed(service.salt, design.seed, service.config.study_id, "LAB-002")
    assert lab.plan == build_session(human_set, "L2", seed, service.config.design)


def test_escape_mid_trial_stops_and_the_same_id_resumes_that_trial(service, storage, human_set):
    first = ScriptedDisplay(human_set, escape_at=7)
    result = first.play(LabSession(service, "LAB-003"))
    assert result == RunResult("interrupted", 7, 50, stopped_at=7)
    assert sorted(_trials(storage)) == list(range(7))

    again = LabSession(service, "LAB-003")
    assert again.resumed and again.restarted == 7 and again.runs() == 2
    second = ScriptedDisplay(human_set)
    assert second.play(again).outcome == "completed"
    assert "consent" not in second.shown and "welcome" not in second.shown
    assert second.shown[0] == "resume"
    trials = _trials(storage)
    assert sorted(trials) == list(range(50))
    assert [index for index, trial in trials.items() if trial.restarts] == [7]
    assert trials[7].restarts == 1


def test_a_crash_between_two_trials_loses_nothing_and_restarts_nothing(service, storage, human_set):
    session = LabSession(service, "LAB-004")
    session.record_consent(True)
    first = session.trials[0]
    session.begin_trial(0)
    session.save_trial(
        first, Reading(1.0, 800.0, False), Response(2.0, "box", 900.0), screen=(1, 1)
    )
    session.begin_trial(1)  # the process dies here, with trial 1 on the screen
    resumed = LabSession(service, "LAB-004")
    assert resumed.restarted == 1 and resumed.restarts(1) == 1 and resumed.restarts(0) == 0
    again = LabSession(service, "LAB-004")  # a second start without showing anything
    assert again.restarted is None and again.restarts(1) == 1


def test_declining_consent_screens_out_and_the_id_cannot_start_again(service, storage, human_set):
    display = ScriptedDisplay(human_set, consent="n")
    assert display.play(LabSession(service, "LAB-005")).outcome == "declined"
    assert display.shown[-1] == "declined"
    (person,) = storage.participants()
    assert (person.status, person.consent) == ("screened_out", False)
    assert list(storage.trials()) == []
    with pytest.raises(TracktaleError, match="'LAB-005' did not consent"):
        LabSession(service, "LAB-005")


def test_a_completed_participant_cannot_start_again(service, human_set):
    ScriptedDisplay(human_set).play(LabSession(service, "LAB-006"))
    with pytest.raises(TracktaleError, match="'LAB-006' has already completed"):
        LabSession(service, "LAB-006")


def test_an_online_participant_is_not_resumed_in_the_lab(service):
    service.start_session("5f0c0ffee0000000000000bb")
    with pytest.raises(TracktaleError, match="took part online, not in the lab"):
        LabSession(service, "5f0c0ffee0000000000000bb")


@pytest.mark.parametrize("key", ["", "has space", "x" * 65, "semi;colon"])
def test_a_malformed_participant_id_is_refused(service, key):
    with pytest.raises(TracktaleError, match="--participant"):
        LabSession(service, key)


def test_a_trial_the_study_refuses_is_an_error(service):
    session = LabSession(service, "LAB-007")
    session.record_consent(True)
    planned = session.trials[0]
    wrong_item = session.trials[1]
    bad = type(planned)(**{**planned.__dict__, "item_id": wrong_item.item_id})
    session.begin_trial(0)
    with pytest.raises(TracktaleError, match="refused a lab write: trial 0 shows another item"):
        session.save_trial(bad, Reading(1.0, 5.0, False), Response(2.0, "box", 5.0), screen=(1, 1))


def test_a_session_started_on_other_stimuli_is_refused_before_it_resumes(
    service, storage, study_config
):
    LabSession(service, "LAB-008")
    other = get_paradigm("narrative").generate_set("human", 2)
    with pytest.raises(TracktaleError, match="'LAB-008' started on another stimulus set"):
        LabSession(StudyService(study_config, storage, other), "LAB-008")
