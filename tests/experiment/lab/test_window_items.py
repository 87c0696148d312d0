"""A Dutch study of imported items in the lab: a real PsychoPy window on a virtual screen.

The same booth as ``test_window.py`` (``tracktale experiment lab`` in a subprocess on its own
Xvfb display, real key events from xdotool, each screen known from the run's log) plays a
participant through the Dutch test study (``tests/experiment/data/items_nl``): the Dutch consent
(J for yes, after reading the information sheet with I), two reading screens per text, choices
with F and J, typed answers, the Dutch survey (J for yes), the debrief. Every trial must be
stored once, marked lab, with the reading time of both screens together. Screenshots of each
kind of screen go to test-artifacts/lab-items/.
"""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from tests.conftest import REPO_ROOT
from tests.experiment.items_sets import ETHICS_NL, dutch_set, study_folder
from tests.experiment.lab.test_window import Booth, virtual_screen  # noqa: F401
from tracktale.experiment.lab.pages import paginate
from tracktale.experiment.paradigms import get_human_study
from tracktale.experiment.storage.store import Storage

SHOTS = REPO_ROOT / "test-artifacts" / "lab-items"
READING_MS, RESPONSE_MS = 8000, 6000


class DutchBooth(Booth):
    """The booth, with its screenshots in a folder of their own."""

    def start(self) -> subprocess.Popen:
        self.logs_before = set(self.out.glob("*.log"))
        command = [sys.executable, "-m", "tracktale", "experiment", "lab", "--windowed"]
        command += ["--study", str(self.study), "--participant", self.participant]
        command += ["--out", str(self.out), "--screenshots", str(SHOTS), "--frame-cap", "60"]
        command += ["--keyboard", self.keyboard]
        return subprocess.Popen(
            command, env=self.env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        )

    def pages(self, role: str) -> int:
        """How many pages the window splits a document into."""
        human = get_human_study(self.config.paradigm)
        seconds = {"reading_seconds": 8, "response_seconds": 6}
        document = self.config.document(f"lab_{role}", human.lab_documents[role], seconds)
        return len(paginate(document.markdown))


def _page_number(kind: str) -> int:
    return int(kind.rsplit("-", 1)[1]) if kind[-1].isdigit() else 1


def _play(booth: DutchBooth, process, stimuli) -> tuple[int, str]:
    consent_pages, read_information = booth.pages("consent"), False
    for kind, trial in booth.screens(process):
        if kind.startswith("consent"):
            if _page_number(kind) < consent_pages:
                booth.key("space")
            else:
                booth.key("j" if read_information else "i")  # J: ja, I: informatie
                read_information = True
        elif kind.startswith(("information", "debrief")) or kind in (
            "welcome",
            "block-intro",
            "feedback",
            "end",
        ):
            booth.key("space")
        elif kind == "reading":
            time.sleep(0.35)  # the first 300 ms of a screen ignore keys
            booth.key("space")
        elif kind == "comprehension":
            item = stimuli.get(booth.planned(trial).item_id)
            time.sleep(0.25)
            booth.key("fj"[item.truth["response"]["options"].index(item.answer)])
        elif kind == "explicit":
            booth.type(stimuli.get(booth.planned(trial).item_id).answer)
        elif kind == "survey-age":
            booth.type("29")
        elif kind == "survey-gender":
            booth.key("5")
        elif kind == "survey-language":
            booth.type("Nederlands")
        elif kind in ("survey-attentive", "survey-no-ai"):
            booth.key("j")
        else:
            raise AssertionError(f"unexpected screen {kind}")
    output = process.stdout.read()
    return process.wait(timeout=30), output


@pytest.mark.slow
def test_a_dutch_items_study_in_the_lab(virtual_screen, tmp_path):  # noqa: F811
    stimuli = dutch_set()
    study = study_folder(
        tmp_path,
        stimuli,
        ethics=ETHICS_NL,
        timing={"reading_ms": READING_MS, "response_ms": RESPONSE_MS, "feedback_ms": 3000},
    )
    booth = DutchBooth(virtual_screen, study, tmp_path / "psychopy", "LAB-NL-1", keyboard="event")
    status, output = _play(booth, booth.start(), stimuli)
    assert status == 0, output
    assert "completed, 14/14 trials stored" in output

    storage = Storage(booth.config.database_url(), create=False)
    try:
        trials = list(storage.trials())
        (person,) = storage.participants()
        survey = storage.survey(person.participant_id)[person.participant_id]
    finally:
        storage.close()
    assert (person.source, person.status) == ("lab", "completed")
    assert [trial.trial_index for trial in trials] == list(range(14))
    for trial in trials:
        item = stimuli.get(trial.item_id)
        assert trial.source == "lab" and not trial.timed_out and trial.correct, trial
        assert trial.response == item.answer
        screens = len(item.truth["screens"])
        # Each screen waits 300 ms for keys: two screens take at least 600 ms together.
        assert 300 * screens <= trial.reading_time_ms < READING_MS, trial
    assert survey["gender"] == "prefer not to say" and survey["attentive"] is True
    shots = {path.stem for path in SHOTS.glob("*.png")}
    for kind in ("consent", "information", "welcome", "reading", "comprehension", "explicit"):
        assert kind in shots, kind
