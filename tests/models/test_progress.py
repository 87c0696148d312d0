"""The scoring bar moves per batch, not per written chunk (issue 31, item 12).

A chunk of items is one call into the backend, which runs it in batches; the bar used to
stand still (at "0/297, ETA -:--:--") until the whole chunk was written.
"""

from __future__ import annotations

import io

from rich.console import Console

from tracktale.models import reporting
from tracktale.models.runner import Reporter, ScoringJob, run_scoring


class Recorder(Reporter):
    def __init__(self):
        self.events = []

    def partial(self, count):
        self.events.append(("partial", count))

    def advance(self, count):
        self.events.append(("advance", count))


def test_rows_done_are_reported_after_each_batch_of_a_chunk(model_dirs, stimulus_dir, tmp_path):
    job = ScoringJob(
        stimulus_dir,
        str(model_dirs["pythia"]),
        tmp_path / "results",
        tasks=("implicit",),
        batch_size=2,
        chunk_size=8,
        device="cpu",
    )
    recorder = Recorder()
    run_scoring(job, recorder)
    advances = [count for kind, count in recorder.events if kind == "advance"]
    assert sum(advances) == 33 and len(advances) == 5  # chunks of 8 written
    # Before each chunk is written, its batches were reported one by one, never going back.
    chunk: list[float] = []
    for kind, count in recorder.events:
        if kind == "partial":
            chunk.append(count)
            continue
        assert len(chunk) >= 2 or count == 1, recorder.events  # 33 = 4 * 8 + 1
        assert chunk == sorted(chunk) and chunk[0] > 0 and chunk[-1] == count
        chunk = []


def test_the_bar_shows_rows_done_within_a_chunk(monkeypatch):
    console = Console(file=io.StringIO(), force_terminal=True, width=80)
    monkeypatch.setattr(reporting, "err_console", console)
    with reporting.ProgressReporter() as bar:
        bar.start(297)
        bar.partial(3.0)
        assert bar.progress.tasks[0].completed == 3.0
        bar.advance(128)
        bar.partial(10.0)
        assert bar.progress.tasks[0].completed == 138.0
