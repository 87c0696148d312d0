"""The server's clock against the browser's (issue 30, holes 4 and 9).

Elapsed times are measured on a monotonic clock, so a step of the wall clock between a serve
and its answer neither fails the answer nor distorts its time; between server processes whose
clocks cannot be compared the time is clamped at zero and flagged. Timing flags catch claims
too short as well as too long for the time the server measured (less what the outbox says the
answer waited in its queue), stories served before the previous trial ended, and reject a body
whose own flags contradict its times.
"""

from __future__ import annotations

import pytest


def _started(participant):
    person = participant()
    person.start()
    person.consent()
    return person


def _stored(storage):
    return {trial.trial_index: trial for trial in storage.trials()}


def _timed(person, index, reading, response, **extra):
    return {
        **person.trial_body(index),
        "reading_time_ms": reading,
        "response_time_ms": response,
        **extra,
    }


# hole 4: clock steps --------------------------------------------------------------------------


def test_a_wall_clock_stepped_back_between_serve_and_answer_fails_nothing(
    participant, storage, server_clock
):
    person = _started(participant)
    person.shown(0)
    server_clock.step_wall(-3600)  # NTP or an administrator steps the clock back an hour
    assert person.answer(0).status_code == 201
    (trial,) = storage.trials()
    assert 0 <= trial.server_elapsed_ms < 5_000  # measured on the monotonic clock
    assert trial.flags == ""
    assert trial.answered_at < trial.served_at  # the wall-clock times are kept as read


def test_a_clock_stepped_forward_does_not_make_an_answer_late(participant, storage, server_clock):
    person = _started(participant)
    person.shown(0)
    server_clock.step_wall(7200)
    assert person.answer(0).status_code == 201
    (trial,) = storage.trials()
    assert trial.server_elapsed_ms < 5_000 and trial.flags == ""


def test_servers_with_skewed_clocks_clamp_the_time_and_flag_it(
    participant, storage, server_clock, monkeypatch
):
    person = _started(participant)
    from tracktale.experiment.storage import clock

    person.shown(0)  # served by this process ...
    monkeypatch.setattr(clock, "DOMAIN", "another-machine")  # ... answered on another machine
    server_clock.step_wall(-30)  # whose clock is 30 s behind
    assert person.answer(0).status_code == 201
    (trial,) = storage.trials()
    assert trial.server_elapsed_ms == 0
    assert trial.flags.split(";") == ["clock_skew"]


# hole 9: flags for claims too short, overlapping serves, self-contradicting bodies -----------


def test_an_answer_much_later_than_its_claimed_times_is_flagged(participant, storage, server_clock):
    person = _started(participant)
    person.shown(0)
    server_clock.advance(59)
    assert person.post("/api/trials", _timed(person, 0, 150.0, 150.0)).status_code == 201
    assert _stored(storage)[0].flags.split(";") == ["slower_than_reported"]


def test_time_an_answer_waited_in_the_outbox_is_not_held_against_it(
    participant, storage, server_clock
):
    person = _started(participant)
    person.shown(0)
    server_clock.advance(59)  # answered after 0.3 s, then offline for 58.5 s
    body = _timed(person, 0, 150.0, 150.0, queued_ms=58_500.0)
    assert person.post("/api/trials", body).status_code == 201
    trial = _stored(storage)[0]
    assert trial.flags == "" and trial.queued_ms == 58_500.0


def test_an_answer_queued_for_longer_than_since_its_serve_is_flagged(
    participant, storage, server_clock
):
    person = _started(participant)
    person.shown(0)
    server_clock.advance(2)
    body = _timed(person, 0, 150.0, 150.0, queued_ms=600_000.0)
    assert person.post("/api/trials", body).status_code == 201
    assert "faster_than_reported" in _stored(storage)[0].flags.split(";")


def test_a_story_fetched_before_the_previous_trial_ended_is_flagged(
    participant, storage, server_clock
):
    person = _started(participant)
    person.shown(0)
    person.shown(1)  # trial 1's story fetched at once, read while trial 0 is on screen
    server_clock.advance(20)
    assert person.post("/api/trials", _timed(person, 0, 15_000.0, 4_000.0)).status_code == 201
    # Times that fit the 20 s since its serve: only the overlap gives it away.
    assert person.post("/api/trials", _timed(person, 1, 16_000.0, 3_500.0)).status_code == 201
    # Claiming a glance at a story read long before is too short as well.
    person.shown(2)
    person.shown(3)
    server_clock.advance(20)
    assert person.post("/api/trials", _timed(person, 2, 15_000.0, 4_000.0)).status_code == 201
    assert person.post("/api/trials", _timed(person, 3, 100.0, 900.0)).status_code == 201
    stored = _stored(storage)
    assert stored[0].flags == stored[2].flags == ""
    assert stored[1].flags.split(";") == ["overlapping_serve"]
    assert stored[3].flags.split(";") == ["slower_than_reported", "overlapping_serve"]


def test_trials_served_while_earlier_answers_waited_offline_are_not_flagged(
    participant, storage, server_clock
):
    person = _started(participant)
    person.shown(0)
    server_clock.advance(19)  # trial 0 ends; its answer waits in the outbox (offline)
    person.shown(1)
    server_clock.advance(10)  # back online: both answers arrive
    first = _timed(person, 0, 14_000.0, 4_500.0, queued_ms=10_000.0)
    assert person.post("/api/trials", first).status_code == 201
    second = _timed(person, 1, 6_000.0, 3_500.0, queued_ms=0.0)
    assert person.post("/api/trials", second).status_code == 201
    assert [trial.flags for trial in storage.trials()] == ["", ""]


def test_a_reading_timeout_with_a_short_reading_time_is_refused(participant, storage):
    person = _started(participant)
    body = {**person.trial_body(0), "reading_timed_out": True, "reading_time_ms": 100.0}
    reply = person.post("/api/trials", body)
    assert reply.status_code == 422 and "reading_timed_out" in reply.get_json()["error"]
    honest = {**person.trial_body(0), "reading_timed_out": True, "reading_time_ms": 40_004.0}
    assert person.post("/api/trials", honest).status_code == 201
    assert list(storage.trials())[0].reading_timed_out is True


@pytest.mark.parametrize("queued", [-1.0, 1e12])
def test_an_impossible_queue_time_is_refused(participant, queued):
    person = _started(participant)
    body = {**person.trial_body(0), "queued_ms": queued}
    reply = person.post("/api/trials", body)
    assert reply.status_code == 400 and "queued_ms" in reply.get_json()["error"]
