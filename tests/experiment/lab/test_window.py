"""A whole lab session in a real PsychoPy window on a virtual screen, driven by key presses.

``tracktale experiment lab`` runs in a subprocess on its own Xvfb display; the test plays the
participant with Debian's xdotool (real X key events: the window's keyboard and text box get
them as they would a person's), and knows which screen is up from the run's PsychoPy log,
where each screen's onset is logged at its flip. The participant reads the information sheet,
consents, practises, answers (once pressing ENTER on an empty box first), presses ESC in the
middle of a story (the run stops with status 3), resumes, is killed in the middle of a question
(SIGKILL), resumes again, lets one story and one answer time out, fills in the survey and
finishes. Then the database must hold all 50
trials exactly once, marked as lab trials, with frame-locked times, the interrupted trials
counted as restarted, and PsychoPy's CSV must hold every trial of each run. Screenshots of every
kind of screen go to test-artifacts/lab/. The limits are shortened to 3 s / 4 s. A second,
shorter run is full screen with the ``psychopy.event`` keyboard instead of Psychtoolbox's.
"""

from __future__ import annotations

import csv
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT, require
from tracktale.experiment.lab.launch import INSTALL_HINT, psychopy_available
from tracktale.experiment.storage.store import Storage
from tracktale.experiment.study.config import load_study

ARTIFACTS = REPO_ROOT / "test-artifacts" / "lab"
READING_MS, RESPONSE_MS = 3000, 4000
PARTICIPANT = "LAB-001"
SCREEN = re.compile(r"tracktale screen=(\S+)(?: trial=(\d+))?")
ESCAPE_AT, KILL_AT = 13, 29  # trial positions (main trials)
READING_TIMEOUT_AT, RESPONSE_TIMEOUT_AT = 33, 36
EMPTY_ENTER_AT = 2  # ENTER on an empty box is refused, then the answer is typed
PAGES = ("welcome", "resume", "block-intro", "end")


@pytest.fixture(scope="module")
def virtual_screen():
    """An Xvfb display of its own (the number picked by Xvfb), stopped after the tests."""
    require(psychopy_available(), INSTALL_HINT)
    require(shutil.which("Xvfb") is not None, "Xvfb is missing (apt-get install xvfb)")
    require(shutil.which("xdotool") is not None, "xdotool is missing (apt-get install xdotool)")
    read_end, write_end = os.pipe()
    server = subprocess.Popen(
        ["Xvfb", "-displayfd", str(write_end), "-screen", "0", "1280x1024x24", "-nolisten", "tcp"],
        pass_fds=(write_end,),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    os.close(write_end)
    with os.fdopen(read_end) as reader:
        number = reader.readline().strip()  # written once the server accepts connections
    assert number.isdigit(), "Xvfb did not report its display"
    yield f":{number}"
    server.terminate()
    server.wait(timeout=10)


class Booth:
    """Runs the lab command and plays the participant through xdotool."""

    def __init__(
        self, display, study, out, participant=PARTICIPANT, keyboard="ptb", fullscreen=False
    ):
        self.env = {**os.environ, "DISPLAY": display}
        self.participant = participant
        self.keyboard = keyboard
        self.fullscreen = fullscreen
        self.study = study
        self.out = out
        self.config = load_study(study)
        self.stimuli = None
        self.seen: Counter[str] = Counter()

    def start(self) -> subprocess.Popen:
        self.logs_before = set(self.out.glob("*.log"))
        command = [sys.executable, "-m", "tracktale", "experiment", "lab"]
        shots = ARTIFACTS / "fullscreen" if self.fullscreen else ARTIFACTS
        command += ["--study", str(self.study), "--participant", self.participant]
        command += ["--out", str(self.out), "--screenshots", str(shots), "--frame-cap", "60"]
        command += ["--keyboard", self.keyboard, *([] if self.fullscreen else ["--windowed"])]
        return subprocess.Popen(
            command, env=self.env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        )

    def screens(self, process: subprocess.Popen):
        """Each screen as it appears: (kind, trial position or None), until the run ends."""
        log = None
        position = 0
        deadline = time.monotonic() + 60
        while True:
            if log is None:
                new = set(self.out.glob("*.log")) - self.logs_before
                log = new.pop() if new else None
            if log is not None:
                text = log.read_text(encoding="utf-8", errors="replace")
                complete = text[: text.rfind("\n") + 1]
                for match in SCREEN.finditer(complete[position:]):
                    deadline = time.monotonic() + 60
                    self.seen[match.group(1)] += 1
                    yield match.group(1), None if match.group(2) is None else int(match.group(2))
                position = len(complete)
            if process.poll() is not None:
                return
            assert time.monotonic() < deadline, "no new screen for 60 s"
            time.sleep(0.02)

    def key(self, name: str) -> None:
        # A held key, as a person presses it (Psychtoolbox misses zero-length presses).
        self.xdotool("keydown", name, "sleep", "0.05", "keyup", name)

    def type(self, text: str) -> None:
        self.xdotool("type", "--delay", "40", text)
        self.key("Return")

    def xdotool(self, *arguments: str) -> None:
        subprocess.run(["xdotool", *arguments], env=self.env, check=True, timeout=30)

    def planned(self, position: int):
        storage = Storage(self.config.database_url(), create=False)
        try:
            person = storage.get_participant(self.config.study_id, self.participant)
        finally:
            storage.close()
        return person.plan.trials[position]


def _play(booth: Booth, process: subprocess.Popen, human_set, *, stop_at=None, kill_at=None):
    """Answer every screen correctly; ESC on one story or SIGKILL on one question."""
    consent_pages = 0
    for kind, trial in booth.screens(process):
        if kind == "consent":
            consent_pages += 1
            booth.key("space")
        elif kind == "consent-2":
            booth.key("i" if consent_pages == 1 else "y")  # read the information sheet once
        elif (
            kind.startswith("information")
            or kind in ("welcome", "resume", "block-intro")
            or kind.startswith("debrief")
            or kind == "end"
        ):
            booth.key("space")
        elif kind == "feedback":
            if booth.seen["feedback"] > 1:  # the first one times out by itself
                booth.key("space")
        elif kind == "reading":
            if trial == stop_at:
                booth.key("Escape")
            elif trial != READING_TIMEOUT_AT:
                time.sleep(0.35)  # the first 300 ms of a story ignore keys, as in the browser
                booth.key("space")
        elif kind in ("explicit", "implicit", "comprehension"):
            planned = booth.planned(trial)
            if trial == kill_at:
                process.send_signal(signal.SIGKILL)
            elif trial == RESPONSE_TIMEOUT_AT:
                pass
            elif kind == "explicit":
                if trial == EMPTY_ENTER_AT:
                    booth.key("Return")
                    time.sleep(0.2)
                booth.type(human_set.get(planned.item_id).answer)
            else:
                time.sleep(0.25)
                booth.key("f" if planned.good_side == "left" else "j")
        elif kind == "survey-age":
            booth.type("37")
        elif kind == "survey-gender":
            booth.key("5")
        elif kind == "survey-language":
            booth.type("English")
        elif kind in ("survey-attentive", "survey-no-ai"):
            booth.key("y")
        else:
            raise AssertionError(f"unexpected screen {kind}")
    output = process.stdout.read()
    return process.wait(timeout=30), output


def _psychtoolbox_loads() -> bool:
    try:
        import psychtoolbox  # noqa: F401
    except (ImportError, OSError):
        return False
    return True


@pytest.mark.slow
def test_a_whole_lab_session_with_an_escape_and_a_crash(virtual_screen, lab_study, human_set):
    require(_psychtoolbox_loads(), "Psychtoolbox cannot load (apt-get install libjack-jackd2-0)")
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    study = lab_study(READING_MS, RESPONSE_MS)
    out = study.parent / "psychopy"
    booth = Booth(virtual_screen, study, out)

    status, output = _play(booth, booth.start(), human_set, stop_at=ESCAPE_AT)
    assert status == 3, output
    assert f"stopped with ESC at trial {ESCAPE_AT + 1}; {ESCAPE_AT}/50 trials stored" in output

    status, output = _play(booth, booth.start(), human_set, kill_at=KILL_AT)
    assert status == -signal.SIGKILL, output

    status, output = _play(booth, booth.start(), human_set)
    assert status == 0, output
    assert "completed, 50/50 trials stored" in output

    storage = Storage(booth.config.database_url(), create=False)
    try:
        trials = list(storage.trials())
        (person,) = storage.participants()
        survey = storage.survey(person.participant_id)[person.participant_id]
    finally:
        storage.close()
    assert (person.source, person.status, person.consent) == ("lab", "completed", True)
    assert [trial.trial_index for trial in trials] == list(range(50))
    assert trials[EMPTY_ENTER_AT].task == "explicit"
    assert trials[EMPTY_ENTER_AT].response_time_ms > 200
    assert len({trial.client_trial_id for trial in trials}) == 50
    for trial, planned in zip(trials, person.plan.trials, strict=True):
        assert (trial.item_id, trial.task, trial.source) == (planned.item_id, planned.task, "lab")
        assert trial.screen_width == 1024 and trial.screen_height == 768
        expected_restarts = 1 if trial.trial_index in (ESCAPE_AT, KILL_AT) else 0
        assert trial.restarts == expected_restarts, trial
        if trial.trial_index == READING_TIMEOUT_AT:
            assert trial.reading_timed_out
            assert READING_MS - 40 <= trial.reading_time_ms <= READING_MS + 120, trial
        else:
            assert not trial.reading_timed_out
            assert 300 <= trial.reading_time_ms < READING_MS, trial  # keys in the first 300 ms wait
        if trial.trial_index == RESPONSE_TIMEOUT_AT:
            assert (trial.timed_out, trial.response, trial.correct) == (True, None, False)
            assert trial.response_time_ms is None
        else:
            assert not trial.timed_out and trial.correct, trial
            assert 0 < trial.response_time_ms < RESPONSE_MS, trial
        if trial.task == "explicit":
            assert trial.response == human_set.get(trial.item_id).answer
    assert survey == {
        "age": 37,
        "gender": "prefer not to say",
        "native_language": "English",
        "attentive": True,
        "no_ai_assistance": True,
    }
    _check_psychopy_files(out, "ptb")
    shots = {path.stem for path in ARTIFACTS.glob("*.png")}
    for kind in ("consent", "information", "welcome", "block-intro", "reading", "explicit"):
        assert kind in shots, kind
    for kind in ("implicit", "comprehension", "feedback", "resume", "survey-gender", "debrief"):
        assert kind in shots, kind


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8-sig") as stream:
        return list(csv.DictReader(stream))


def _check_psychopy_files(out: Path, keyboard: str) -> None:
    files = sorted(out.glob("*.csv"))
    assert len(files) == 3, files  # one per run
    positions = []
    for path in files:
        rows = _rows(path)
        assert {(row["participant"], row["keyboard"]) for row in rows} == {(PARTICIPANT, keyboard)}
        positions += [int(row["trial_index"]) for row in rows if row["trial_index"]]
        for row in rows:
            if row["trial_index"]:
                assert float(row["probe_onset_s"]) > float(row["story_onset_s"])
    assert sorted(positions) == list(range(50))  # the killed run kept its finished trials
    assert "survey" in files[-1].read_text(encoding="utf-8-sig")


def test_full_screen_with_the_event_keyboard(virtual_screen, lab_study, human_set):
    study = lab_study(READING_MS, RESPONSE_MS)
    out = study.parent / "psychopy-event"
    booth = Booth(virtual_screen, study, out, "LAB-002", keyboard="event", fullscreen=True)
    status, output = _play(booth, booth.start(), human_set, stop_at=3)
    assert status == 3, output
    storage = Storage(booth.config.database_url(), create=False)
    try:
        trials = list(storage.trials())
    finally:
        storage.close()
    assert [trial.trial_index for trial in trials] == [0, 1, 2]
    for trial in trials:
        assert trial.task == "explicit" and trial.correct and trial.source == "lab"
        assert trial.response == human_set.get(trial.item_id).answer
        assert 300 <= trial.reading_time_ms < READING_MS and trial.response_time_ms > 0
        assert (trial.screen_width, trial.screen_height) == (1280, 1024)  # the whole screen
    (path,) = out.glob("*.csv")
    assert {row["keyboard"] for row in _rows(path)} == {"event"}
