"""How a scoring run reports its progress: a rich bar on a terminal, plain lines in logs."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from rich.console import Console

err_console = Console(stderr=True, highlight=False, soft_wrap=True)


@contextlib.contextmanager
def scoring_reporter() -> Iterator[Any]:
    """A progress bar with rate and ETA on a terminal, else one line per written chunk."""
    if err_console.is_terminal:
        with ProgressReporter() as reporter:
            yield reporter
    else:
        yield LogReporter()


def quiet_libraries() -> None:
    """Only errors from transformers and the hub: their warnings drown the progress."""
    import logging

    logging.getLogger("transformers").setLevel(logging.ERROR)
    logging.getLogger("huggingface_hub").setLevel(logging.ERROR)


class ProgressReporter:
    """A rich progress bar with items/s and ETA; notices go to stderr above it."""

    def __enter__(self):
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        self.progress = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[rate]}"),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=err_console,
            transient=True,
        )
        self.progress.start()
        self.task = self.progress.add_task("planning", total=None, rate="")
        self.written = 0
        return self

    def __exit__(self, *exc_info) -> None:
        self.progress.stop()

    def start(self, total: int) -> None:
        """The run will write ``total`` rows."""
        self.progress.update(self.task, total=total)

    def describe(self, text: str) -> None:
        """What is being scored now."""
        self.progress.update(self.task, description=text)

    def advance(self, count: int) -> None:
        """``count`` more rows were written."""
        self.written += count
        self._show(self.written)

    def partial(self, count: float) -> None:
        """``count`` rows of the chunk being scored are done (the bar moves per batch)."""
        self._show(self.written + count)

    def _show(self, completed: float) -> None:
        self.progress.update(self.task, completed=completed)
        speed = self.progress.tasks[0].speed
        self.progress.update(self.task, rate=f"{speed:.1f} items/s" if speed else "")

    def notice(self, message: str) -> None:
        """A line for the user, above the progress."""
        self.progress.console.print(f"tracktale: {message}")


class LogReporter:
    """Progress as plain lines on stderr, one per written chunk (for logs and batch jobs)."""

    def __init__(self) -> None:
        import time

        self.clock = time.monotonic
        self.total, self.done, self.what, self.started = 0, 0, "", self.clock()

    def start(self, total: int) -> None:
        """The run will write ``total`` rows."""
        self.total, self.started = total, self.clock()

    def describe(self, text: str) -> None:
        """What is being scored now."""
        self.what = text

    def partial(self, count: float) -> None:
        """Rows done within a chunk: logs get one line per written chunk only."""

    def advance(self, count: int) -> None:
        """``count`` more rows were written."""
        self.done += count
        rate = self.done / max(1e-9, self.clock() - self.started)
        eta = (self.total - self.done) / rate if rate else 0
        err_console.print(
            f"tracktale: {self.what}: {self.done}/{self.total} rows, {rate:.1f} items/s, "
            f"ETA {eta:.0f} s"
        )

    def notice(self, message: str) -> None:
        """A line for the user, above the progress."""
        err_console.print(f"tracktale: {message}")
