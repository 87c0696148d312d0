"""``tracktale models``: score models on stimulus sets, list revisions, compact results.

A thin layer over :mod:`tracktale.models.runner`; torch, transformers and pandas are imported
inside the commands only.
"""

from __future__ import annotations

from pathlib import Path

import click
from rich.console import Console
from rich.table import Table
from tracktale.models.revisions import PRESET_HELP
from tracktale.models.tokens import BOS_POLICIES, PROMPT_FORMATS

from tracktale.errors import TracktaleError
from tracktale.scorer import TASKS
from tracktale.settings import data_dir

console = Console(highlight=False, soft_wrap=True)
err_console = Console(stderr=True, highlight=False, soft_wrap=True)

TASK_CHOICES = {**{task: (task,) for task in TASKS}, "both": ("implicit", "explicit"), "all": TASKS}


@click.group()
def models() -> None:
    """Score language models on stimulus sets (log-probabilities, generation, checkpoints)."""


@models.command()
@click.option(
    "--stimuli",
    "stimuli_dir",
    required=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="The stimulus set's folder (from 'tracktale stimuli generate').",
)
@click.option(
    "--model", "model_id", required=True, help="Hugging Face hub id or a local model folder."
)
@click.option("--revision", default=None, help="One revision (branch, tag, commit, step1000).")
@click.option(
    "--revisions",
    default=None,
    metavar="LIST",
    help="Comma-separated revisions and presets, each loaded once: "
    + "; ".join(f"{name}: {text}" for name, text in PRESET_HELP.items())
    + ".",
)
@click.option(
    "--task",
    type=click.Choice(list(TASK_CHOICES)),
    default="implicit",
    show_default=True,
    help="implicit (log-probability comparison), explicit (generation), sequence (text "
    "log-probability and surprisal), both (implicit and explicit) or all.",
)
@click.option(
    "--out",
    type=click.Path(path_type=Path),
    default=None,
    help="Results store folder; a rerun scores only what is missing [default: "
    "$TRACKTALE_DATA/results].",
)
@click.option(
    "--calibrate/--no-calibrate",
    default=False,
    help="Also score the implicit continuations after the neutral prefix (the model's prior).",
)
@click.option(
    "--dtype",
    type=click.Choice(["float32", "bfloat16", "float16"]),
    default="float32",
    show_default=True,
    help="Compute dtype; half precision is for GPUs.",
)
@click.option("--device", default="auto", show_default=True, help="auto, cpu, cuda or cuda:N.")
@click.option(
    "--batch-size",
    type=click.IntRange(min=1),
    default=16,
    show_default=True,
    help="Items per forward pass; halved automatically when memory runs out.",
)
@click.option(
    "--bos",
    type=click.Choice(BOS_POLICIES),
    default="auto",
    show_default=True,
    help="Prepend a BOS token: auto (when the tokenizer does), add, none.",
)
@click.option(
    "--prompt-format",
    type=click.Choice(PROMPT_FORMATS),
    default="auto",
    show_default=True,
    help="Explicit task: auto (chat template when the tokenizer has one), plain or chat.",
)
@click.option(
    "--max-new-tokens",
    type=click.IntRange(min=1),
    default=None,
    help="Explicit task's generation budget [default: the paradigm's].",
)
@click.option(
    "--word-surprisal/--no-word-surprisal",
    default=True,
    show_default=True,
    help="Sequence task: also store surprisal summed per word.",
)
@click.option(
    "--roles",
    default="main",
    show_default=True,
    metavar="LIST",
    help="Item roles to score (comma-separated: main, filler, practice).",
)
@click.option("--limit", type=click.IntRange(min=1), default=None, help="Score only N items.")
@click.option(
    "--rescore", is_flag=True, help="Score everything again, replacing stored rows of this model."
)
@click.option("--backend", default="hf", show_default=True, help="Scoring backend.")
def score(**options) -> None:
    """Score a model (and its revisions) on a stimulus set into a results store.

    Resumable: rows already in the store are skipped, and a revision with nothing missing is not
    even loaded.
    """
    from tracktale.models.revisions import parse_revisions
    from tracktale.models.runner import ScoringJob, run_scoring
    from tracktale.models.tasks import TaskOptions

    if options["revision"] and options["revisions"]:
        raise click.UsageError("give --revision or --revisions, not both")
    revisions = parse_revisions(options["revisions"] or options["revision"])
    out = options["out"] or data_dir() / "results"
    job = ScoringJob(
        stimuli=options["stimuli_dir"],
        model_id=options["model_id"],
        out=out,
        revisions=revisions,
        tasks=TASK_CHOICES[options["task"]],
        options=TaskOptions(
            calibrate=options["calibrate"],
            prompt_format=options["prompt_format"],
            max_new_tokens=options["max_new_tokens"],
            word_surprisal=options["word_surprisal"],
        ),
        backend=options["backend"],
        dtype=options["dtype"],
        device=options["device"],
        batch_size=options["batch_size"],
        bos=options["bos"],
        roles=tuple(part.strip() for part in options["roles"].split(",") if part.strip()),
        limit=options["limit"],
        rescore=options["rescore"],
    )
    _quiet_libraries()
    if err_console.is_terminal:
        with _ProgressReporter() as reporter:
            summary = run_scoring(job, reporter)
    else:
        summary = run_scoring(job, _LogReporter())
    _print_summary(job, summary)


def _quiet_libraries() -> None:
    import logging

    logging.getLogger("transformers").setLevel(logging.ERROR)
    logging.getLogger("huggingface_hub").setLevel(logging.ERROR)


class _ProgressReporter:
    """A rich progress bar with items/s and ETA; notices go to stderr above it."""

    def __enter__(self):
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        self.progress = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[rate]}"),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=err_console,
            transient=True,
        )
        self.progress.start()
        self.task = self.progress.add_task("planning", total=None, rate="")
        return self

    def __exit__(self, *exc_info) -> None:
        self.progress.stop()

    def start(self, total: int) -> None:
        self.progress.update(self.task, total=total)

    def describe(self, text: str) -> None:
        self.progress.update(self.task, description=text)

    def advance(self, count: int) -> None:
        self.progress.advance(self.task, count)
        speed = self.progress.tasks[0].speed
        self.progress.update(self.task, rate=f"{speed:.1f} items/s" if speed else "")

    def notice(self, message: str) -> None:
        self.progress.console.print(f"tracktale: {message}")


class _LogReporter:
    """Progress as plain lines on stderr, one per written chunk (for logs and batch jobs)."""

    def __init__(self) -> None:
        import time

        self.clock = time.monotonic
        self.total, self.done, self.what, self.started = 0, 0, "", self.clock()

    def start(self, total: int) -> None:
        self.total, self.started = total, self.clock()

    def describe(self, text: str) -> None:
        self.what = text

    def advance(self, count: int) -> None:
        self.done += count
        rate = self.done / max(1e-9, self.clock() - self.started)
        eta = (self.total - self.done) / rate if rate else 0
        err_console.print(
            f"tracktale: {self.what}: {self.done}/{self.total} rows, {rate:.1f} items/s, "
            f"ETA {eta:.0f} s"
        )

    def notice(self, message: str) -> None:
        err_console.print(f"tracktale: {message}")


def _print_summary(job, summary) -> None:
    from tracktale.models.store import read_results

    table = Table(title=f"{job.model_id} -> {job.out}")
    for column in ("revision", "task", "scored now", "stored", "accuracy"):
        table.add_column(column, justify="left" if column in ("revision", "task") else "right")
    if not Path(job.out).exists():
        console.print("nothing scored")
        return
    frame = read_results(job.out, columns=("correct",))
    frame = frame[frame["model_id"] == job.model_id]
    for (revision, task), scored in summary.scored.items():
        group = frame[(frame["revision"] == revision) & (frame["task"] == task)]
        accuracy = group["correct"].mean() if group["correct"].notna().any() else None
        table.add_row(
            revision or "(default)",
            task,
            str(scored),
            str(len(group)),
            "" if accuracy is None or task == "sequence" else f"{accuracy:.1%}",
        )
    console.print(table)


@models.command("list-revisions")
@click.argument("model_id", metavar="MODEL")
def list_revisions_command(model_id: str) -> None:
    """List a hub model's revisions (branches and tags), in training order.

    Uses the local Hugging Face cache when the hub cannot be reached or HF_HUB_OFFLINE=1.
    """
    from tracktale.models.hub import list_revisions

    revisions, source = list_revisions(model_id)
    err_console.print(f"{len(revisions)} revisions of {model_id} (from the {source})")
    for revision in revisions:
        console.print(revision)


@models.command()
@click.argument("results", type=click.Path(path_type=Path))
def compact(results: Path) -> None:
    """Merge a results store's shards into one, keeping each row once."""
    from tracktale.models.store import compact as compact_store

    if not results.exists():
        raise TracktaleError(f"no results at {results}")
    rows, merged = compact_store(results)
    console.print(f"{results}: {rows} rows in one shard (merged {merged} shards)")
