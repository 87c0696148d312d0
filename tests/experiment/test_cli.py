"""``tracktale experiment serve``, ``init`` and ``backup``."""

from __future__ import annotations

import pytest
from flask import Flask

from tests.experiment.conftest import Participant
from tracktale.app.cli import main
from tracktale.experiment.storage.store import Storage
from tracktale.experiment.web import frontend
from tracktale.experiment.web.server import PrivateRequestHandler


@pytest.fixture
def no_serving(monkeypatch):
    calls = []
    monkeypatch.setattr(Flask, "run", lambda self, **kwargs: calls.append(kwargs))
    monkeypatch.setattr(frontend, "find_node_modules", lambda: "node_modules")
    return calls


def test_serve_without_a_study_file_uses_the_defaults_and_prints_the_links(
    no_serving, capsys, tmp_path
):
    with pytest.raises(SystemExit) as exit_info:
        main(["experiment", "serve", "--port", "5123"])
    out, err = capsys.readouterr()
    assert exit_info.value.code == 0
    assert (
        "participant link (for Prolific): http://127.0.0.1:5123/?PROLIFIC_PID={{%PROLIFIC_PID%}}"
        in out
    )
    assert "admin link:                      http://127.0.0.1:5123/admin" in out
    assert "admin secret (made up for this run" in out
    assert "50 items" in out
    assert no_serving == [
        {
            "host": "127.0.0.1",
            "port": 5123,
            "threaded": True,
            "use_reloader": False,
            "request_handler": PrivateRequestHandler,  # no Prolific ids in the access log
        }
    ]
    # The default human set was generated under $TRACKTALE_DATA, and the database made there.
    data = tmp_path / "tracktale-data"
    assert (data / "stimuli" / "narrative-human-s1" / "manifest.json").is_file()
    assert (data / "study" / "narrative-entity-tracking.sqlite").is_file()
    assert "placeholders" in err and "codes are the defaults" in err


def test_serve_refuses_without_the_front_end(monkeypatch, capsys, tmp_path):
    monkeypatch.setattr(frontend, "candidate_dirs", lambda: [tmp_path])
    with pytest.raises(SystemExit) as exit_info:
        main(["experiment", "serve"])
    assert exit_info.value.code == 1
    assert "install-frontend" in capsys.readouterr().err


def test_serve_with_a_bad_stimulus_folder(no_serving, tmp_path, capsys):
    study = tmp_path / "study.yaml"
    study.write_text("stimuli: no-such-set\n")
    with pytest.raises(SystemExit) as exit_info:
        main(["experiment", "serve", "--study", str(study)])
    assert exit_info.value.code == 1
    assert "no-such-set is not a folder" in capsys.readouterr().err


def test_init_writes_the_default_study_file(tmp_path, capsys):
    target = tmp_path / "my-study.yaml"
    with pytest.raises(SystemExit):
        main(["experiment", "init", str(target)])
    assert "completion_code" in target.read_text()
    with pytest.raises(SystemExit) as exit_info:
        main(["experiment", "init", str(target)])
    assert exit_info.value.code == 1 and "already exists" in capsys.readouterr().err


def test_backup_copies_a_database_in_use_and_refuses_a_damaged_one(
    client, human_set, study_config, storage, tmp_path, capsys
):
    person = Participant(client, human_set)
    person.start()
    person.consent()
    for index in range(3):
        assert person.answer(index).status_code == 201
    study = tmp_path / "study.yaml"
    study.write_text(f"database: {study_config.database}\n")
    copy = tmp_path / "backups" / "copy.sqlite"
    with pytest.raises(SystemExit) as exit_info:  # while the server holds it open
        main(["experiment", "backup", "--study", str(study), "--out", str(copy)])
    assert exit_info.value.code == 0 and f"wrote {copy}" in capsys.readouterr().out
    restored = Storage(f"sqlite:///{copy}", create=False)
    assert [t.trial_index for t in restored.trials()] == [0, 1, 2]
    restored.close()
    storage.close()
    damaged = bytearray(copy.read_bytes())
    damaged[4096:8192] = b"\xff" * 4096
    study.write_text(f"database: {copy}\n")
    copy.write_bytes(bytes(damaged))
    with pytest.raises(SystemExit) as exit_info:
        main(["experiment", "backup", "--study", str(study), "--out", str(tmp_path / "b.sqlite")])
    err = capsys.readouterr().err
    assert exit_info.value.code == 1 and "is damaged" in err and len(err.splitlines()) == 1
    assert not (tmp_path / "b.sqlite").exists()


def test_only_a_study_whose_paper_set_time_limits_is_warned_of_departing_from_them():
    import dataclasses

    from tracktale.experiment.cli import _warnings
    from tracktale.experiment.study.config import load_study

    narrative = load_study(None)
    assert not any("time limits" in note for note in _warnings(narrative))
    shorter = dataclasses.replace(
        narrative, timing=dataclasses.replace(narrative.timing, reading_ms=3000)
    )
    assert "time limits are 3000 / 15000 ms, not the source paper's 40000 / 15000" in (
        _warnings(shorter)
    )
    boxes = dataclasses.replace(shorter, paradigm="boxes")  # its paper set no time limits
    assert not any("time limits" in note for note in _warnings(boxes))
