"""The participant API through Flask's test client: saves, resume, repeated ids, bad input."""

from __future__ import annotations

import dataclasses
import json

import pytest

from tests.experiment.conftest import ADMIN_SECRET
from tracktale.ethics import load_document
from tracktale.experiment.storage.store import Storage
from tracktale.experiment.study.config import RateLimits
from tracktale.experiment.web.app import create_app


def test_a_whole_session_ends_with_the_completion_redirect(participant, storage):
    person = participant()
    reply = person.run_all()
    assert reply.status_code == 200
    assert (
        reply.get_json()["redirect"] == "https://app.prolific.com/submissions/complete?cc=DONE123"
    )
    (row,) = storage.participants()
    assert row.status == "completed" and row.consent is True
    trials = list(storage.trials())
    assert len(trials) == 50 and all(t.correct for t in trials)
    assert {t.source for t in trials} == {"online"}
    # Completing again (a lost answer, retried) gives the same redirect.
    assert person.post("/api/complete", {}).get_json()["redirect"].endswith("cc=DONE123")


def test_saving_a_trial_twice_stores_it_once(participant, storage):
    person = participant()
    person.start()
    person.consent()
    body = person.trial_body(0)
    first = person.post("/api/trials", body)
    second = person.post("/api/trials", body)
    assert (first.status_code, first.get_json()["outcome"]) == (201, "stored")
    assert (second.status_code, second.get_json()["outcome"]) == (200, "duplicate")
    assert len(list(storage.trials())) == 1
    # The same position under another id is refused, not stored twice.
    third = person.post("/api/trials", {**body, "client_trial_id": "another-id-123"})
    assert third.status_code == 409
    assert len(list(storage.trials())) == 1


def test_scores_come_from_the_server_not_the_client(participant, storage, human_set):
    person = participant()
    person.start()
    person.consent()
    explicit = person.first("explicit")
    person.answer_before(explicit["index"])
    item = human_set.get(person.shown(explicit["index"])["item_id"])
    body = person.trial_body(explicit["index"])
    body["response"] = f"  The {item.answer.upper()}  "
    assert person.post("/api/trials", body).status_code == 201
    choice = person.first("implicit")
    person.answer_before(choice["index"])
    assert person.answer(choice["index"], correct=False).status_code == 201
    choice["item_id"] = person.served[choice["index"]]["item_id"]
    stored = {t.trial_index: t for t in storage.trials()}
    assert (
        stored[explicit["index"]].correct
        and stored[explicit["index"]].response == f"The {item.answer.upper()}"
    )
    wrong = stored[choice["index"]]
    assert not wrong.correct
    assert wrong.response == human_set.get(choice["item_id"]).choice.bad  # the option's own text
    served = json.dumps(list(person.served.values()))
    assert "answer" not in served and "good_side" not in served and "feedback" not in served


def test_a_timeout_is_stored_as_incorrect(participant, storage):
    person = participant()
    person.start()
    person.consent()
    assert person.answer(0, timed_out=True).status_code == 201
    (trial,) = storage.trials()
    assert trial.timed_out and trial.response is None and not trial.correct


def test_reload_resumes_with_the_same_list_and_the_answered_trials(participant):
    person = participant()
    person.start()
    person.consent()
    for index in range(7):
        person.answer(index)
    again = person.start(token=person.token)
    state = again.get_json()
    assert again.status_code == 200 and state["resumed"]
    assert state["done"] == list(range(7)) and state["consent"] is True
    assert state["list_id"] == person.state["list_id"]
    assert state["trials"] == person.state["trials"]


def test_reopening_in_another_browser_needs_the_same_prolific_session(participant):
    person = participant()
    person.start()
    person.consent()
    person.shown(0)
    old_token = person.token
    elsewhere = participant(pid=person.pid, session_id=person.session_id)
    assert elsewhere.start().status_code == 200  # same SESSION_ID: a new token
    assert elsewhere.token != old_token
    assert person.post("/api/trials", person.trial_body(0)).status_code == 401
    stranger = participant(pid=person.pid, session_id="SOMEONE-ELSE")
    reply = stranger.start()
    assert reply.status_code == 403 and "another browser" in reply.get_json()["error"]


def test_a_completed_pid_cannot_start_again(participant):
    person = participant()
    person.run_all()
    again = participant(pid=person.pid, session_id=person.session_id)
    reply = again.start(token=person.token)
    assert reply.status_code == 409
    assert reply.get_json()["participant_status"] == "completed"


def test_declining_consent_screens_out(participant, storage):
    person = participant()
    person.start()
    reply = person.consent(agree=False)
    assert reply.get_json()["redirect"].endswith("cc=OUT456")
    assert storage.participants()[0].status == "screened_out"
    assert person.serve(0).status_code == 409
    assert person.post("/api/trials", person.blind_body(0)).status_code == 409
    assert person.start(token=person.token).status_code == 409


def test_nothing_is_saved_before_consent_and_completion_needs_everything(participant):
    person = participant()
    person.start()
    assert person.serve(0).status_code == 409
    assert person.post("/api/trials", person.blind_body(0)).status_code == 409
    person.consent()
    person.answer(0)
    reply = person.post("/api/complete", {})
    assert reply.status_code == 409 and reply.get_json()["missing"] == list(range(1, 50))
    for index in range(1, 50):
        person.answer(index)
    reply = person.post("/api/complete", {})
    assert reply.status_code == 409 and reply.get_json()["missing"] == ["survey"]


def test_one_participant_cannot_write_into_another(participant, storage):
    alice, bob = participant(), participant()
    for person in (alice, bob):
        person.start()
        person.consent()
    body = alice.trial_body(0)
    # Bob's token with Alice's trial: it lands in Bob's rows (if it fits Bob's plan) or is
    # refused; Alice's rows are never touched.
    reply = bob.post("/api/trials", body)
    assert reply.status_code in (201, 422)
    assert not [t for t in storage.trials() if t.participant_id == alice.state["participant_id"]]


def _malformed(person):
    good = person.trial_body(0)
    return [
        ("not an object", [good], 400, "JSON object"),
        ("unknown field", {**good, "is_admin": True}, 400, "unknown field 'is_admin'"),
        (
            "missing field",
            {k: v for k, v in good.items() if k != "timed_out"},
            400,
            "'timed_out' is missing",
        ),
        ("bool for int", {**good, "trial_index": True}, 400, "'trial_index' must be an integer"),
        ("string for bool", {**good, "timed_out": "no"}, 400, "'timed_out' must be true or false"),
        ("negative time", {**good, "reading_time_ms": -1}, 400, "at least 0"),
        ("too long", {**good, "response": "x" * 201}, 400, "longer than 200"),
        ("bad id", {**good, "client_trial_id": "../../etc"}, 400, "invalid format"),
        ("beyond the plan", {**good, "trial_index": 50}, 422, "beyond"),
        ("wrong item", {**good, "item_id": "0000000000000000"}, 422, "another item"),
        ("timeout with answer", {**good, "timed_out": True}, 422, "timed-out"),
        *(
            (f"intermediates {text!r}", {**good, "intermediates": text}, 400, "JSON list of 1")
            for text in _BAD_INTERMEDIATES
        ),
        ("intermediates not text", {**good, "intermediates": []}, 400, "must be a string"),
        (
            "intermediates lone surrogate",
            {**good, "intermediates": '[{"variable": "S3", "value": "\udfff"}]'},
            422,
            "not valid Unicode",
        ),
        ("intermediates too long", {**good, "intermediates": "[" * 4001}, 400, "longer than 4000"),
    ]


_BAD_INTERMEDIATES = [
    "not json",
    "[]",
    '{"variable": "S3", "value": "1"}',
    '[{"variable": "S3"}]',
    '[{"variable": "S3", "value": 12}]',
    '[{"variable": "S3", "value": "1"}, {"variable": "S3", "value": "2"}]',
    '[{"variable": "3 S", "value": "1"}]',
    '[{"variable": "S3", "value": "' + "9" * 41 + '"}]',
    "[" + ", ".join(f'{{"variable": "S{i}", "value": ""}}' for i in range(21)) + "]",
]


def test_malformed_trial_bodies_are_refused_with_a_message(participant, storage):
    person = participant()
    person.start()
    person.consent()
    for name, body, status, fragment in _malformed(person):
        reply = person.post("/api/trials", body)
        assert reply.status_code == status, name
        assert fragment in reply.get_json()["error"], name
    assert list(storage.trials()) == []
    choice = next(t for t in person.state["trials"] if t["task"] != "explicit")
    person.answer_before(choice["index"])
    reply = person.post("/api/trials", {**person.trial_body(choice["index"]), "response": "middle"})
    assert reply.status_code == 422 and "'left' or 'right'" in reply.get_json()["error"]
    assert choice["index"] not in {t.trial_index for t in storage.trials()}
    probed = '[{"variable": "S3", "value": "12"}, {"variable": "S5", "value": ""}]'
    reply = person.post(
        "/api/trials", {**person.trial_body(choice["index"]), "intermediates": probed}
    )
    assert reply.status_code == 201, reply.get_json()
    stored = {t.trial_index: t.intermediates for t in storage.trials()}
    assert stored[choice["index"]] == probed and stored[0] is None


def test_malformed_requests_of_every_kind(client, participant):
    headers = {"Content-Type": "text/plain"}
    assert client.post("/api/session", data="hello", headers=headers).status_code == 415
    reply = client.post(
        "/api/session", data="{not json", headers={"Content-Type": "application/json"}
    )
    assert reply.status_code == 400 and "not valid JSON" in reply.get_json()["error"]
    reply = client.post(
        "/api/session", data='{"prolific_pid": NaN}', content_type="application/json"
    )
    assert reply.status_code == 400
    assert client.post("/api/session", json={"prolific_pid": "has space"}).status_code == 400
    huge = {"prolific_pid": "A", "pad": "x" * 70_000}
    assert client.post("/api/session", json=huge).status_code == 413
    assert client.post("/api/trials", json={}).status_code == 401
    assert client.get("/api/trials").status_code == 405
    person = participant()
    person.start()
    person.consent()
    survey = {"age": "old", "gender": "x", "native_language": "", "attentive": 1}
    reply = person.post("/api/survey", survey)
    assert reply.status_code == 400 and reply.is_json
    assert person.survey(age=12).status_code == 400
    assert person.survey(gender="robot").status_code == 400


def test_simulated_participants_need_the_admin_secret(participant, client, storage):
    body = {"prolific_pid": "SIM1", "source": "simulated"}
    assert client.post("/api/session", json=body).status_code == 403
    wrong = {"Authorization": "Bearer not-the-secret"}
    assert client.post("/api/session", json=body, headers=wrong).status_code == 403
    right = {"Authorization": f"Bearer {ADMIN_SECRET}"}
    assert client.post("/api/session", json=body, headers=right).status_code == 200
    assert storage.participants()[0].source == "simulated"


def test_writes_are_rate_limited(study_config, storage, human_set, secrets):
    config = dataclasses.replace(
        study_config,
        rate_limits=RateLimits(sessions_per_ip_per_minute=3, writes_per_participant_per_minute=5),
    )
    client = create_app(
        config, storage=storage, stimulus_set=human_set, secrets=secrets
    ).test_client()
    statuses = [
        client.post("/api/session", json={"prolific_pid": f"P{n}"}).status_code for n in range(4)
    ]
    assert statuses == [200, 200, 200, 429]
    replies = [
        client.post("/api/consent", json={"consent": True}, headers={"X-Session-Token": "t"})
        for _ in range(6)
    ]
    assert [r.status_code for r in replies] == [401] * 5 + [429]
    assert replies[-1].headers["Retry-After"]


def test_the_page_renders_consent_and_debrief_from_ethics(client):
    reply = client.get("/?PROLIFIC_PID=abc")
    page = reply.get_data(as_text=True)
    assert reply.status_code == 200
    assert "Content-Security-Policy" in reply.headers
    config = page.split('id="study-config">')[1].split("</script>")[0]
    data = json.loads(config)
    timing = {"reading_seconds": 40.0, "response_seconds": 15.0}
    assert data["consent_html"] == load_document("consent", timing=timing).html()
    assert data["debrief_html"] == load_document("debrief", timing=timing).html()
    assert "DONE123" not in page  # the completion code only comes with a confirmed completion


def test_vendor_files_are_served_from_node_modules_only(client):
    assert client.get("/vendor/../../pyproject.toml").status_code == 404
    assert client.get("/vendor/evil.js").status_code == 404


def test_health(client):
    assert client.get("/healthz").get_json()["ok"] is True


@pytest.fixture
def stored_answer(participant):
    person = participant(pid="PIDXSS")
    person.start()
    person.consent()
    explicit = person.first("explicit")
    assert explicit["index"] == 0  # the first participant is on L1, which starts explicit
    body = {**person.trial_body(explicit["index"]), "response": "<script>alert(1)</script>"}
    assert person.post("/api/trials", body).status_code == 201
    return person


def test_admin_refuses_without_the_secret(client, stored_answer):
    for path in ("/admin/", "/admin/export/trials.csv", "/admin/export/participants.parquet"):
        reply = client.get(path)
        assert reply.status_code == 302 and "/admin/login" in reply.headers["Location"]
        reply = client.get(path, headers={"Authorization": "Bearer wrong-secret"})
        assert reply.status_code == 403 and b"PIDXSS" not in reply.data
    assert client.post("/admin/login", data={"secret": "wrong"}).status_code == 401
    attempts = [
        client.post("/admin/login", data={"secret": "guess"}).status_code for _ in range(10)
    ]
    assert attempts[-1] == 429  # guessing is rate-limited
    assert (
        client.post("/admin/participants/x/status", data={"status": "returned"}).status_code == 403
    )


def test_admin_shows_progress_escapes_free_text_and_exports(client, stored_answer):
    assert client.post("/admin/login", data={"secret": ADMIN_SECRET}).status_code == 302
    page = client.get("/admin/").get_data(as_text=True)
    assert "PIDXSS" in page and "1 / 50" in page
    assert "<script>alert(1)</script>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    trials = client.get("/admin/export/trials.csv").get_data(as_text=True)
    assert trials.splitlines()[0].startswith("client_trial_id,participant_id")
    hashed = client.get("/admin/export/participants.csv").get_data(as_text=True)
    assert "PIDXSS" not in hashed and "prolific_pid_hash" in hashed
    raw = client.get("/admin/export/participants.csv?ids=raw").get_data(as_text=True)
    assert "PIDXSS" in raw
    parquet = client.get("/admin/export/trials.parquet")
    assert parquet.status_code == 200 and parquet.data[:4] == b"PAR1"
    assert client.get("/admin/export/secrets.csv").status_code == 404


def test_admin_marks_a_return_with_a_csrf_token(client, stored_answer, storage):
    client.post("/admin/login", data={"secret": ADMIN_SECRET})
    pid = stored_answer.state["participant_id"]
    assert (
        client.post(f"/admin/participants/{pid}/status", data={"status": "returned"}).status_code
        == 403
    )
    with client.session_transaction() as session:
        csrf = session["csrf"]
    reply = client.post(
        f"/admin/participants/{pid}/status", data={"status": "returned", "csrf": csrf}
    )
    assert reply.status_code == 302
    assert storage.participants()[0].status == "returned"
    assert stored_answer.start(token=stored_answer.token).status_code == 409


def test_a_second_app_on_the_same_database_sees_the_same_participants(
    study_config, human_set, secrets, participant
):
    person = participant()
    person.start()
    other = Storage(study_config.database_url())
    client = create_app(
        study_config, storage=other, stimulus_set=human_set, secrets=secrets
    ).test_client()
    reply = client.post(
        "/api/session", json={"prolific_pid": person.pid}, headers={"X-Session-Token": person.token}
    )
    assert reply.status_code == 200 and reply.get_json()["resumed"]
    other.close()


def test_a_session_on_other_stimuli_is_refused_not_crashed(
    participant, study_config, storage, secrets
):
    from tracktale.stimuli.registry import get_paradigm

    person = participant()
    person.start()
    person.consent()
    other_set = get_paradigm("narrative").generate_set("human", 2)
    client = create_app(
        study_config, storage=storage, stimulus_set=other_set, secrets=secrets
    ).test_client()
    reply = client.post(
        "/api/session", json={"prolific_pid": person.pid}, headers={"X-Session-Token": person.token}
    )
    assert reply.status_code == 409 and "stimuli changed" in reply.get_json()["error"]
