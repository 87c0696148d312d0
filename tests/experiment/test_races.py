"""Races between a participant's own tabs, and exports during live traffic (issue 30).

Each test drives the API as the page does, on SQLite and on PostgreSQL, and failed before its
fix: an export that read the participants twice (hole 1), a survey written question by question
(hole 6), a browser number counted up outside the database (hole 7) and a consent decision
that a second tab could contradict (hole 8).
"""

from __future__ import annotations

import csv
import io
import threading
from collections.abc import Callable
from typing import Any

import pytest
import sqlalchemy as sa

from tests.experiment.conftest import ADMIN_SECRET, Participant, open_storage
from tracktale.experiment.export.files import export_study
from tracktale.experiment.storage.tables import participants as participants_table
from tracktale.experiment.study.config import Prolific, StudyConfig
from tracktale.experiment.web.app import create_app


@pytest.fixture(params=["sqlite", "postgresql"])
def backend(request, tmp_path, human_set, secrets):
    """The study app and its storage on SQLite, then on the test PostgreSQL server."""
    storage = open_storage(request.param, f"sqlite:///{tmp_path / 'study.sqlite'}")
    config = StudyConfig(
        database=str(tmp_path / "study.sqlite"),
        prolific=Prolific(completion_code="DONE123", screenout_code="OUT456"),
    )
    app = create_app(config, storage=storage, stimulus_set=human_set, secrets=secrets)
    app.testing = True
    yield app, storage
    storage.close()


def _together(calls: list[Callable[[], Any]]) -> list[Any]:
    """Run the calls in threads released at the same moment; their results (or errors)."""
    barrier = threading.Barrier(len(calls))
    results: list[Any] = [None] * len(calls)

    def run(position: int) -> None:
        barrier.wait()
        try:
            results[position] = calls[position]()
        except Exception as error:  # noqa: BLE001 - a 500 in the test client raises; kept
            results[position] = error

    threads = [threading.Thread(target=run, args=(n,)) for n in range(len(calls))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results


def _status(result: Any) -> int:
    return result.status_code if hasattr(result, "status_code") else 500


def _started(app, human_set, **kwargs) -> Participant:
    person = Participant(app.test_client(), human_set, **kwargs)
    assert person.start().status_code == 200
    assert person.consent().status_code == 200
    return person


def _same_token(person: Participant, app) -> Participant:
    """Another tab of the same browser: the same token (localStorage), its own connection."""
    tab = Participant(app.test_client(), person.stimuli, pid=person.pid)
    tab.token, tab.state = person.token, person.state
    return tab


# hole 1: one snapshot per export ------------------------------------------------------------


def _start_during_the_first_participants_read(storage, app, human_set) -> list[str]:
    """Once the export has read the participants, a new participant starts and answers a trial.

    Returns the id of the participant who started (filled in when it happened).
    """
    exporter = threading.get_ident()
    started: list[str] = []

    def after(connection, cursor, statement, *_args):
        if threading.get_ident() != exporter or started or "FROM participants" not in statement:
            return

        def newcomer():
            person = _started(app, human_set)
            assert person.answer(0).status_code == 201
            started.append(person.state["participant_id"])

        thread = threading.Thread(target=newcomer)
        thread.start()
        thread.join()

    sa.event.listen(storage.engine, "after_cursor_execute", after)
    return started


def _participant_ids(text: str) -> list[str]:
    return [row["participant_id"] for row in csv.DictReader(io.StringIO(text))]


def test_an_export_reads_one_snapshot_while_sessions_start(backend, human_set, tmp_path):
    app, storage = backend
    for _ in range(2):
        assert Participant(app.test_client(), human_set).run_all().status_code == 200
    started = _start_during_the_first_participants_read(storage, app, human_set)
    export_study(storage, tmp_path / "out", formats=("csv",), salt="pepper")
    assert started, "the export never read the participants"
    people = _participant_ids((tmp_path / "out" / "participants.csv").read_text())
    trials = set(_participant_ids((tmp_path / "out" / "trials.csv").read_text()))
    assert len(people) == 2 and trials <= set(people)  # one moment: before the newcomer
    assert started[0] not in people


def test_the_admin_download_reads_one_snapshot_too(backend, human_set):
    app, storage = backend
    assert Participant(app.test_client(), human_set).run_all().status_code == 200
    started = _start_during_the_first_participants_read(storage, app, human_set)
    headers = {"Authorization": f"Bearer {ADMIN_SECRET}"}
    reply = app.test_client().get("/admin/export/participants.csv", headers=headers)
    assert reply.status_code == 200 and started
    assert len(_participant_ids(reply.get_data(as_text=True))) == 1


# hole 6: one survey per participant, whole ---------------------------------------------------


def _survey(**changes: Any) -> dict[str, Any]:
    answers = {
        "age": 30,
        "gender": "female",
        "native_language": "English",
        "attentive": True,
        "no_ai_assistance": True,
    }
    return {**answers, **changes}


def test_two_different_surveys_sent_at_once_are_never_mixed(backend, human_set):
    app, storage = backend
    first = _survey()
    second = _survey(age=61, gender="male", native_language="German", attentive=False)
    for _ in range(4):
        person = _started(app, human_set)
        other_tab = _same_token(person, app)
        replies = _together(
            [
                lambda p=person: p.post("/api/survey", first),
                lambda p=other_tab: p.post("/api/survey", second),
            ]
        )
        assert sorted(_status(reply) for reply in replies) == [200, 409]
        stored = storage.survey(person.state["participant_id"])[person.state["participant_id"]]
        assert stored in (first, second)
        refused = next(reply for reply in replies if _status(reply) == 409)
        assert refused.get_json()["reason"] == "already_recorded"  # the page treats it as saved
        assert person.post("/api/survey", stored).status_code == 200  # a retry of the winner


# hole 7: each takeover its own browser number ------------------------------------------------


def test_parallel_takeovers_each_get_their_own_browser_number(backend, human_set):
    app, storage = backend
    person = _started(app, human_set)
    browsers = [Participant(app.test_client(), human_set, pid=person.pid) for _ in range(7)]
    replies = _together([browser.start for browser in browsers])
    assert [_status(reply) for reply in replies] == [200] * 7
    pid = person.state["participant_id"]
    numbers = [
        event.detail["browser"] for event in storage.journal.events(pid) if event.kind == "takeover"
    ]
    assert sorted(numbers) == list(range(2, 9))
    # The token each browser got answers for its own number.
    owned = {storage.participant_by_token(b.token) for b in browsers} - {None}
    assert [p.browser for p in owned] == [8]
    with storage.engine.connect() as connection:
        assert (
            connection.execute(
                sa.select(participants_table.c.browser).where(
                    participants_table.c.participant_id == pid
                )
            ).scalar_one()
            == 8
        )


# hole 8: the first consent decision wins -----------------------------------------------------


def test_consent_yes_and_no_in_two_tabs_keep_the_first_decision(backend, human_set):
    app, storage = backend
    for _ in range(4):
        person = Participant(app.test_client(), human_set)
        assert person.start().status_code == 200
        other_tab = _same_token(person, app)
        replies = _together(
            [lambda p=person: p.consent(True), lambda p=other_tab: p.consent(False)]
        )
        statuses = [_status(reply) for reply in replies]
        assert sorted(statuses) == [200, 409]
        study_id = app.extensions["tracktale"].config.study_id
        stored = storage.get_participant(study_id, person.pid)
        assert stored is not None
        agreed = statuses[0] == 200
        assert stored.consent is agreed
        assert stored.status == ("started" if agreed else "screened_out")
        assert person.consent(agreed).status_code == 200  # the same decision again is fine
