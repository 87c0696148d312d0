"""Checkpoint revisions: named presets and the ``--revisions`` syntax.

Pythia publishes 154 training checkpoints per model as branches ``step0``, ``step1``,
``step2``, ``step4`` ... ``step512`` and then every 1000 steps from ``step1000`` to
``step143000`` (the final model, also ``main``). ``pythia`` names all of them; ``pythia-log`` a
log-spaced subset (every doubling of the step, plus the final one) for cheap scaling curves.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from tracktale.errors import TracktaleError

_PYTHIA_STEPS = (0, *(2**k for k in range(10)), *range(1000, 143001, 1000))
_PYTHIA_LOG_STEPS = (0, *(2**k for k in range(10)), *(1000 * 2**k for k in range(8)), 143000)

PRESETS: dict[str, tuple[str, ...]] = {
    "pythia": tuple(f"step{step}" for step in _PYTHIA_STEPS),
    "pythia-log": tuple(f"step{step}" for step in _PYTHIA_LOG_STEPS),
}
"""Preset name -> revisions, in training order."""

PRESET_HELP = {
    "pythia": "Pythia's 154 published checkpoints (step0, 1, 2, 4, ..., 512, 1000..143000)",
    "pythia-log": "a log-spaced subset of Pythia's checkpoints (every doubling, plus step143000)",
}


def parse_revisions(spec: str | Iterable[str] | None) -> list[str | None]:
    """Expand a ``--revisions`` value into revisions, in order and without repeats.

    Args:
        spec: Comma-separated revisions and preset names (``step0,step1000``, ``pythia-log``,
            ``main,pythia-log``), a list of them, or ``None`` for the default branch only.

    Returns:
        The revisions; ``[None]`` (the default branch) for an empty spec.

    Raises:
        TracktaleError: For an empty entry or a revision with characters git refuses.
    """
    if spec is None:
        return [None]
    parts = spec.split(",") if isinstance(spec, str) else list(spec)
    revisions: list[str | None] = []
    for raw in parts:
        part = raw.strip()
        if not part:
            raise TracktaleError(f"--revisions: empty entry in {spec!r}")
        for revision in PRESETS.get(part, (part,)):
            _check_revision(revision)
            if revision not in revisions:
                revisions.append(revision)
    return revisions or [None]


def _check_revision(revision: str) -> None:
    if re.search(r"[\s~^:?*\[\\]|\.\.|^[-/]|/$", revision):
        raise TracktaleError(f"--revisions: {revision!r} is not a valid revision name")


def step_of(revision: str | None) -> int | None:
    """The training step a revision names (``step1000`` and ``stage1-step140000-tokens588B``).

    Returns:
        The step, or ``None`` for a revision without one (``main``, a commit, ``None``).
    """
    if revision is None:
        return None
    match = re.search(r"(?:^|[-_])step(\d+)(?:$|[-_])", revision)
    return int(match.group(1)) if match else None


def revision_sort_key(revision: str) -> tuple:
    """Order revisions: without a step first (``main``), then by stage, step and name.

    ``step2`` comes before ``step10``, ``stage1-...`` before ``stage2-...``.
    """
    stage = re.match(r"stage(\d+)", revision)
    step = step_of(revision)
    return (
        step is not None,
        int(stage.group(1)) if stage else 0,
        step if step is not None else 0,
        revision,
    )
