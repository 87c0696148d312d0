"""Progress inside one scoring call: the backends say, batch by batch, how much is done.

A chunk of items is scored by one call into a backend, which runs it in many batches (and
may take minutes); the runner writes the chunk's rows when the call returns. So that a
progress bar moves per batch rather than per chunk, a backend calls :func:`batch_done` after
each batch, and the runner listens with :func:`watching` around the call. Nothing listens
outside a run, and a backend that never calls it just moves the bar per chunk.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from contextvars import ContextVar

_listener: ContextVar[Callable[[float], None] | None] = ContextVar(
    "tracktale_batch_progress", default=None
)


def batch_done(done: int, total: int) -> None:
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
