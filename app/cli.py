"""The ``tracktale`` command line: a thin layer over the library.

Stage command groups are imported only when used, so ``tracktale stimuli ...`` never imports
torch or Flask. Errors reach the user as one line on stderr and a non-zero exit status:
``1`` for a problem with input or environment, ``2`` for a command-line usage error.
"""

from __future__ import annotations

import pkgutil
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import click

import tracktale
from tracktale.app.pipeline import MAIN_JOB_ITEMS_PER_CELL
from tracktale.app.study_job import STUDY_PARTICIPANTS
from tracktale.errors import InputProblems, TracktaleError

STAGE_GROUPS = {
    # The stimuli group with the A-maze commands, which load models (tracktale.app.maze).
    "stimuli": "tracktale.app.maze:stimuli",
    "analysis": "tracktale.analysis.cli:analysis",
    "experiment": "tracktale.experiment.cli:experiment",
    "ethics": "tracktale.experiment.ethics_cli:ethics",
    "models": "tracktale.models.cli:models",
}
"""Command group name -> ``module:attribute`` of its click group."""


OPTIONAL_EXTRAS = {
    "torch": "models",
    "transformers": "models",
    "tokenizers": "models",
    "accelerate": "models",
    "huggingface_hub": "models",
    "httpx": "models",
    "gguf": "models",
    "flask": "study",
    "sqlalchemy": "study",
    "psycopg": "study",
    "gunicorn": "study",
    "numpy": "analysis",
    "pandas": "analysis",
    "pyarrow": "analysis",
    "scipy": "analysis",
    "statsmodels": "analysis",
    "matplotlib": "analysis",
    "submitit": "cluster",
    "wuggy": "wuggy",
    "psychopy": "lab",
    "nltk": "brown",
    "openpyxl": "xlsx",
    "wordfreq": "analysis",
}
"""Third-party module -> the extra that installs it (for the missing-dependency message)."""


class LazyGroup(click.Group):
    """A click group whose subgroups are imported on first use."""

    def __init__(self, *args: Any, lazy: dict[str, str] | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.lazy = dict(lazy or {})

    def list_commands(self, ctx: click.Context) -> list[str]:
        """Eager and lazy command names, sorted."""
        return sorted({*super().list_commands(ctx), *self.lazy})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        """Import a lazy subgroup when it is asked for."""
        if cmd_name in self.lazy:
            group: click.Command = pkgutil.resolve_name(self.lazy[cmd_name])
            return group
        return super().get_command(ctx, cmd_name)


@click.group(
    cls=LazyGroup,
    lazy=STAGE_GROUPS,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
)
@click.version_option(tracktale.__version__, prog_name="tracktale")
def cli() -> None:
    """Run the same state-tracking experiment on people and on language models.

    Generate verified stimuli, run the browser study, score models on the same items and
    analyse both. Every command has --help.
    """


@cli.command()
@click.option(
    "--seed",
    type=int,
    default=1,
    show_default=True,
    help="Seed of the stimuli and of the simulated participants.",
)
@click.option(
    "--study",
    "study_dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Run the job on a study folder (tracktale init) instead: import its items, simulate "
    "people, score the models, write its report into STUDY/output/run-sSEED.",
)
@click.option(
    "--participants",
    type=click.IntRange(min=1),
    default=None,
    help="Simulated participants run through the study server [default: 48, as the paper; "
    f"{STUDY_PARTICIPANTS} with --study].",
)
@click.option(
    "--model",
    "models",
    multiple=True,
    metavar="ID_OR_PATH",
    help="Another model to score on the model protocol (repeatable): a hub id (needs the "
    "network or a filled Hugging Face cache), a local folder or a GGUF file.",
)
@click.option(
    "--revisions",
    default=None,
    metavar="LIST",
    help="Revisions to score for every --model (comma-separated or a preset name).",
)
@click.option(
    "--out",
    "out_dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="The run's folder [default: $TRACKTALE_DATA/run-sSEED; with --study, "
    "STUDY/output/run-sSEED].",
)
@click.option(
    "--no-model",
    is_flag=True,
    help="Do not score the embedded default model (SmolLM2-135M-Instruct); --model still adds "
    "others.",
)
@click.option(
    "--model-items",
    type=click.IntRange(min=1),
    default=None,
    metavar="N",
    help="Score the models on the first N items of each design cell and template of the "
    f"model protocol (33 groups of 50 items) [default: {MAIN_JOB_ITEMS_PER_CELL}]; with "
    "--study, on the first N test items of each cell and every filler [default: all].",
)
@click.option(
    "--full-protocol",
    is_flag=True,
    help="Score the models on all 1,650 items of the model protocol (hours on a CPU).",
)
@click.option(
    "--serve",
    is_flag=True,
    help="Instead: generate the stimuli (with --study: import the items) and serve the real "
    "study on SQLite, printing the participant link and the admin link.",
)
@click.option(
    "--port", type=int, default=5000, show_default=True, help="Port of the study (--serve)."
)
@click.pass_context
def run(
    ctx: click.Context,
    seed: int,
    study_dir: Path | None,
    participants: int | None,
    models: tuple[str, ...],
    revisions: str | None,
    out_dir: Path | None,
    no_model: bool,
    model_items: int | None,
    full_protocol: bool,
    serve: bool,
    port: int,
) -> None:
    """Run the main job on the embedded defaults, from stimuli to the report.

    Generates the default study's stimulus sets, runs simulated participants through the real
    study server, scores the embedded default model (and the --model models) on the same items,
    fits the paper's statistics and writes every figure and table with one HTML report. With
    --study, the same for your own study folder (tracktale init writes one).
    """
    from tracktale.app.pipeline import RunOptions, generate_stimuli, print_summary, run_main_job

    if study_dir is not None:
        if full_protocol:
            raise click.UsageError("--full-protocol is the paper's protocol; --study scores all")
        _run_study(
            ctx,
            study_dir,
            seed,
            participants,
            models,
            revisions,
            out_dir,
            no_model,
            model_items,
            serve,
            port,
        )
        return
    if serve:
        from tracktale.experiment.cli import serve as serve_study

        generate_stimuli(seed, say=lambda line: click.echo(f"==> {line}"))
        ctx.invoke(serve_study, study_file=None, host="127.0.0.1", port=port, workers=0)
        return
    options = RunOptions(
        seed=seed,
        participants=participants or 48,
        models=models,
        revisions=revisions.split(",") if revisions else None,
        out=out_dir,
        default_model=not no_model,
        items_per_cell=None if full_protocol else model_items or MAIN_JOB_ITEMS_PER_CELL,
    )
    print_summary(run_main_job(options, say=lambda line: click.echo(f"==> {line}")))


def _run_study(
    ctx: click.Context,
    study_dir: Path,
    seed: int,
    participants: int | None,
    models: tuple[str, ...],
    revisions: str | None,
    out_dir: Path | None,
    no_model: bool,
    model_items: int | None,
    serve: bool,
    port: int,
) -> None:
    """``run --study``: the whole job on a study folder, or (``--serve``) its real study."""
    from tracktale.app.study_job import StudyRunOptions, print_study_summary, run_study_job

    if serve:
        from tracktale.experiment.cli import serve as serve_study

        ctx.invoke(serve_study, study_file=study_dir, host="127.0.0.1", port=port, workers=0)
        return
    options = StudyRunOptions(
        study=study_dir,
        seed=seed,
        participants=participants or STUDY_PARTICIPANTS,
        models=models,
        revisions=revisions.split(",") if revisions else None,
        default_model=not no_model,
        items_per_cell=model_items,
        out=out_dir,
    )
    print_study_summary(run_study_job(options, say=lambda line: click.echo(f"==> {line}")))


@cli.command()
@click.argument("study_dir", type=click.Path(file_okay=False, path_type=Path))
def init(study_dir: Path) -> None:
    """Write an example study into STUDY_DIR (a new or empty folder).

    The folder gets items.csv (a 2 x 2 design: 8 items, 4 fillers, 2 practice items),
    design.yaml (what each column means, the factors, tasks, timing, texts; a comment on every
    key), ethics/ (consent, information and debrief templates, online and lab) and a README.md
    with the next commands. Edit the table and the design, then: tracktale run --study
    STUDY_DIR.
    """
    from tracktale.experiment.study.folder import init_study

    written = init_study(study_dir)
    click.echo(f"wrote {len(written)} files into {study_dir}:")
    for path in written:
        click.echo(f"  {path.relative_to(study_dir)}")
    click.echo(f"next: tracktale run --study {study_dir} --no-model")


def main(argv: Sequence[str] | None = None) -> None:
    """Entry point: run the CLI and turn errors into one line and an exit status."""
    try:
        status = cli.main(
            args=list(argv) if argv is not None else None,
            prog_name="tracktale",
            standalone_mode=False,
        )
    except click.UsageError as error:
        where = f"{error.ctx.command_path}: " if error.ctx else ""
        _fail(f"{where}{error.format_message()}", 2)
    except click.Abort:
        _fail("aborted", 130)
    except TracktaleError as error:
        for line in error.problems if isinstance(error, InputProblems) else ():
            click.echo(line, err=True)
        _fail(str(error), 1)
    except OSError as error:
        _fail(f"{error.strerror or error}: {error.filename}" if error.filename else str(error), 1)
    except KeyboardInterrupt:
        _fail("interrupted", 130)
    except ModuleNotFoundError as error:
        module = (error.name or "").partition(".")[0]
        if module not in OPTIONAL_EXTRAS:
            raise
        _fail(f"this command needs {module}: pip install 'tracktale[{OPTIONAL_EXTRAS[module]}]'", 1)
    sys.exit(status if isinstance(status, int) else 0)


def _fail(message: str, status: int) -> None:
    click.echo(f"tracktale: error: {' '.join(message.split())}", err=True)
    sys.exit(status)
