"""Placing a model across devices: the ``--max-memory`` syntax (no torch needed to check it).

A model that does not fit on one GPU is loaded with ``device_map="auto"``: accelerate places
its layers across the node's GPUs (and, where ``cpu`` is given a budget, the CPU), filling each
device up to its budget. ``--max-memory 0=70GiB,1=70GiB`` (or, in a plan, a mapping
``{0: 70GiB, 1: 70GiB}``) gives the budgets; a device left out gets nothing.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from tracktale.errors import TracktaleError

# The units accelerate reads, exactly (it takes a lower-case "gb" for gigabits).
_SIZE = re.compile(r"^\d+(\.\d+)?\s*([KMG]i?B)$")
_DEVICE = re.compile(r"^(\d+|cpu|mps|disk)$")


def parse_max_memory(spec: str | Mapping[Any, Any] | None, *, name: str = "--max-memory"):
    """Turn ``0=70GiB,1=70GiB,cpu=100GiB`` (or a mapping of the same) into accelerate's form.

    Args:
        spec: The budgets: a comma-separated ``DEVICE=SIZE`` list or a mapping; ``None`` for none.
        name: The option or plan key, for error messages.

    Returns:
        ``{0: "70GiB", 1: "70GiB", "cpu": "100GiB"}`` (GPU indices as integers), or ``None``.

    Raises:
        TracktaleError: For a device that is not a GPU index, ``cpu``, ``mps`` or ``disk``, a size
            without one of the units KB, MB, GB, KiB, MiB, GiB, or an empty list.
    """
    if spec is None:
        return None
    if isinstance(spec, str):
        pairs = []
        for part in spec.split(","):
            device, sep, size = part.partition("=")
            if not sep:
                raise TracktaleError(f"{name}: {part.strip()!r} is not DEVICE=SIZE (0=70GiB)")
            pairs.append((device.strip(), size.strip()))
    elif isinstance(spec, Mapping):
        pairs = [(str(device).strip(), str(size).strip()) for device, size in spec.items()]
    else:
        raise TracktaleError(f"{name}: expected DEVICE=SIZE pairs, got {type(spec).__name__}")
    budgets: dict[int | str, str] = {}
    for device, size in pairs:
        if not _DEVICE.match(device):
            raise TracktaleError(
                f"{name}: device {device!r} is not a GPU index (0, 1, ...), cpu, mps or disk"
            )
        if not _SIZE.match(size):
            raise TracktaleError(
                f"{name}: size {size!r} for device {device} is not a size like 70GiB or 500MB"
            )
        budgets[int(device) if device.isdigit() else device] = size.replace(" ", "")
    if not budgets:
        raise TracktaleError(f"{name}: no device budgets given")
    return budgets


def format_max_memory(budgets: Mapping[int | str, str] | None) -> str | None:
    """The ``--max-memory`` text of parsed budgets (what the results record)."""
    if not budgets:
        return None
    return ",".join(f"{device}={size}" for device, size in budgets.items())
