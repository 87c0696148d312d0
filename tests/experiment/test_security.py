"""Holes found when the study was attacked (issue 15): sessions, codes, pseudonyms, admin.

Each test here failed before the fix it names.
"""

from __future__ import annotations

import csv
import dataclasses
import hashlib
import threading

from tests.experiment.conftest import ADMIN_SECRET, Participant
from tracktale.ethics import load_document
from tracktale.experiment.export.files import export_study
from tracktale.experiment.storage.store import Storage
from tracktale.experiment.study.config import Prolific, RateLimits
from tracktale.experiment.web.app import create_app

BEARER = {"Authorization": f"Bearer {ADMIN_SECRET}"}


# sessions and codes ----------------------------------------------------------------------


def test_the_completion_code_is_given_at_the_end_and_again_to_the_same_browser(participant):
    person = participant()
    reply = person.run_all()
    assert reply.get_json()["completion_code"] == "DONE123"
    again = participant(pid=person.pid, session_id=person.session_id)
    same_browser = again.start(token=person.token)
    assert same_browser.status_code == 409
    data = same_browser.get_json()
    assert data["participant_status"] == "completed" and data["completion_code"] == "DONE123"
    assert data["redirect"].endswith("cc=DONE123")
    other_browser = participant(pid=person.pid, session_id=person.session_id).start()
    assert other_browser.status_code == 409
    assert "completion_code" not in other_browser.get_json()
    assert "DONE123" not in other_browser.get_data(as_text=True)


def test_a_takeover_is_recorded_stops_the_first_browser_and_shows_in_admin(
    participant, storage, client
):
    first = participant()
    first.start()
    first.consent()
    first.answer(0)
    first.shown(1)  # on screen in the first browser when the second one opens the link
    second = participant(pid=first.pid, session_id=first.session_id)
    assert second.start().status_code == 200
    assert (first.state["browser"], second.state["browser"]) == (1, 2)
    refused = first.answer(1)
    assert refused.status_code == 401 and refused.get_json()["reason"] == "taken_over"
    assert first.serve(2).get_json()["reason"] == "taken_over"
    assert second.answer(1).status_code == 201
    trials = {t.trial_index: t for t in storage.trials()}
    assert (trials[0].browser, trials[1].browser) == (1, 2)
    events = storage.journal.events(first.state["participant_id"])
    assert [event.kind for event in events] == ["started", "consent", "takeover"]
    assert events[-1].detail["browser"] == 2
    page = client.get("/admin/", headers=BEARER).get_data(as_text=True)
    assert "taken over" in page and "browsers: 2" in page
    (record,) = storage.participant_records()
    assert record.browsers == 2


def test_study_id_is_checked_when_the_study_file_names_one(
    study_config, storage, human_set, secrets
):
    config = dataclasses.replace(
        study_config, prolific=dataclasses.replace(study_config.prolific, study_id="STUDY42")
    )
    client = create_app(config, storage=storage, stimulus_set=human_set, secrets=secrets)
    client = client.test_client()
    wrong = client.post("/api/session", json={"prolific_pid": "PIDA", "study_id": "OTHER"})
    assert wrong.status_code == 403 and wrong.get_json()["reason"] == "wrong_study"
    missing = client.post("/api/session", json={"prolific_pid": "PIDB"})
    assert missing.status_code == 403
    right = client.post("/api/session", json={"prolific_pid": "PIDC", "study_id": "STUDY42"})
    assert right.status_code == 200
    assert [p.prolific_pid for p in storage.participants()] == ["PIDC"]


def test_simulated_participants_count_neither_in_the_balance_nor_as_completed(
    client, participant, storage
):
    for number in range(3):
        body = {"prolific_pid": f"SIM{number}", "source": "simulated"}
        assert client.post("/api/session", json=body, headers=BEARER).status_code == 200
    person = participant()
    person.start()
    assert person.state["list_id"] == "L1"  # the first real participant, whatever ran before
    assert storage.list_counts("narrative-entity-tracking") == {"L1": 1}
    page = client.get("/admin/", headers=BEARER).get_data(as_text=True)
    assert "started: 1 " in page and "simulated: 3 started" in page


# pseudonyms and admin --------------------------------------------------------------------


def test_exported_session_seeds_do_not_relink_rows_to_prolific_ids(participant, storage, tmp_path):
    person = participant()
    person.start()
    (row,) = storage.participants()
    design_seed, study_id = 1, row.study_id
    digest = hashlib.sha256(f"{design_seed}|{study_id}|{person.pid}".encode()).digest()
    assert row.session_seed != int.from_bytes(digest[:6], "big")
    other_db = Storage(f"sqlite:///{tmp_path / 'other.sqlite'}")
    client = create_app(
        storage=other_db,
        stimulus_set=person.stimuli,
        secrets=dataclasses.replace(_secrets(), export_salt="another-salt"),
    ).test_client()
    client.post("/api/session", json={"prolific_pid": person.pid})
    assert other_db.participants()[0].session_seed != row.session_seed  # the salt decides
    other_db.close()
    written = export_study(storage, tmp_path / "out", formats=("csv",))
    assert person.pid not in (tmp_path / "out" / "participants.csv").read_text()
    assert written


def _secrets():
    from tracktale.experiment.study.config import Secrets

    return Secrets(admin_secret=ADMIN_SECRET, secret_key="k", export_salt="test-salt")


def test_wrong_bearer_secrets_are_rate_limited_like_the_login_form(client):
    wrong = {"Authorization": "Bearer not-the-secret-at-all"}
    statuses = [client.get("/admin/", headers=wrong).status_code for _ in range(12)]
    assert statuses[:10] == [403] * 10 and statuses[10:] == [429, 429]
    body = {"prolific_pid": "SIMX", "source": "simulated"}
    assert client.post("/api/session", json=body, headers=wrong).status_code == 429


def _break_the_counts(monkeypatch, *methods):
    import sqlite3

    from tracktale.experiment.web.ratelimit import SQLiteLimitsStorage

    def broken(*_args, **_kwargs):
        raise sqlite3.OperationalError("disk I/O error")

    for method in methods:
        monkeypatch.setattr(SQLiteLimitsStorage, method, broken)


def test_admin_secrets_are_refused_while_the_counts_cannot_be_read(client, monkeypatch):
    _break_the_counts(monkeypatch, "get", "get_expiry", "incr")
    wrong = {"Authorization": "Bearer not-the-secret-at-all"}
    statuses = [client.get("/admin/", headers=wrong).status_code for _ in range(12)]
    assert set(statuses) == {429}  # fails closed: no secret is compared, so none is guessed
    assert client.post("/admin/login", data={"secret": "wrong"}).status_code == 429
    reply = client.get("/admin/", headers=BEARER)
    assert reply.status_code == 429 and int(reply.headers["Retry-After"]) >= 1
    # Participants are not refused: their limits fail open (a trial must never be lost).
    assert client.post("/api/session", json={"prolific_pid": "PIDbroken01"}).status_code == 200


def test_wrong_admin_secrets_are_still_limited_when_the_counts_cannot_be_written(
    client, monkeypatch
):
    _break_the_counts(monkeypatch, "incr")
    wrong = {"Authorization": "Bearer not-the-secret-at-all"}
    statuses = [client.get("/admin/", headers=wrong).status_code for _ in range(12)]
    assert statuses[:10] == [403] * 10 and statuses[10:] == [429, 429]
    assert client.post("/admin/login", data={"secret": "wrong"}).status_code == 429


def test_signing_out_revokes_the_cookie(client):
    assert client.post("/admin/login", data={"secret": ADMIN_SECRET}).status_code == 302
    cookie = client.get_cookie("tracktale_admin")
    assert client.get("/admin/").status_code == 200
    with client.session_transaction() as session:
        csrf = session["csrf"]
    assert client.post("/admin/logout", data={"csrf": csrf}).status_code == 302
    client.set_cookie("tracktale_admin", cookie.value)  # a copy of the old cookie
    reply = client.get("/admin/")
    assert reply.status_code == 302 and "/admin/login" in reply.headers["Location"]


def test_reopening_a_completed_participant_needs_confirmation_and_is_logged(
    client, participant, storage
):
    person = participant()
    person.run_all()
    pid = person.state["participant_id"]
    client.post("/admin/login", data={"secret": ADMIN_SECRET})
    with client.session_transaction() as session:
        csrf = session["csrf"]
    path = f"/admin/participants/{pid}/status"
    reply = client.post(path, data={"status": "started", "csrf": csrf})
    assert reply.status_code == 400 and storage.participants()[0].status == "completed"
    reply = client.post(path, data={"status": "started", "csrf": csrf, "confirm": "reopen"})
    assert reply.status_code == 302 and storage.participants()[0].status == "started"
    (event,) = [e for e in storage.journal.events(pid) if e.kind == "status"]
    assert (event.detail["from"], event.detail["to"]) == ("completed", "started")
    assert "reopened" in client.get("/admin/").get_data(as_text=True)


def test_rate_limits_are_shared_between_server_processes(study_config, storage, human_set, secrets):
    config = dataclasses.replace(
        study_config,
        rate_limits=RateLimits(sessions_per_ip_per_minute=4, writes_per_participant_per_minute=50),
    )
    workers = []
    for _ in range(2):  # two apps on one database, as two gunicorn workers are
        own = Storage(config.database_url())
        app = create_app(config, storage=own, stimulus_set=human_set, secrets=secrets)
        workers.append((app.test_client(), own))
    statuses = [
        workers[n % 2][0].post("/api/session", json={"prolific_pid": f"P{n}"}).status_code
        for n in range(6)
    ]
    assert statuses == [200, 200, 200, 200, 429, 429]
    limited = workers[1][0].post("/api/session", json={"prolific_pid": "P9"})
    assert int(limited.headers["Retry-After"]) >= 1 and limited.is_json
    for _, own in workers:
        own.close()


# participant experience ------------------------------------------------------------------


def test_the_debrief_renders_markdown_emphasis():
    html = load_document("debrief").html()
    assert "<em>explicit</em>" in html and "*explicit*" not in html


def test_the_content_security_policy_lets_jspsych_load_its_embedded_font(client):
    policy = client.get("/?PROLIFIC_PID=abc").headers["Content-Security-Policy"]
    directives = dict(part.strip().split(" ", 1) for part in policy.split(";"))
    assert "data:" in directives["font-src"].split()
    assert directives["script-src"] == "'self'"


def test_the_page_config_carries_no_completion_code(client):
    page = client.get("/?PROLIFIC_PID=abc").get_data(as_text=True)
    assert "DONE123" not in page and Prolific().completion_code not in page


def test_the_rate_limit_counts_hold_no_address_and_no_session_token(participant, study_config):
    import sqlite3

    person = participant()
    person.start()
    person.consent()
    person.answer(0)
    path = study_config.database + ".ratelimits"
    with sqlite3.connect(path) as connection:
        keys = [key for (key,) in connection.execute("SELECT key FROM counts")]
    assert keys and not [k for k in keys if "127.0.0.1" in k or person.token in k]


# issue 30: what the server tells and keeps ------------------------------------------------


def test_the_admin_cookie_is_secure_over_https_or_by_the_setting(client, app):
    plain = client.post("/admin/login", data={"secret": ADMIN_SECRET})
    assert "Secure" not in plain.headers["Set-Cookie"]  # http on localhost: a preview
    https = app.test_client().post(
        "/admin/login", data={"secret": ADMIN_SECRET}, base_url="https://study.example"
    )
    assert https.status_code == 302 and "Secure" in https.headers["Set-Cookie"]
    app.config["SESSION_COOKIE_SECURE"] = True  # secure_cookies: true (behind a TLS proxy)
    forced = app.test_client().post("/admin/login", data={"secret": ADMIN_SECRET})
    assert "Secure" in forced.headers["Set-Cookie"]


def test_the_access_log_keeps_no_prolific_or_session_ids(app, caplog):
    import logging
    import urllib.request

    from werkzeug.serving import make_server

    from tracktale.experiment.web.server import PrivateRequestHandler

    server = make_server("127.0.0.1", 0, app, threaded=True, request_handler=PrivateRequestHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        with caplog.at_level(logging.INFO, logger="werkzeug"):
            link = f"http://127.0.0.1:{server.server_port}/healthz?PROLIFIC_PID=P5ECRET0001"
            with urllib.request.urlopen(link + "&SESSION_ID=S5ECRET0002", timeout=10) as reply:
                assert reply.status == 200
    finally:
        server.shutdown()
        server.server_close()
    assert "GET /healthz HTTP/1.1" in caplog.text
    assert "P5ECRET0001" not in caplog.text and "S5ECRET0002" not in caplog.text


def test_each_participant_can_get_a_completion_code_of_their_own(
    study_config, storage, human_set, secrets, tmp_path
):
    config = dataclasses.replace(
        study_config,
        prolific=Prolific(
            completion_code="DONE123", screenout_code="OUT456", completion_codes="per_participant"
        ),
    )
    app = create_app(config, storage=storage, stimulus_set=human_set, secrets=secrets)
    people = [Participant(app.test_client(), human_set) for _ in range(2)]
    codes = []
    for person in people:
        reply = person.run_all().get_json()
        codes.append(reply["completion_code"])
        assert reply["redirect"].endswith(f"cc={reply['completion_code']}")
        again = Participant(app.test_client(), human_set, pid=person.pid).start(token=person.token)
        assert again.get_json()["completion_code"] == reply["completion_code"]
    assert len(set(codes)) == 2 and "DONE123" not in codes
    export_study(
        storage,
        tmp_path / "raw",
        formats=("csv",),
        raw_ids=True,
        personal_codes=True,
        salt=secrets.export_salt,  # the server's: the codes are keyed hashes under it
    )
    with (tmp_path / "raw" / "participants.csv").open() as table:
        rows = {row["prolific_pid"]: row["completion_code"] for row in csv.DictReader(table)}
    assert rows == {person.pid: code for person, code in zip(people, codes, strict=True)}
