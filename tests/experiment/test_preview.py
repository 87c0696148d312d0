"""Preview sessions (the researcher's own test runs) and the printed links (issue 31, 17-18).

A session started from the study's preview link is stored with ``source="preview"``, takes
no counterbalancing list from the participants, is shown as a preview on the page and the
admin page, and is left out of exports and the analysis unless asked for. The links the
server prints are the public address's, with Prolific's placeholders.
"""

from __future__ import annotations

import pytest

from tests.experiment.conftest import ADMIN_SECRET, Participant, open_storage
from tracktale.analysis.data.load import load_human_trials
from tracktale.app.cli import main
from tracktale.experiment.export.files import export_study
from tracktale.experiment.storage.store import Storage
from tracktale.experiment.study.design import build_session
from tracktale.experiment.study.links import PROLIFIC_QUERY, preview_key
from tracktale.experiment.web import frontend

STUDY = "narrative-entity-tracking"


@pytest.fixture(params=["sqlite", "postgresql"])
def db(request, tmp_path):
    storage = open_storage(request.param, f"sqlite:///{tmp_path / 'study.sqlite'}")
    yield storage
    storage.close()


def _register(storage, human_set, pid, source):
    person, _ = storage.create_participant(
        study_id="study",
        prolific_pid=pid,
        prolific_study_id=None,
        prolific_session_id=None,
        source=source,
        stimulus_sha256=human_set.sha256,
        make_plan=lambda list_id: build_session(human_set, list_id, 7),
        user_agent="pytest",
    )
    return person


def test_preview_sessions_take_no_list_from_the_participants(db, human_set):
    previews = [_register(db, human_set, f"preview-{n}", "preview") for n in range(3)]
    _register(db, human_set, "SIM1", "simulated")
    people = [_register(db, human_set, f"PID{n}", "online") for n in range(4)]
    # Each kind is balanced among its own: the participants fill every list once.
    assert [person.list_id for person in people] == ["L1", "L2", "L3", "L4"]
    assert [person.list_id for person in previews] == ["L1", "L2", "L3"]
    assert db.list_counts("study") == {"L1": 1, "L2": 1, "L3": 1, "L4": 1}
    assert db.list_counts("study", source="preview") == {"L1": 1, "L2": 1, "L3": 1}


def _preview(client, human_set, storage, key=None):
    person = Participant(client, human_set, pid="preview-abc123")
    reply = person.start(preview=key or preview_key(storage, STUDY))
    return person, reply


def test_the_preview_key_marks_the_session_and_a_wrong_one_is_refused(client, human_set, storage):
    person, reply = _preview(client, human_set, storage)
    assert reply.status_code == 200 and reply.get_json()["preview"] is True
    assert storage.get_participant(STUDY, person.pid).source == "preview"
    # Resuming in the same browser stays a preview.
    again = person.start(token=person.token, preview=preview_key(storage, STUDY))
    assert again.status_code == 200 and again.get_json()["preview"] is True

    wrong = Participant(client, human_set).start(preview="0" * 24)
    assert wrong.status_code == 403 and wrong.get_json()["reason"] == "bad_preview"
    malformed = Participant(client, human_set).start(preview="<script>")
    assert malformed.status_code == 400
    # A participant's id never turns into a preview, nor a preview's into a participant's.
    real = Participant(client, human_set)
    assert real.start().status_code == 200 and real.state["preview"] is False
    taken = real.start(preview=preview_key(storage, STUDY))
    assert taken.status_code == 409 and taken.get_json()["reason"] == "other_source"
    plain = Participant(client, human_set, pid=person.pid, session_id=person.session_id).start()
    assert plain.status_code == 409


@pytest.fixture
def one_of_each(client, human_set, storage):
    """A participant and a preview session, both completed."""
    real = Participant(client, human_set)
    assert real.run_all().status_code == 200
    preview, _ = _preview(client, human_set, storage)
    preview.consent()
    for index in range(len(preview.state["trials"])):
        assert preview.answer(index).status_code == 201
    assert preview.survey().status_code == 200
    assert preview.post("/api/complete", {}).status_code == 200
    return real, preview


def _ids(path):
    import pandas as pd

    return set(pd.read_csv(path)["participant_id"])


def test_exports_leave_preview_sessions_out_unless_asked(one_of_each, storage, tmp_path):
    real, preview = one_of_each
    real_id = storage.get_participant(STUDY, real.pid).participant_id
    preview_id = storage.get_participant(STUDY, preview.pid).participant_id
    export_study(storage, tmp_path / "plain", salt="s", formats=("csv",))
    for table in ("trials", "participants", "accuracy"):
        assert _ids(tmp_path / "plain" / f"{table}.csv") == {real_id}
    export_study(storage, tmp_path / "all", salt="s", formats=("csv",), include_preview=True)
    for table in ("trials", "participants", "accuracy"):
        assert _ids(tmp_path / "all" / f"{table}.csv") == {real_id, preview_id}
    import pandas as pd

    people = pd.read_csv(tmp_path / "all" / "participants.csv").set_index("participant_id")
    assert people.loc[preview_id, "source"] == "preview"


def test_the_analysis_leaves_preview_sessions_out_unless_asked(one_of_each, storage, tmp_path):
    export_study(storage, tmp_path, salt="s", formats=("csv",), include_preview=True)
    for source in (tmp_path, storage.url):
        default = load_human_trials(source)
        assert set(default.trials["source"]) == {"online"}
        assert set(default.participants["source"]) == {"online"}
        asked = load_human_trials(source, include_preview=True)
        assert set(asked.trials["source"]) == {"online", "preview"}
        assert len(asked.participants) == 2


def test_only_preview_sessions_is_an_error_naming_the_flag(client, human_set, storage):
    from tracktale.errors import TracktaleError

    preview, _ = _preview(client, human_set, storage)
    preview.consent()
    preview.answer(0)
    with pytest.raises(TracktaleError, match="--include-preview"):
        load_human_trials(storage.url)


def test_the_admin_page_gives_the_links_and_marks_previews(one_of_each, client, storage):
    bearer = {"Authorization": f"Bearer {ADMIN_SECRET}"}
    page = client.get("/admin/", headers=bearer).get_data(as_text=True)
    key = preview_key(storage, STUDY)
    assert f"http://localhost/?preview={key}" in page
    assert "http://localhost/?PROLIFIC_PID={{%PROLIFIC_PID%}}" in page
    assert 'class="preview">preview</td>' in page
    assert "Preview sessions, counted neither above nor in the list balance: 0 started, 1" in page
    plain = client.get("/admin/export/participants.csv", headers=bearer).get_data(as_text=True)
    assert ",preview," not in plain
    asked = client.get("/admin/export/participants.csv?preview=include", headers=bearer)
    assert ",preview," in asked.get_data(as_text=True)


@pytest.fixture
def no_serving(monkeypatch):
    from flask import Flask

    monkeypatch.setattr(Flask, "run", lambda self, **kwargs: None)
    monkeypatch.setattr(frontend, "find_node_modules", lambda: "node_modules")


def _run(args, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(args)
    out, err = capsys.readouterr()
    return exit_info.value.code, out, err


def test_serve_prints_the_public_links_prolific_needs(no_serving, tmp_path, capsys):
    public = "https://study.example.org/tt"
    code, out, err = _run(["experiment", "serve", "--public-url", public + "/"], capsys)
    assert code == 0
    assert f"participant link (for Prolific): {public}/?{PROLIFIC_QUERY}" in out
    assert "PROLIFIC_PID={{%PROLIFIC_PID%}}&STUDY_ID={{%STUDY_ID%}}" in out
    assert "SESSION_ID={{%SESSION_ID%}}" in out
    assert f"admin link:                      {public}/admin" in out
    assert "127.0.0.1" not in out and "only reachable from this machine" not in err
    database = tmp_path / "tracktale-data" / "study" / f"{STUDY}.sqlite"
    storage = Storage(f"sqlite:///{database}")
    assert f"{public}/?preview={preview_key(storage, STUDY)}" in out
    storage.close()
    # Without a public address the link is a local one, and the command says so.
    code, out, err = _run(["experiment", "serve", "--port", "5123"], capsys)
    assert "http://127.0.0.1:5123/?PROLIFIC_PID=" in out
    assert "only reachable from this machine" in err and "--public-url" in err


def test_the_study_file_gives_the_public_url_and_the_command_prints_the_same_key(tmp_path, capsys):
    study = tmp_path / "study.yaml"
    study.write_text(
        f"database: {tmp_path / 'study.sqlite'}\npublic_url: https://lab.example.org\n"
    )
    code, out, _ = _run(["experiment", "preview-link", "--study", str(study)], capsys)
    assert code == 0
    storage = Storage(f"sqlite:///{tmp_path / 'study.sqlite'}")
    key = preview_key(storage, STUDY)
    storage.close()
    assert f"https://lab.example.org/?preview={key}" in out
    assert f"https://lab.example.org/?{PROLIFIC_QUERY}" in out
    _, again, _ = _run(["experiment", "preview-link", "--study", str(study)], capsys)
    assert again == out  # the key is kept: the link stays the same
    code, _, err = _run(
        ["experiment", "preview-link", "--study", str(study), "--public-url", "ftp://x"], capsys
    )
    assert code == 1 and "must be an http(s) URL" in err and len(err.splitlines()) == 1
