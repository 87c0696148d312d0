"""``tracktale experiment lab``: install hint, refusals before any window, outcomes and exits."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.experiment.lab.scripted import ScriptedDisplay
from tracktale.app.cli import main
from tracktale.experiment.lab import launch
from tracktale.experiment.lab.runner import RunResult
from tracktale.experiment.lab.session import LabSession
from tracktale.experiment.storage.store import Storage
from tracktale.experiment.study.config import load_study
from tracktale.experiment.study.service import StudyService


def run(argv, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    out, err = capsys.readouterr()
    return exit_info.value.code, out, err


@pytest.fixture
def no_window(monkeypatch):
    """PsychoPy 'installed', and a window that must not open unless a test provides one."""
    monkeypatch.setattr(launch, "psychopy_available", lambda: True)

    def refuse(*args, **kwargs):
        raise AssertionError("a window was opened")

    monkeypatch.setattr(launch, "_run_window", refuse)


def test_without_psychopy_the_command_says_how_to_install_it(monkeypatch, capsys):
    monkeypatch.setattr(launch, "psychopy_available", lambda: False)
    status, _, err = run(["experiment", "lab", "--participant", "LAB-1"], capsys)
    assert status == 1
    assert err.strip() == f"tracktale: error: {launch.INSTALL_HINT}"
    assert "pip install 'tracktale[lab]'" in err


def test_a_malformed_id_is_refused_before_anything_opens(no_window, lab_study, capsys):
    status, _, err = run(
        ["experiment", "lab", "--study", str(lab_study()), "--participant", "a b"], capsys
    )
    assert status == 1 and "--participant 'a b'" in err


def test_a_completed_participant_is_refused_before_a_window_opens(
    no_window, lab_study, human_set, capsys
):
    study = lab_study()
    config = load_study(study)
    storage = Storage(config.database_url())
    try:
        service = StudyService(config, storage, human_set)
        ScriptedDisplay(human_set).play(LabSession(service, "LAB-9"))
    finally:
        storage.close()
    status, _, err = run(
        ["experiment", "lab", "--study", str(study), "--participant", "LAB-9"], capsys
    )
    assert status == 1 and "'LAB-9' has already completed this study" in err


@pytest.mark.parametrize(
    ("result", "status", "fragment"),
    [
        (RunResult("completed", 50, 50), 0, "completed, 50/50 trials stored"),
        (RunResult("declined", 0, 50), 0, "did not consent; screened out"),
        (
            RunResult("interrupted", 12, 50, stopped_at=12),
            3,
            "stopped with ESC at trial 13; 12/50 trials stored; run the same command to resume",
        ),
    ],
)
def test_outcomes_and_exit_statuses(
    monkeypatch, no_window, lab_study, tmp_path, capsys, result, status, fragment
):
    calls = []

    def fake_window(session, **options):
        calls.append(options)
        return launch.LabRun(result, session.participant.participant_id, None, Path("x.log"))

    monkeypatch.setattr(launch, "_run_window", fake_window)
    argv = ["experiment", "lab", "--study", str(lab_study()), "--participant", "LAB-2"]
    code, out, err = run([*argv, "--windowed", "--out", str(tmp_path / "out")], capsys)
    assert code == status
    assert fragment in out + err
    assert "time limits are 3000 / 4000 ms" in err and "Prolific" not in err
    (options,) = calls
    assert options["fullscreen"] is False and options["folder"] == tmp_path / "out"


def test_full_screen_by_default_and_data_beside_the_database(monkeypatch, no_window, lab_study):
    calls = []
    monkeypatch.setattr(
        launch,
        "_run_window",
        lambda session, **options: (
            calls.append(options)
            or launch.LabRun(RunResult("completed", 50, 50), "P", None, Path("x.log"))
        ),
    )
    study = lab_study()
    with pytest.raises(SystemExit):
        main(["experiment", "lab", "--study", str(study), "--participant", "LAB-3"])
    (options,) = calls
    assert options["fullscreen"] is True
    assert options["folder"] == study.parent / "study-lab"


def test_the_command_imports_neither_psychopy_nor_flask_before_it_needs_them():
    # A plain install (no study or lab extra) must reach the install hint, not a traceback.
    code = (
        "import sys, tracktale.experiment.cli, tracktale.experiment.lab.launch; "
        "print(sorted(m for m in ('flask', 'psychopy', 'sqlalchemy') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
