"""Storage against SQLite and PostgreSQL: idempotent saves, balance under concurrency, survey."""

from __future__ import annotations

import dataclasses
import threading

import pytest
import sqlalchemy as sa

from tests.experiment.conftest import open_storage
from tracktale.errors import ConflictError, StorageUnavailable, TracktaleError
from tracktale.experiment.storage.groupcommit import GroupCommitter
from tracktale.experiment.storage.store import Storage
from tracktale.experiment.study.design import build_session
from tracktale.trial import TrialRecord


@pytest.fixture(params=["sqlite", "postgresql"])
def db(request, tmp_path):
    storage = open_storage(request.param, f"sqlite:///{tmp_path / 'study.sqlite'}")
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
    assert db.save_survey(person.participant_id, {"age": 30, "native_language": "English"}) == 1
    assert db.save_survey(person.participant_id, {"age": 30, "gender": "female"}) == 0
    with pytest.raises(ConflictError, match="'age'"):  # the first answers win, whole
        db.save_survey(person.participant_id, {"age": 99, "native_language": "English"})
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
    fresh, browser = db.new_token(person.participant_id, "another browser")
    assert db.participant_by_token(token) is None
    assert db.participant_by_token(fresh).participant_id == person.participant_id
    assert browser == 2 and db.participant_by_token(fresh).browser == 2
    from tracktale.experiment.storage.store import hash_token

    assert db.journal.revoked(hash_token(token)) and not db.journal.revoked(hash_token(fresh))
    assert db.journal.browser_counts() == {person.participant_id: 2}


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


def _create_all_failing(times, monkeypatch):
    """metadata.create_all fails ``times`` times (as when another server created the table)."""
    from tracktale.experiment.storage import store as storage_module

    real, calls, waits = storage_module.metadata.create_all, [], []

    def create_all(engine):
        calls.append(engine)
        if len(calls) <= times:
            raise sa.exc.OperationalError("CREATE TABLE", {}, Exception("table already exists"))
        real(engine)

    monkeypatch.setattr(storage_module.metadata, "create_all", create_all)
    monkeypatch.setattr(storage_module.time, "sleep", waits.append)
    return calls, waits


def test_creating_the_tables_is_retried_when_another_process_races_it(tmp_path, monkeypatch):
    calls, waits = _create_all_failing(3, monkeypatch)
    Storage(f"sqlite:///{tmp_path / 'x.sqlite'}").close()
    assert len(calls) == 4 and waits == pytest.approx([0.1, 0.2, 0.3])


def test_creating_the_tables_gives_up_after_ten_attempts(tmp_path, monkeypatch):
    calls, waits = _create_all_failing(10, monkeypatch)
    with pytest.raises(TracktaleError, match="cannot open the study database: table already"):
        Storage(f"sqlite:///{tmp_path / 'x.sqlite'}")
    assert len(calls) == 10 and waits == pytest.approx([0.1 * n for n in range(1, 10)])


def test_trial_records_accept_a_missing_defaulted_field(human_set, tmp_path):
    storage = Storage(f"sqlite:///{tmp_path / 'x.sqlite'}")
    person, _ = register(storage, human_set, "PID1")
    data = record(person).to_dict()
    del data["restarts"]
    assert TrialRecord.from_dict(data).restarts == 0
    with pytest.raises(TracktaleError, match="'restarts' has the wrong type"):
        TrialRecord.from_dict({**data, "restarts": "1"})
    assert [f.name for f in dataclasses.fields(TrialRecord)].index("restarts") == 22
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


@pytest.fixture
def rows(tmp_path):
    """A table with a unique key, on its own SQLite file."""
    engine = sa.create_engine(f"sqlite:///{tmp_path / 'g.sqlite'}")
    table = sa.Table(
        "rows",
        sa.MetaData(),
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("key", sa.String, unique=True, nullable=False),
        sa.Column("text", sa.Text),
    )
    table.metadata.create_all(engine)
    yield engine, table
    engine.dispose()


def test_a_failed_batch_raises_and_the_writer_recovers(rows):
    engine, table = rows
    writer = GroupCommitter(engine, table)
    assert writer.insert({"key": "a"}) is True
    assert writer.insert({"key": "a"}) is False
    with pytest.raises(sa.exc.IntegrityError):
        writer.insert({"key": None})
    assert writer.insert({"key": "b"}) is True
    with engine.connect() as connection:
        assert connection.execute(sa.select(table.c.key)).scalars().all() == ["a", "b"]


def test_one_bad_row_never_fails_the_rows_committed_with_it(rows):
    # Issue 15: a lone surrogate in one save failed the other saves of its group commit.
    engine, table = rows
    writer = GroupCommitter(engine, table)
    # Hold the first write so that every other row waits and is written in one batch.
    first_write = threading.Event()
    release = threading.Event()

    def slow_first(*_args):
        if not first_write.is_set():
            first_write.set()
            release.wait(10)

    sa.event.listen(engine, "before_cursor_execute", slow_first)
    results: dict[str, object] = {}

    def insert(key, text):
        try:
            results[key] = writer.insert({"key": key, "text": text})
        except Exception as error:  # noqa: BLE001 - the bad row's own error is expected
            results[key] = error

    threads = [threading.Thread(target=insert, args=("first", "a"))]
    threads[0].start()
    assert first_write.wait(10)
    batch = [(f"good-{n}", "fine") for n in range(8)] + [("bad", "\udfff")]
    threads += [threading.Thread(target=insert, args=row) for row in batch]
    for thread in threads[1:]:
        thread.start()
    while len(writer._queue) < len(batch):  # every other row is waiting for the batch
        threading.Event().wait(0.01)
    release.set()
    for thread in threads:
        thread.join()
    assert isinstance(results.pop("bad"), Exception)
    assert set(results.values()) == {True}
    with engine.connect() as connection:
        keys = connection.execute(sa.select(table.c.key)).scalars().all()
    assert sorted(keys) == sorted(["first", *(key for key, _ in batch[:-1])])


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


def test_free_text_round_trips_exactly_nul_included(db, human_set):
    # PostgreSQL's text cannot hold NUL: the response column stores it escaped there.
    person, _ = register(db, human_set, "PID1")
    texts = ["bo\x00x", "\\tracktale-nul:not escaped", "back\\slash\x00\\0", "\u202ebox\r\n"]
    for index, text in enumerate(texts):
        db.save_trial(record(person, index, f"trial-{index:04d}", response=text))
    assert [trial.response for trial in db.trials()] == texts


def test_the_journal_records_serves_browsers_events_and_admin_sessions(db, human_set):
    person, token = register(db, human_set, "PID1")
    journal = db.journal
    first = journal.record_serve(person.participant_id, 0, 1)
    journal.record_serve(person.participant_id, 0, 1)
    journal.record_serve(person.participant_id, 1, 1)
    served = journal.served(person.participant_id)
    assert (served[0].times, served[1].times) == (2, 1)
    assert served[0].last_served_at >= first
    assert set(journal.served(person.participant_id, 1)) == {1}
    fresh, browser = db.new_token(person.participant_id, "UA two")
    assert browser == 2 and db.participant_by_token(fresh).browser == 2
    kinds = [(event.kind, event.detail.get("browser")) for event in journal.events()]
    assert kinds == [("started", None), ("takeover", 2)]
    session_id = journal.open_admin_session()
    assert journal.admin_session_valid(session_id) and not journal.admin_session_valid("x")
    journal.close_admin_session(session_id)
    assert not journal.admin_session_valid(session_id)


def test_an_older_database_gets_the_new_columns(tmp_path, human_set):
    url = f"sqlite:///{tmp_path / 'old.sqlite'}"
    storage = Storage(url)
    person, _ = register(storage, human_set, "PID1")
    storage.save_trial(record(person))
    storage.close()
    engine = sa.create_engine(url)
    with engine.begin() as connection:  # as the first release created it
        for column in ("flags", "browser", "served_at", "server_elapsed_ms"):
            connection.exec_driver_sql(f"ALTER TABLE trials DROP COLUMN {column}")
        connection.exec_driver_sql("ALTER TABLE participants DROP COLUMN browser")
    engine.dispose()
    reopened = Storage(url)
    (trial,) = reopened.trials()
    assert (trial.flags, trial.browser, trial.server_elapsed_ms) == ("", None, None)
    assert reopened.participants()[0].browser == 1
    reopened.close()


def _make_pooled_connections_read_only(db) -> None:
    """Every connection the pool holds now refuses writes, as one that SQLite opened while the
    file could not be written does (PostgreSQL: as after a failover to a read-only standby)."""
    statement = (
        "PRAGMA query_only = ON"
        if db.engine.dialect.name == "sqlite"
        else "SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY"
    )
    held = [db.engine.connect() for _ in range(3)]
    for connection in held:
        connection.exec_driver_sql(statement)
        connection.commit()
    for connection in held:
        connection.close()  # back into the pool, read-only


def test_a_read_only_connection_is_discarded_and_the_write_refused_for_now(db, human_set):
    # Issue 30: read-only connections stayed in the pool, and writes failed (500) for good.
    person, _ = register(db, human_set, "PID1")
    _make_pooled_connections_read_only(db)
    failures = 0
    for index in range(6):
        try:
            db.save_trial(record(person, index, f"trial-{index:04d}"))
        except StorageUnavailable as error:
            assert error.retry_after >= 1
            failures += 1
    assert 1 <= failures <= 3  # each read-only connection fails once, then is gone
    stored = db.trial_indices(person.participant_id)
    assert len(stored) == 6 - failures
    assert db.save_trial(record(person, 6, "trial-0006")).outcome == "stored"


def test_simulated_participant_ids_follow_from_their_made_up_pid_and_real_ones_do_not():
    from tracktale.experiment.storage.store import new_participant_id

    simulated = new_participant_id("study", "SIM0001abc", "simulated")
    assert simulated == new_participant_id("study", "SIM0001abc", "simulated")
    assert simulated != new_participant_id("study", "SIM0002abc", "simulated")
    assert simulated != new_participant_id("other", "SIM0001abc", "simulated")
    assert simulated.startswith("P") and len(simulated) == 17
    real = {new_participant_id("study", "5f00aa", source) for source in ("online", "online", "lab")}
    assert len(real) == 3 and simulated not in real
