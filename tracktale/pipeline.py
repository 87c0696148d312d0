"""The main job: from stimuli to the paper's statistics and figures in one command.

``tracktale run`` generates the default study's stimulus sets, runs simulated participants
through the real study server (so the whole human path is exercised without people), scores
the models asked for on the same items, and writes the analysis report. Every step is a call
into a stage's library; nothing here re-implements a stage.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from tracktale.errors import TracktaleError
from tracktale.settings import data_dir

SIMULATED_DATABASE = "simulated-study.sqlite"


@dataclass(frozen=True)
class RunOptions:
    """What the main job does.

    Attributes:
        seed: Seed of the stimuli and of the simulated participants.
        participants: Simulated participants (the source paper had 48).
        models: Model ids or local paths to score on the model protocol (none: humans only).
        revisions: Revisions to score for every model (``None``: the default branch).
        out: The run's folder (default: ``$TRACKTALE_DATA/run-s<seed>``).
    """

    seed: int = 1
    participants: int = 48
    models: Sequence[str] = ()
    revisions: Sequence[str] | None = None
    out: Path | None = None

    @property
    def folder(self) -> Path:
        """Where the run writes its database, results and report."""
        return self.out or data_dir() / f"run-s{self.seed}"


@dataclass
class RunSummary:
    """What the main job produced."""

    stimulus_dirs: dict[str, Path] = field(default_factory=dict)
    database_url: str = ""
    completed_participants: int = 0
    results_dir: Path | None = None
    report_path: Path | None = None
    report_tables: Path | None = None


def run_main_job(options: RunOptions, say: Callable[[str], None] = print) -> RunSummary:
    """Generate stimuli, simulate the human study, score models, write the report.

    Args:
        options: What to run.
        say: Receives one line per step.

    Returns:
        Where everything went.
    """
    summary = RunSummary()
    options.folder.mkdir(parents=True, exist_ok=True)
    summary.stimulus_dirs = generate_stimuli(options.seed, say)
    summary.database_url, summary.completed_participants = _simulate_participants(
        options, summary.stimulus_dirs["human"], say
    )
    if options.models:
        summary.results_dir = _score_models(options, summary.stimulus_dirs["model"], say)
    report = _write_report(options, summary, say)
    summary.report_path = report.html_path
    summary.report_tables = report.html_path.parent / "tables"
    return summary


def generate_stimuli(seed: int, say: Callable[[str], None]) -> dict[str, Path]:
    """The default study's human- and model-protocol narrative sets, by protocol."""
    from tracktale.stimuli.registry import get_paradigm
    from tracktale.stimulus_set import write_stimulus_set

    narrative = get_paradigm("narrative")
    folders = {}
    for protocol in ("human", "model"):
        stimulus_set = narrative.generate_set(protocol, seed)
        target = data_dir() / "stimuli" / f"narrative-{protocol}-s{seed}"
        write_stimulus_set(stimulus_set, target, overwrite=True)
        say(f"stimuli: {len(stimulus_set)} {protocol}-protocol items in {target}")
        folders[protocol] = target
    return folders


def _simulate_participants(
    options: RunOptions, human_dir: Path, say: Callable[[str], None]
) -> tuple[str, int]:
    from tracktale.experiment.config import load_study
    from tracktale.experiment.simulate import simulate_study

    database = options.folder / SIMULATED_DATABASE
    _remove_simulated_database(database)
    url = f"sqlite:///{database}"
    config = dataclasses.replace(load_study(None), database=url, stimuli=str(human_dir))
    say(f"study: {options.participants} simulated participants through the study server")
    with _without_environment("DATABASE_URL"):
        report = simulate_study(config, n=options.participants, seed=options.seed)
    if report.errors:
        raise TracktaleError(f"simulated participants failed: {report.errors[0]}")
    say(
        f"study: {report.completed} completed, {report.trials_acknowledged} trials stored "
        f"in {database}"
    )
    return url, report.completed


def _remove_simulated_database(database: Path) -> None:
    """Start each run from an empty database, but never delete one that anyone real is in."""
    if not database.exists():
        return
    import sqlite3

    try:
        with contextlib.closing(sqlite3.connect(f"file:{database}?mode=ro", uri=True)) as db:
            sources = {
                row[0]
                for table in ("trials", "participants")
                for row in db.execute(f"select distinct source from {table}")
            }
    except sqlite3.Error as error:
        raise TracktaleError(
            f"{database} is not a simulated study database ({error}); move it before running again"
        ) from None
    if sources - {"simulated"}:
        raise TracktaleError(f"{database} holds real sessions; move it before running again")
    for suffix in ("", "-wal", "-shm"):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(f"{database}{suffix}")


@contextlib.contextmanager
def _without_environment(name: str) -> Iterator[None]:
    # $DATABASE_URL wins over a study's own database: the simulation must never write into
    # the user's real study database.
    saved = os.environ.pop(name, None)
    try:
        yield
    finally:
        if saved is not None:
            os.environ[name] = saved


def _score_models(options: RunOptions, model_dir: Path, say: Callable[[str], None]) -> Path:
    """Both tasks (and the template manipulation check) on the model protocol, resumable."""
    from tracktale.models.revisions import parse_revisions
    from tracktale.models.runner import ScoringJob, run_scoring

    results = options.folder / "results"
    revisions = parse_revisions(list(options.revisions) if options.revisions else None)
    for model_id in options.models:
        say(f"models: scoring {model_id} ({len(revisions)} revision(s)) on {model_dir}")
        job = ScoringJob(
            stimuli=model_dir,
            model_id=model_id,
            out=results,
            revisions=revisions,
            tasks=("implicit", "explicit", "sequence"),
        )
        summary = run_scoring(job)
        scored = sum(summary.scored.values())
        say(
            f"models: {model_id}: {scored} rows scored, {sum(summary.already.values())} "
            "already in the store"
        )
    return results


def _write_report(options: RunOptions, summary: RunSummary, say: Callable[[str], None]):
    from tracktale.analysis.report import build_report

    stimuli = [summary.stimulus_dirs["human"]]
    if summary.results_dir is not None:
        stimuli.append(summary.stimulus_dirs["model"])
    report = build_report(
        stimuli=stimuli,
        out=options.folder / "report",
        human=summary.database_url,
        models=summary.results_dir,
    )
    say(f"report: {report.html_path}")
    return report


def print_summary(summary: RunSummary) -> None:
    """Print the report's inference, the paper's GLMs and where everything went."""
    import csv

    from rich.console import Console
    from rich.table import Table

    console = Console(highlight=False, soft_wrap=True)
    for name, title in (
        ("inference_model1", "the report's inference: accuracy ~ complexity x task"),
        ("inference_model2", "the report's inference, with focus position (recency)"),
        ("glm_complexity", "the paper's GLM: accuracy ~ complexity x task"),
        ("glm_recency", "the paper's GLM, with focus position (recency)"),
    ):
        path = summary.report_tables / f"{name}.csv" if summary.report_tables else None
        if path is None or not path.is_file():
            continue
        with open(path, newline="", encoding="utf-8") as handle:
            rows = list(csv.DictReader(handle))
        method = rows[0].get("method", "glm") if rows else "glm"
        table = Table(title=f"Human data, {title} [{method}]", title_justify="left")
        for column in ("term", "b", "SE", "z", "p", "OR [95% CI]"):
            table.add_column(column, justify="left" if column == "term" else "right")
        for row in rows:
            number = {
                key: float(row[key] or "nan")
                for key in ("b", "se", "z", "p", "odds_ratio", "or_low", "or_high")
            }
            table.add_row(
                row["label"],
                f"{number['b']:.2f}",
                f"{number['se']:.2f}",
                f"{number['z']:.2f}",
                f"{number['p']:.3g}",
                f"{number['odds_ratio']:.2f} [{number['or_low']:.2f}, {number['or_high']:.2f}]",
            )
        console.print(table)
    console.print(
        f"{summary.completed_participants} simulated participants in {summary.database_url}"
    )
    if summary.results_dir:
        console.print(f"model results: {summary.results_dir}")
    console.print(f"report: {summary.report_path}")
