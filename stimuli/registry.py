"""The paradigm registry: name -> paradigm, imported only when asked for."""

from __future__ import annotations

import pkgutil

from tracktale.errors import TracktaleError
from tracktale.stimuli.paradigm import Paradigm

_PARADIGMS = {
    "narrative": "tracktale.stimuli.narrative:PARADIGM",
    "boxes": "tracktale.stimuli.boxes:PARADIGM",
    "arithmetic": "tracktale.stimuli.arithmetic:PARADIGM",
    "items": "tracktale.stimuli.items:PARADIGM",
}


def paradigm_names() -> tuple[str, ...]:
    """The registered paradigm names, in registration order."""
    return tuple(_PARADIGMS)


def get_paradigm(name: str) -> Paradigm:
    """The paradigm registered as ``name``.

    Raises:
        TracktaleError: If no paradigm has that name.
    """
    if name not in _PARADIGMS:
        raise TracktaleError(f"unknown paradigm {name!r} (choose from {', '.join(_PARADIGMS)})")
    return pkgutil.resolve_name(_PARADIGMS[name])
