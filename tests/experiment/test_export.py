"""Exports: the contract's columns, hashed Prolific ids, CSV and Parquet, the CLI command."""

from __future__ import annotations

import csv
import dataclasses
import io

import pyarrow.parquet as pq
import pytest

from tracktale.app.cli import main
from tracktale.experiment.export.files import export_study, pid_hash
from tracktale.trial import ParticipantRecord, TrialRecord


@pytest.fixture
def finished(participant):
    people = [participant(), participant()]
    for person in people:
        assert person.run_all().status_code == 200
    return people


def read_csv(path):
    return list(csv.DictReader(io.StringIO(path.read_text())))


def test_exports_have_exactly_the_contract_columns(finished, storage, tmp_path):
    written = export_study(storage, tmp_path / "out", salt="pepper")
    names = sorted(path.name for path in written)
    assert names == [
        f"{table}.{fmt}"
        for table in ("accuracy", "participants", "trials")
        for fmt in ("csv", "parquet")
    ]
    trials = read_csv(tmp_path / "out" / "trials.csv")
    assert list(trials[0]) == [f.name for f in dataclasses.fields(TrialRecord)]
    assert len(trials) == 100
    people = read_csv(tmp_path / "out" / "participants.csv")
    assert list(people[0]) == [f.name for f in dataclasses.fields(ParticipantRecord)]
    table = pq.read_table(tmp_path / "out" / "trials.parquet")
    assert table.column_names == [f.name for f in dataclasses.fields(TrialRecord)]
    assert str(table.schema.field("correct").type) == "bool"
    assert str(table.schema.field("response_time_ms").type) == "double"
    assert str(table.schema.field("trial_index").type) == "int64"
    assert table.num_rows == 100


def test_prolific_ids_are_salted_hashes_unless_asked(finished, storage, tmp_path):
    export_study(storage, tmp_path / "hashed", salt="pepper", formats=("csv",))
    text = (tmp_path / "hashed" / "participants.csv").read_text()
    for person in finished:
        assert person.pid not in text
        assert pid_hash("pepper", person.pid) in text
    assert pid_hash("pepper", "A") != pid_hash("salt", "A")
    export_study(storage, tmp_path / "raw", salt="pepper", formats=("csv",), raw_ids=True)
    rows = read_csv(tmp_path / "raw" / "participants.csv")
    assert {row["prolific_pid"] for row in rows} == {person.pid for person in finished}


def test_the_database_salt_is_stable(finished, storage, tmp_path):
    export_study(storage, tmp_path / "a", formats=("csv",))
    export_study(storage, tmp_path / "b", formats=("csv",))
    assert (tmp_path / "a" / "participants.csv").read_text() == (
        tmp_path / "b" / "participants.csv"
    ).read_text()


def test_accuracy_table_applies_the_exclusion_rule(participant, storage, tmp_path):
    person = participant()
    person.start()
    person.consent()
    for trial in person.state["trials"]:
        correct = trial["task"] != "explicit"  # every explicit answer wrong
        person.answer(trial["index"], correct=correct)
    export_study(storage, tmp_path, formats=("csv",))
    rows = {row["task"]: row for row in read_csv(tmp_path / "accuracy.csv")}
    assert rows["explicit"]["excluded"] == "True" and rows["explicit"]["n_trials"] == "18"
    assert rows["implicit"]["excluded"] == "False" and rows["implicit"]["accuracy"] == "1.0"
    assert rows["comprehension"]["excluded"] == "False"


def test_the_export_command(finished, study_config, monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("TRACKTALE_EXPORT_SALT", "cli-salt")
    study = tmp_path / "study.yaml"
    study.write_text(f"database: {study_config.database}\n")
    with pytest.raises(SystemExit) as exit_info:
        main(
            [
                "experiment",
                "export",
                "--study",
                str(study),
                "--out",
                str(tmp_path / "x"),
                "--format",
                "csv",
            ]
        )
    assert exit_info.value.code == 0
    assert (tmp_path / "x" / "trials.csv").is_file()
    text = (tmp_path / "x" / "participants.csv").read_text()
    assert pid_hash("cli-salt", finished[0].pid) in text
    with pytest.raises(SystemExit) as exit_info:
        main(["experiment", "export", "--database", str(tmp_path / "none.sqlite")])
    assert exit_info.value.code == 1
    assert "no study database" in capsys.readouterr().err
