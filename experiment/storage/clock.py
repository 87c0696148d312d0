"""The server's clocks: the wall clock times are stored in, and a monotonic clock to measure.

A trial's ``server_elapsed_ms`` is measured from its serve to its answer. The wall clock can
be stepped (NTP, an administrator's ``date -s``) and two servers' wall clocks can disagree, so
an interval measured on it can come out negative or hours long. Each serve therefore also
keeps a reading of the monotonic clock and the name of the clock it was read from: on Linux
``CLOCK_MONOTONIC`` counts from boot and is shared by every process of the machine (gunicorn's
workers too), so the clock is named by the kernel's boot id and time namespace. An answer
received on the same clock is measured on it; one received elsewhere falls back to the wall
clocks, clamped at zero and flagged ``clock_skew`` when they disagree.
"""

from __future__ import annotations

import datetime as dt
import os
import socket
import time
from pathlib import Path

__all__ = ["DOMAIN", "elapsed_ms", "monotonic_ns"]


def _domain() -> str:
    """Which monotonic clock this process reads: same name, comparable readings."""
    try:
        boot = Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:  # not Linux: only this process is known to share its clock
        return f"{socket.gethostname()}:{os.getpid()}"
    try:  # a time namespace may shift the monotonic clock of its processes
        shift = Path("/proc/self/timens_offsets").read_text().split()
    except OSError:
        shift = []
    return ":".join([boot, *shift])[:96]


DOMAIN = _domain()
"""The name of this process's monotonic clock."""


def monotonic_ns() -> int:
    """The monotonic clock, in nanoseconds."""
    return time.monotonic_ns()


def elapsed_ms(
    served_wall: dt.datetime,
    served_mono: int | None,
    served_domain: str | None,
    answered_wall: dt.datetime,
    answered_mono: int,
) -> tuple[float, bool]:
    """Milliseconds from a serve to its answer, and whether the wall clocks disagreed.

    Measured on the monotonic clock when both readings come from the same one (:data:`DOMAIN`);
    else on the wall clocks, clamped at zero (a negative interval is clock skew between two
    servers, or a step of the clock: ``True`` then).
    """
    if served_mono is not None and served_domain == DOMAIN:
        return max(0.0, (answered_mono - served_mono) / 1e6), False
    wall = (answered_wall - served_wall).total_seconds() * 1000
    return max(0.0, wall), wall < 0
