"""``tracktale stimuli maze-distractors | maze-apply | maze-check``: A-maze distractors.

These commands join the ``stimuli`` group here, in the application layer, because choosing and
checking distractors loads a model (the models stage), which the stimuli stage may not import;
the work itself is :mod:`tracktale.stimuli.maze`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.table import Table

from tracktale.scorer import Scorer
from tracktale.stimuli.cli import _with_progress, stimuli
from tracktale.stimuli.maze import (
    MazeSettings,
    apply_distractors,
    check_distractors,
    item_distractors,
    maze_language,
    read_distractors_csv,
    read_word_list,
    write_distractors_csv,
)
from tracktale.stimulus_set import read_stimulus_set, write_stimulus_set

console = Console(highlight=False, soft_wrap=True)

_DEFAULTS = MazeSettings()


def _model_options(function: Callable[..., Any]) -> Callable[..., Any]:
    """The options that load a scoring model (as ``tracktale models score`` names them)."""
    options = [
        click.option(
            "--backend", default="hf", show_default=True, help="The model backend (hf, ...)."
        ),
        click.option(
            "--dtype",
            type=click.Choice(["float32", "bfloat16", "float16"]),
            default="float32",
            show_default=True,
            help="Compute dtype; half precision is for GPUs.",
        ),
        click.option("--device", default="auto", show_default=True, help="auto, cpu, cuda:N."),
        click.option(
            "--batch-size", type=click.IntRange(min=1), default=None, help="Requests per batch."
        ),
        click.option(
            "--min-delta",
            type=float,
            default=_DEFAULTS.min_delta,
            show_default=True,
            help="Bits by which a distractor's surprisal must exceed the word's "
            "(Boyce et al. 2020).",
        ),
    ]
    for option in reversed(options):
        function = option(function)
    return function


def _load(model: str, backend: str, dtype: str, device: str, batch_size: int | None) -> Scorer:
    """Load ``model`` (``id`` or ``id@revision``) as a scorer."""
    from tracktale.models.registry import load_scorer

    model_id, _, revision = model.partition("@")
    sizing = {} if batch_size is None else {"batch_size": batch_size}
    return load_scorer(
        model_id,
        backend=backend,
        revision=revision or None,
        dtype=dtype,
        device=device,
        notify=lambda line: console.print(line),
        **sizing,
    )


@stimuli.command("maze-distractors")
@click.argument("set_dir", type=click.Path(file_okay=False, path_type=Path))
@click.option("--model", required=True, help="The scoring model: hub id or folder[@revision].")
@click.option(
    "--out",
    "out_file",
    required=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="The CSV to write, for review.",
)
@_model_options
@click.option(
    "--min-abs",
    type=float,
    default=_DEFAULTS.min_abs,
    show_default=True,
    help="Bits a distractor's surprisal must reach (Boyce et al. 2020).",
)
@click.option(
    "--candidates",
    "n_candidates",
    type=click.IntRange(min=1),
    default=_DEFAULTS.n_candidates,
    show_default=True,
    help="Candidates scored per word.",
)
@click.option(
    "--length-tolerance",
    type=click.IntRange(min=0),
    default=_DEFAULTS.length_tolerance,
    show_default=True,
    help="Letters by which a candidate's length may differ from the word's.",
)
@click.option(
    "--zipf-tolerance",
    type=click.FloatRange(min=0),
    default=_DEFAULTS.zipf_tolerance,
    show_default=True,
    help="Zipf frequency by which a candidate may differ from the word (wider only to fill).",
)
@click.option(
    "--vocabulary",
    type=click.IntRange(min=100),
    default=_DEFAULTS.vocabulary,
    show_default=True,
    help="How many of wordfreq's most frequent words (of the set's language) are candidates.",
)
@click.option(
    "--exclude",
    "exclude_file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=None,
    help="Words never to use as distractors, one a line (# comments).",
)
def maze_distractors(
    set_dir: Path,
    model: str,
    out_file: Path,
    backend: str,
    dtype: str,
    device: str,
    batch_size: int | None,
    min_delta: float,
    min_abs: float,
    n_candidates: int,
    length_tolerance: int,
    zipf_tolerance: float,
    vocabulary: int,
    exclude_file: Path | None,
) -> None:
    """Choose an A-maze distractor for every word of a set's texts, into a CSV to review."""
    stimulus_set = read_stimulus_set(set_dir)
    settings = MazeSettings(
        length_tolerance=length_tolerance,
        zipf_tolerance=zipf_tolerance,
        n_candidates=n_candidates,
        min_delta=min_delta,
        min_abs=min_abs,
        vocabulary=vocabulary,
        exclude=frozenset() if exclude_file is None else read_word_list(exclude_file),
        language=maze_language(stimulus_set),
    )
    scorer = _load(model, backend, dtype, device, batch_size)
    rows = [
        row
        for item in _with_progress(stimulus_set.items, len(stimulus_set), "choosing distractors")
        for row in item_distractors(item, scorer, settings)
    ]
    count = write_distractors_csv(rows, out_file)
    judged = [row for row in rows if row.met_threshold is not None]
    met = sum(bool(row.met_threshold) for row in judged)
    console.print(
        f"wrote {count} words of {len(stimulus_set)} items to {out_file}; "
        f"{met} of {len(judged)} distractors reach the threshold "
        f"(max({min_abs:g}, word + {min_delta:g}) bits)"
    )


@stimuli.command("maze-apply")
@click.argument("set_dir", type=click.Path(file_okay=False, path_type=Path))
@click.argument("csv_file", type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--out",
    "out_dir",
    required=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="Folder to write the new stimulus set into.",
)
@click.option("--overwrite", is_flag=True, help="Replace a stimulus set already in --out.")
def maze_apply(set_dir: Path, csv_file: Path, out_dir: Path, overwrite: bool) -> None:
    """Write a new set: SET's items with the (reviewed) distractors of CSV_FILE."""
    stimulus_set = read_stimulus_set(set_dir)
    distractors = read_distractors_csv(csv_file, stimulus_set)
    digest = hashlib.sha256(csv_file.read_bytes()).hexdigest()
    new_set = apply_distractors(stimulus_set, distractors, digest)
    write_stimulus_set(new_set, out_dir, overwrite=overwrite)
    console.print(
        f"wrote {out_dir} ({len(new_set)} items with meta.distractors, sha256 "
        f"{new_set.sha256[:12]})"
    )


@stimuli.command("maze-check")
@click.argument("set_dir", type=click.Path(file_okay=False, path_type=Path))
@click.option(
    "--model",
    "models",
    required=True,
    multiple=True,
    help="A model to check with (repeat for several): hub id or folder[@revision].",
)
@_model_options
def maze_check(
    set_dir: Path,
    models: tuple[str, ...],
    backend: str,
    dtype: str,
    device: str,
    batch_size: int | None,
    min_delta: float,
) -> None:
    """Count, per model, the distractors not clearly worse than their words."""
    stimulus_set = read_stimulus_set(set_dir)
    table = Table(title=f"{set_dir}: distractors less than {min_delta:g} bits above the word")
    for column in ("model", "words", "not clearly worse", "share", "median Δ (bits)"):
        table.add_column(column, justify="left" if column == "model" else "right")
    for model in models:
        scorer = _load(model, backend, dtype, device, batch_size)
        row = check_distractors(stimulus_set, scorer, min_delta)
        share = row.n_not_worse / row.n_words if row.n_words else 0.0
        median = "" if row.median_delta is None else f"{row.median_delta:.2f}"
        table.add_row(row.model, str(row.n_words), str(row.n_not_worse), f"{share:.1%}", median)
        close = getattr(scorer, "close", None)
        if close is not None:
            close()
    console.print(table)
