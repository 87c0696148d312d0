"""The paradigm registry: name -> paradigm, imported only when asked for."""

from __future__ import annotations

from tracktale.registry import Registry
from tracktale.stimuli.paradigm import Paradigm

PARADIGMS: Registry[Paradigm] = Registry("paradigm")
"""Paradigm name -> its stimulus paradigm (a lazy ``module:PARADIGM`` reference)."""
for _name in ("narrative", "boxes", "arithmetic", "items"):
    PARADIGMS.add(_name, f"tracktale.stimuli.{_name}:PARADIGM")


def paradigm_names() -> tuple[str, ...]:
    """The registered paradigm names, in registration order."""
    return PARADIGMS.names()


def get_paradigm(name: str) -> Paradigm:
    """The paradigm registered as ``name``.

    Raises:
        TracktaleError: If no paradigm has that name.
    """
    return PARADIGMS.get(name)
