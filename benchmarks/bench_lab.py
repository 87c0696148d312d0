"""Lab mode: the database work between trials, and the window's timing on this machine.

1. Between two trials the lab writes the finished trial (validated, scored, committed with
   SQLite's synchronous=FULL) and marks the next one as on screen: the participant waits for
   both. Printed: p50 and max milliseconds per trial over a whole 50-trial session (the first
   trial apart: it loads the scorer).
2. With a display (``DISPLAY`` set, PsychoPy installed): how long the window takes to open,
   the frame rate of the story screen without a cap, and how far a timed-out story overshoots
   its limit (the next screen's onset flip minus the story's, minus the limit), p50 and max,
   at a 60 Hz cap. On a virtual screen there is no vertical blank; a lab monitor's figures
   depend on its refresh rate.

Nothing is asserted.

Run: DISPLAY=:N .venv/bin/python benchmarks/bench_lab.py [--stories 20]
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import tempfile
import time
from pathlib import Path

from tracktale.experiment.lab.session import LabSession, Reading, Response
from tracktale.experiment.storage.store import Storage
from tracktale.experiment.study.config import StudyConfig
from tracktale.experiment.study.service import StudyService
from tracktale.stimuli.registry import get_paradigm


def database_between_trials(folder: Path) -> list[float]:
    stimuli = get_paradigm("narrative").generate_set("human", 1)
    config = StudyConfig(database=str(folder / "study.sqlite"))
    storage = Storage(config.database_url())
    try:
        session = LabSession(StudyService(config, storage, stimuli), "BENCH-1")
        session.record_consent(True)
        costs = []
        for planned in session.trials:
            item = stimuli.get(planned.item_id)
            answer = item.answer if planned.task == "explicit" else planned.good_side
            started = time.perf_counter()
            session.begin_trial(planned.trial_index)
            session.save_trial(
                planned, Reading(1.0, 900.0, False), Response(2.0, answer, 800.0), screen=(1, 1)
            )
            costs.append((time.perf_counter() - started) * 1000)
        return costs
    finally:
        storage.close()


def window_timing(stories: int) -> None:
    from psychopy import logging

    from tracktale.experiment.lab.screens import PsychoPyDisplay

    logging.console.setLevel(logging.ERROR)
    started = time.perf_counter()
    display = PsychoPyDisplay(fullscreen=False)
    opened = time.perf_counter() - started
    story = get_paradigm("narrative").generate_set("human", 1).select(role="main")[0].context
    try:
        frames = 0
        display.body.text = story
        started = time.perf_counter()
        while time.perf_counter() - started < 2:
            display.body.draw()
            display.win.flip()
            frames += 1
        uncapped = frames / (time.perf_counter() - started)
        display.min_interval = 1 / 60
        display.frame_period = max(display.frame_period, display.min_interval)
        limit = 0.5
        onsets = [display.read(story, limit, trial=i, minimum_s=0.3).onset for i in range(stories)]
        overshoot = [(b - a - limit) * 1000 for a, b in zip(onsets, onsets[1:], strict=False)]
    finally:
        display.close()
    print(f"window opened in {opened:.1f} s; keyboard backend: {display.keys.backend}")
    print(f"story screen without a cap: {uncapped:.0f} frames/s")
    print(
        f"timed-out story (limit {limit * 1000:.0f} ms, 60 Hz cap): overshoot "
        f"p50 {statistics.median(overshoot):+.1f} ms, max {max(overshoot):+.1f} ms "
        f"over {len(overshoot)} stories"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stories", type=int, default=20, help="Timed-out stories to measure.")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        costs = database_between_trials(Path(folder))
    print(
        f"database work between trials (SQLite, 50 trials): p50 {statistics.median(costs):.1f} ms, "
        f"max after the first {max(costs[1:]):.1f} ms, first trial {costs[0]:.1f} ms (warm-up)"
    )
    if not os.environ.get("DISPLAY") or importlib.util.find_spec("psychopy") is None:
        print("no DISPLAY or no PsychoPy: window timing not measured")
        return
    window_timing(options.stories)


if __name__ == "__main__":
    main()
