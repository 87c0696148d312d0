"""Fixtures of the lab-mode tests: a study on the human set, written where a subprocess finds it."""

from __future__ import annotations

import pytest
import yaml

from tracktale.stimulus_set import write_stimulus_set


@pytest.fixture
def lab_study(tmp_path, human_set):
    """Write a study file (short limits, its own SQLite file) on the human set; return its path."""

    def make(reading_ms=3000, response_ms=4000, feedback_ms=1500):
        folder = tmp_path / "study"
        if not (folder / "stimuli").exists():
            write_stimulus_set(human_set, folder / "stimuli")
        path = folder / "study.yaml"
        path.write_text(
            yaml.safe_dump(
                {
                    "study_id": "lab-test",
                    "stimuli": "stimuli",
                    "database": str(folder / "study.sqlite"),
                    "timing": {
                        "reading_ms": reading_ms,
                        "response_ms": response_ms,
                        "feedback_ms": feedback_ms,
                    },
                }
            )
        )
        return path

    return make
