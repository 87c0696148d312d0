"""A command-line choice among a registry's names, read when the command runs.

``click.Choice(paradigm_names())`` freezes the names when the command is declared, that is when
its module is imported: a paradigm registered later (an installed plug-in's entry point that
loads after the command line, a lab's registration in its own process, the toy paradigm of the
tests) would be refused by ``--paradigm`` although the registry has it. :class:`LiveChoice`
asks the registry each time it lists or checks its names, so the help lists the names
registered then, and an unknown name is refused with click's one-line error naming them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import click


class LiveChoice(click.Choice[str]):
    """A :class:`click.Choice` whose names come from ``names()`` whenever they are needed.

    Args:
        names: Gives the names offered now (a registry's, e.g. ``paradigm_names``), in the
            order the help lists them.
    """

    def __init__(self, names: Callable[[], Iterable[str]]) -> None:
        self._names = names
        super().__init__((), case_sensitive=True)

    @property
    def choices(self) -> tuple[str, ...]:
        """The names offered now."""
        return tuple(self._names())

    @choices.setter
    def choices(self, fixed: Iterable[str]) -> None:
        # click.Choice's own constructor assigns its choices; ours are always read anew.
        del fixed

    def __repr__(self) -> str:
        return f"LiveChoice({list(self.choices)})"
