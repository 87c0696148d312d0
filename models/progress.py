"""Progress inside one scoring call: the backends say, batch by batch, how much is done.

A chunk of items is scored by one call into a backend, which runs it in many batches (and
may take minutes); the runner writes the chunk's rows when the call returns. So that a
progress bar moves per batch rather than per chunk, a backend calls :func:`batch_done` after
each batch, and the runner listens with :func:`watching` around the call. Nothing listens
outside a run, and a backend that never calls it just moves the bar per chunk.

A batch of long generations (a 95-step arithmetic trace runs to thousands of tokens) may itself
take minutes: a backend marks the batch it runs with :func:`in_batch` and the decoding loop
reports, every block of generated tokens, the share of the batch's budget it has used
(:func:`batch_share`), so the bar moves within a batch too. That share is a lower bound on the
batch's progress (rows that stop early end it sooner), so the bar never runs ahead.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from contextvars import ContextVar

_listener: ContextVar[Callable[[float], None] | None] = ContextVar(
    "tracktale_batch_progress", default=None
)
_batch: ContextVar[tuple[int, int, int] | None] = ContextVar("tracktale_batch", default=None)


def batch_done(done: float, total: int) -> None:
    """A backend has finished ``done`` of the ``total`` rows of the current call."""
    listener = _listener.get()
    if listener is not None and total > 0:
        listener(min(1.0, done / total))


@contextlib.contextmanager
def watching(listener: Callable[[float], None]) -> Iterator[None]:
    """Call ``listener`` with the share done (0 to 1) after each batch of calls made inside."""
    token = _listener.set(listener)
    try:
        yield
    finally:
        _listener.reset(token)


@contextlib.contextmanager
def in_batch(done: int, size: int, total: int) -> Iterator[None]:
    """A backend runs a batch of ``size`` rows after ``done`` of the call's ``total`` rows."""
    token = _batch.set((done, size, total))
    try:
        yield
    finally:
        _batch.reset(token)


def batch_share(share: float) -> None:
    """The batch being run (:func:`in_batch`) is ``share`` (0 to 1) done."""
    state = _batch.get()
    if state is not None:
        done, size, total = state
        batch_done(done + min(1.0, max(0.0, share)) * size, total)
