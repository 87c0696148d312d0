"""Storage against SQLite and PostgreSQL: idempotent saves, balance under concurrency, survey."""

from __future__ import annotations

import dataclasses
import os
import threading

import pytest
import sqlalchemy as sa

from tests.conftest import require
from tracktale.errors import TracktaleError
from tracktale.experiment.design import build_session
from tracktale.experiment.storage import Storage, metadata
from tracktale.trial import TrialRecord

POSTGRES_ENV = "TRACKTALE_TEST_POSTGRES_URL"


@pytest.fixture(params=["sqlite", "postgresql"])
def db(request, tmp_path):
    if request.param == "sqlite":
        storage = Storage(f"sqlite:///{tmp_path / 'study.sqlite'}")
    else:
        url = os.environ.get(POSTGRES_ENV)
        require(bool(url), f"${POSTGRES_ENV} is not set (scripts/services/postgres.sh)")
        engine = sa.create_engine(url)
        metadata.drop_all(engine)  # each test starts from empty tables
        engine.dispose()
        storage = Storage(url)
    yield storage
    storage.close()


def register(storage, human_set, pid, study_id="study"):
    return storage.create_participant(
        study_id=study_id,
        prolific_pid=pid,
        prolific_study_id="STUDY",
        prolific_session_id=f"S{pid}",
        source="online",
        stimulus_sha256=human_set.sha256,
        make_plan=lambda list_id: build_session(human_set, list_id, 99),
        user_agent="pytest",
    )


def record(person, index=0, client_trial_id="trial-0000", **changes):
    planned = person.plan.trials[index]
    data = {
        "client_trial_id": client_trial_id,
        "participant_id": person.participant_id,
        "study_id": person.study_id,
        "source": person.source,
        "stimulus_sha256": person.stimulus_sha256,
        "item_id": planned.item_id,
        "role": planned.role,
        "task": planned.task,
        "list_id": person.list_id,
        "block": planned.block,
        "trial_index": index,
        "response": "box",
        "correct": True,
        "timed_out": False,
        "reading_time_ms": 5123.4,
        "reading_timed_out": False,
        "response_time_ms": 2345.6,
        "good_side": planned.good_side,
        "screen_width": 1280,
        "screen_height": 720,
        "blur_count": 0,
        "hidden_count": 1,
        "restarts": 0,
    }
    return TrialRecord.from_dict({**data, **changes})


def test_a_trial_saved_twice_is_stored_once(db, human_set):
    person, token = register(db, human_set, "PID1")
    assert db.participant_by_token(token).participant_id == person.participant_id
    first = record(person)
    assert db.save_trial(first).outcome == "stored"
    assert db.save_trial(first).outcome == "duplicate"
    assert list(db.trials()) == [first]
    assert db.trial_indices(person.participant_id) == [0]


def test_a_position_or_id_cannot_be_recorded_twice_differently(db, human_set):
    person, _ = register(db, human_set, "PID1")
    db.save_trial(record(person))
    with pytest.raises(TracktaleError, match="trial 0 is already recorded"):
        db.save_trial(record(person, client_trial_id="trial-other"))
    with pytest.raises(TracktaleError, match="already used"):
        db.save_trial(record(person, index=1))  # reuses the id of trial 0
    assert len(list(db.trials())) == 1


def test_records_round_trip_exactly(db, human_set):
    person, _ = register(db, human_set, "PID1")
    timed_out = record(
        person,
        1,
        "trial-0001",
        response=None,
        correct=False,
        timed_out=True,
        response_time_ms=None,
        reading_timed_out=True,
        restarts=2,
    )
    db.save_trial(timed_out)
    assert list(db.trials()) == [timed_out]


def test_concurrent_saves_of_one_trial_store_it_once(db, human_set):
    person, _ = register(db, human_set, "PID1")
    trial = record(person)
    outcomes = []
    barrier = threading.Barrier(6)

    def save():
        barrier.wait()
        outcomes.append(db.save_trial(trial).outcome)

    threads = [threading.Thread(target=save) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(outcomes) == ["duplicate"] * 5 + ["stored"]
    assert len(list(db.trials())) == 1


def test_lists_stay_balanced_when_people_start_at_the_same_moment(db, human_set):
    barrier = threading.Barrier(8)
    errors = []

    def start(number):
        barrier.wait()
        try:
            register(db, human_set, f"PID{number}")
        except Exception as error:  # noqa: BLE001 - collected for the assertion
            errors.append(error)

    threads = [threading.Thread(target=start, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    assert db.list_counts("study") == {"L1": 2, "L2": 2, "L3": 2, "L4": 2}


def test_a_pid_registers_once_per_study(db, human_set):
    register(db, human_set, "PID1")
    with pytest.raises(TracktaleError, match="already registered"):
        register(db, human_set, "PID1")
    register(db, human_set, "PID1", study_id="another-study")
    assert len(db.participants()) == 2


def test_status_consent_and_survey(db, human_set):
    person, _ = register(db, human_set, "PID1")
    db.set_consent(person.participant_id, True)
    assert db.save_survey(person.participant_id, {"age": 30, "gender": "female"}) == 2
    assert db.save_survey(person.participant_id, {"age": 99, "native_language": "English"}) == 1
    assert db.survey(person.participant_id)[person.participant_id] == {
        "age": 30,
        "gender": "female",
        "native_language": "English",
    }
    db.set_status(person.participant_id, "completed")
    (row,) = db.participant_records()
    assert (row.status, row.age, row.gender, row.attentive) == ("completed", 30, "female", None)
    assert row.completed_at is not None and row.session_seed == 99
    with pytest.raises(TracktaleError, match="unknown participant status"):
        db.set_status(person.participant_id, "vanished")
    other, _ = register(db, human_set, "PID2")
    db.set_consent(other.participant_id, False)
    assert db.get_participant("study", "PID2").status == "screened_out"
    assert db.list_counts("study") == {person.list_id: 1}  # screened out: not counted


def test_meta_values_are_made_once(db):
    first = db.meta_value("salt", lambda: "first")
    assert db.meta_value("salt", lambda: "second") == first == "first"


def test_a_new_token_replaces_the_old_one(db, human_set):
    person, token = register(db, human_set, "PID1")
    fresh = db.new_token(person.participant_id)
    assert db.participant_by_token(token) is None
    assert db.participant_by_token(fresh).participant_id == person.participant_id


def test_sqlite_runs_in_wal_mode_with_full_sync(tmp_path):
    storage = Storage(f"sqlite:///{tmp_path / 'x.sqlite'}")
    with storage.engine.connect() as connection:
        assert connection.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
        assert connection.exec_driver_sql("PRAGMA synchronous").scalar() == 2
    storage.close()


def test_bad_urls_are_one_line_errors(tmp_path):
    with pytest.raises(TracktaleError, match="not a database URL"):
        Storage("::nonsense::")
    with pytest.raises(TracktaleError, match="cannot use database"):
        Storage("nosuchdialect://host/db")


def test_trial_records_accept_a_missing_defaulted_field(human_set, tmp_path):
    storage = Storage(f"sqlite:///{tmp_path / 'x.sqlite'}")
    person, _ = register(storage, human_set, "PID1")
    data = record(person).to_dict()
    del data["restarts"]
    assert TrialRecord.from_dict(data).restarts == 0
    with pytest.raises(TracktaleError, match="'restarts' has the wrong type"):
        TrialRecord.from_dict({**data, "restarts": "1"})
    assert dataclasses.fields(TrialRecord)[-1].name == "restarts"
    storage.close()


def test_concurrent_saves_share_commits_and_all_arrive(db, human_set):
    person, _ = register(db, human_set, "PID1")
    commits = []
    sa.event.listen(db.engine, "commit", lambda connection: commits.append(1))
    barrier = threading.Barrier(40)
    outcomes = []

    def save(index):
        barrier.wait()
        outcomes.append(db.save_trial(record(person, index, f"trial-{index:04d}")).outcome)

    threads = [threading.Thread(target=save, args=(n,)) for n in range(40)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert outcomes == ["stored"] * 40
    assert db.trial_indices(person.participant_id) == list(range(40))
    assert len(commits) < 40  # group commit: fewer transactions than trials


def test_a_failed_batch_raises_and_the_writer_recovers(tmp_path):
    from tracktale.experiment.groupcommit import GroupCommitter

    engine = sa.create_engine(f"sqlite:///{tmp_path / 'g.sqlite'}")
    table = sa.Table(
        "rows",
        sa.MetaData(),
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("key", sa.String, unique=True, nullable=False),
    )
    table.metadata.create_all(engine)
    writer = GroupCommitter(engine, table)
    assert writer.insert({"key": "a"}) is True
    assert writer.insert({"key": "a"}) is False
    with pytest.raises(sa.exc.IntegrityError):
        writer.insert({"key": None})
    assert writer.insert({"key": "b"}) is True
    with engine.connect() as connection:
        assert connection.execute(sa.select(table.c.key)).scalars().all() == ["a", "b"]
    engine.dispose()


def test_servers_starting_together_on_a_new_database(tmp_path):
    url = f"sqlite:///{tmp_path / 'new.sqlite'}"
    barrier = threading.Barrier(6)
    errors = []

    def open_storage():
        barrier.wait()
        try:
            Storage(url).close()
        except Exception as error:  # noqa: BLE001 - collected for the assertion
            errors.append(error)

    threads = [threading.Thread(target=open_storage) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []


def test_meta_values_are_replaced_and_kept(db):
    assert db.get_meta("lab_progress:P1") is None
    db.put_meta("lab_progress:P1", '{"in_progress": 3}')
    db.put_meta("lab_progress:P1", '{"in_progress": null}')
    assert db.get_meta("lab_progress:P1") == '{"in_progress": null}'
    assert db.meta_value("lab_progress:P1", lambda: "unused") == '{"in_progress": null}'
