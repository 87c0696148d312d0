"""Options shared by the ``tracktale analysis`` commands."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

EXISTING = click.Path(exists=True, path_type=Path)
F = TypeVar("F", bound=Callable[..., Any])


human_set_option = click.option(
    "--stimuli",
    "stimuli_dirs",
    type=EXISTING,
    multiple=True,
    help="Human-protocol stimulus set (default: the narrative human protocol, seed 1).",
)


def permutations_option(default: int, help_text: str) -> Any:
    """``--permutations B``: the report and ``power`` differ only in default and help.

    ``--recency-permutations`` is an alias: the option's name before complexity was tested by
    permutation too.
    """
    return click.option(
        "--permutations",
        "--recency-permutations",
        "permutations",
        type=click.IntRange(min=0),
        default=default,
        show_default=True,
        metavar="B",
        help=help_text,
    )


def paradigm_options() -> Callable[[F], F]:
    """Every paradigm's own report options as ``--<paradigm>-<field>`` flags.

    Each paradigm's plug-in declares its options as a typed model
    (:mod:`tracktale.analysis.report.options`); the flags, their choices, defaults and help are
    taken from its fields, so that this command line names no paradigm. The command receives
    them as ``<paradigm>__<field>`` keyword arguments
    (:func:`tracktale.analysis.report.options.collect` makes them the paradigms' models).
    """
    from tracktale.analysis.report.options import paradigm_option_specs

    def decorate(command: F) -> F:
        # click lists options in the order of their decorators, outermost first.
        for spec in reversed(paradigm_option_specs()):
            command = click.option(
                spec.flag,
                spec.dest,
                type=click.Choice(spec.choices),
                default=spec.default,
                show_default=True,
                help=spec.help,
            )(command)
        return command

    return decorate


def stimulus_sets(paths: tuple[Path, ...]) -> list[Any]:
    """The stimulus sets in ``paths``, or the narrative human protocol when none is given."""
    from tracktale.analysis.data.tidy import human_stimulus_set, load_stimulus_sets

    return load_stimulus_sets(paths) if paths else [human_stimulus_set()]
