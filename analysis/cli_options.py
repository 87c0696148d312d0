"""Options shared by the ``tracktale analysis`` commands."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

EXISTING = click.Path(exists=True, path_type=Path)


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


def stimulus_sets(paths: tuple[Path, ...]) -> list[Any]:
    """The stimulus sets in ``paths``, or the narrative human protocol when none is given."""
    from tracktale.analysis.data.tidy import human_stimulus_set, load_stimulus_sets

    return load_stimulus_sets(paths) if paths else [human_stimulus_set()]
