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
from typing import TYPE_CHECKING, Any

from tracktale.errors import TracktaleError
from tracktale.settings import data_dir

if TYPE_CHECKING:
    import pandas as pd
    from rich.console import Console

    from tracktale.analysis.report.build import Report
    from tracktale.experiment.study.config import StudyConfig
    from tracktale.stimulus_set import StimulusSet

SIMULATED_DATABASE = "simulated-study.sqlite"
MAIN_JOB_ITEMS_PER_CELL = 3
"""Items per design cell and template the main job scores by default: the first three of each
of the model protocol's 33 (cell, template) groups, 99 of its 1,650 items, so the main job
with the default model stays within a few minutes on two CPU cores."""


@dataclass(frozen=True)
class RunOptions:
    """What the main job does.

    Attributes:
        seed: Seed of the stimuli and of the simulated participants.
        participants: Simulated participants (the source paper had 48).
        models: Further model ids or local paths to score on the model protocol.
        revisions: Revisions to score for every model of ``models`` (``None``: the default
            branch).
        out: The run's folder (default: ``$TRACKTALE_DATA/run-s<seed>``).
        default_model: Also score the embedded default model (SmolLM2-135M-Instruct,
            :mod:`tracktale.models.gguf`), first.
        items_per_cell: Score every model on the first this many items of each design cell and
            template of the model protocol; ``None``: all 1,650 items.
    """

    seed: int = 1
    participants: int = 48
    models: Sequence[str] = ()
    revisions: Sequence[str] | None = None
    out: Path | None = None
    default_model: bool = True
    items_per_cell: int | None = MAIN_JOB_ITEMS_PER_CELL

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
    tables: dict[str, pd.DataFrame] = field(default_factory=dict)
    """The report's tables by name, as it wrote them (what :func:`print_summary` shows)."""


def run_main_job(options: RunOptions, say: Callable[[str], None] = print) -> RunSummary:
    """Generate stimuli, simulate the human study, score models, write the report.

    Args:
        options: What to run.
        say: Receives one line per step.

    Returns:
        Where everything went.
    """
    summary = RunSummary()
    if options.default_model:
        from tracktale.models.gguf import default_gguf_path

        default_gguf_path()  # a missing package is one line now, not after the simulation
    options.folder.mkdir(parents=True, exist_ok=True)
    summary.stimulus_dirs = generate_stimuli(options.seed, say)
    summary.database_url, summary.completed_participants = _simulate_participants(
        options, summary.stimulus_dirs["human"], say
    )
    if options.models or options.default_model:
        summary.results_dir = _score_models(options, summary.stimulus_dirs["model"], say)
    report = _write_report(options, summary, say)
    summary.report_path = report.html_path
    summary.report_tables = report.html_path.parent / "tables"
    summary.tables = _summary_tables(report.tables(), summary.report_tables)
    return summary


def _summary_tables(shown: dict[str, pd.DataFrame], folder: Path) -> dict[str, pd.DataFrame]:
    """The report's tables as :func:`print_summary` reads them.

    The page shows the people-and-models table as a grid of percentages; the summary prints
    it from the long table the report wrote beside it (one row per cell, with ``n``).
    """
    import pandas as pd

    tables = dict(shown)
    joint = folder / "humans_and_models.csv"
    if joint.is_file():
        tables["humans_and_models"] = pd.read_csv(joint)
    complexity = folder / "complexity_permutation.csv"  # how the complexity test was made
    if "complexity_permutation" not in tables and complexity.is_file():
        tables["complexity_permutation"] = pd.read_csv(complexity)
    return tables


def generate_stimuli(seed: int, say: Callable[[str], None]) -> dict[str, Path]:
    """The default study's human- and model-protocol sets, by protocol.

    The default study's paradigm is :data:`~tracktale.stimuli.registry.DEFAULT_PARADIGM` (the
    narrative paper's), as the study file it simulates defaults to.
    """
    from tracktale.stimuli.registry import DEFAULT_PARADIGM, get_paradigm
    from tracktale.stimulus_set import write_stimulus_set

    paradigm = get_paradigm(DEFAULT_PARADIGM)
    folders = {}
    for protocol in ("human", "model"):
        stimulus_set = paradigm.generate_set(protocol, seed)
        target = data_dir() / "stimuli" / f"{DEFAULT_PARADIGM}-{protocol}-s{seed}"
        write_stimulus_set(stimulus_set, target, overwrite=True)
        say(f"stimuli: {len(stimulus_set)} {protocol}-protocol items in {target}")
        folders[protocol] = target
    return folders


def _simulate_participants(
    options: RunOptions, human_dir: Path, say: Callable[[str], None]
) -> tuple[str, int]:
    from tracktale.experiment.study.config import load_study

    config = dataclasses.replace(load_study(None), stimuli=str(human_dir))
    database = options.folder / SIMULATED_DATABASE
    return simulate_people(config, database, options.participants, options.seed, say)


def simulate_people(
    config: StudyConfig,
    database: Path,
    participants: int,
    seed: int,
    say: Callable[[str], None],
) -> tuple[str, int]:
    """Run simulated people through the study server on a fresh SQLite file.

    Returns:
        The database's URL and the number of completed participants.

    Raises:
        TracktaleError: If a simulated participant failed, or the file holds real sessions.
    """
    from tracktale.experiment.simulation.run import simulate_study
    from tracktale.experiment.study.config import EXPORT_SALT_ENV

    _remove_simulated_database(database)
    url = f"sqlite:///{database}"
    config = dataclasses.replace(config, database=url)
    say(f"study: {participants} simulated participants through the study server")
    # The same seed must give the same people, trials and report: one participant at a time
    # (with several at once, which list each gets depends on who arrives first) and a salt
    # fixed by the seed (a fresh one per database would reshuffle every session). Simulated
    # people have no Prolific ids for a salt to protect.
    with (
        _without_environment("DATABASE_URL"),
        _with_environment(EXPORT_SALT_ENV, f"tracktale-run-simulated-s{seed}"),
    ):
        report = simulate_study(config, n=participants, seed=seed, concurrency=1)
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


@contextlib.contextmanager
def _with_environment(name: str, value: str) -> Iterator[None]:
    saved = os.environ.get(name)
    os.environ[name] = value
    try:
        yield
    finally:
        if saved is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = saved


def main_job_items(model_set: StimulusSet, per_cell: int | None) -> frozenset[str] | None:
    """The first ``per_cell`` items of each (cell, template) group, in set order; ``None``: all."""
    if per_cell is None:
        return None
    counts: dict[tuple[object, object], int] = {}
    chosen = []
    for item in model_set:
        group = (item.condition.get("cell"), item.condition.get("template"))
        if counts.get(group, 0) < per_cell:
            counts[group] = counts.get(group, 0) + 1
            chosen.append(item.item_id)
    return frozenset(chosen)


def _score_models(options: RunOptions, model_dir: Path, say: Callable[[str], None]) -> Path:
    """Both tasks (and the template manipulation check) on the model protocol, resumable."""
    from tracktale.stimulus_set import read_stimulus_set

    model_set = read_stimulus_set(model_dir)
    item_ids = main_job_items(model_set, options.items_per_cell)
    return score_chosen_items(
        options, model_set, item_ids, "per cell and template; --full-protocol for all", say
    )


def score_chosen_items(
    options: Any,
    stimulus_set: StimulusSet,
    item_ids: frozenset[str] | None,
    chosen: str,
    say: Callable[[str], None],
) -> Path:
    """Score a job's models on ``item_ids`` (all when ``None``) into ``options.folder/results``.

    Args:
        options: The job's options (``folder``, ``default_model``, ``models``, ``revisions``,
            ``items_per_cell``).
        stimulus_set: The model protocol.
        item_ids: The items chosen, or ``None`` for all.
        chosen: How they were chosen, after "the first N", for the progress line.
        say: Where progress lines go.
    """
    scope = (
        f"all {len(stimulus_set)} items"
        if item_ids is None
        else f"{len(item_ids)} of {len(stimulus_set)} items (the first {options.items_per_cell} "
        f"{chosen})"
    )
    results: Path = options.folder / "results"
    runs = ModelRuns(options.default_model, options.models, options.revisions)
    score_models(stimulus_set, runs, results, item_ids, scope, say)
    return results


@dataclass(frozen=True)
class ModelRuns:
    """Which models a job scores.

    Attributes:
        default_model: The embedded default model first.
        models: Further model ids or local paths.
        revisions: Revisions of every model of ``models`` (``None``: the default branch).
    """

    default_model: bool = True
    models: Sequence[str] = ()
    revisions: Sequence[str] | None = None


def score_models(
    model_set: StimulusSet,
    runs: ModelRuns,
    results: Path,
    item_ids: frozenset[str] | None,
    scope: str,
    say: Callable[[str], None],
) -> None:
    """Every task of the set's paradigm, for each model of ``runs``, into ``results`` (resumable).

    Args:
        model_set: The items.
        runs: The models.
        results: The results store.
        item_ids: The items scored (``None``: all).
        scope: Which items, in words (for ``say``).
        say: Receives one line per step.
    """
    from tracktale.models.gguf import DEFAULT_MODEL_ID, canonical_model_id
    from tracktale.models.reporting import scoring_reporter
    from tracktale.models.revisions import parse_revisions
    from tracktale.models.runner import ScoringJob, run_scoring
    from tracktale.models.tasks import task_names

    revisions = parse_revisions(list(runs.revisions) if runs.revisions else None)
    jobs: list[tuple[str, list[str | None]]] = (
        [(DEFAULT_MODEL_ID, [None])] if runs.default_model else []
    )
    jobs += [
        (model_id, revisions)
        for model_id in dict.fromkeys(map(canonical_model_id, runs.models))
        if not (runs.default_model and model_id == DEFAULT_MODEL_ID)
    ]
    for model_id, model_revisions in jobs:
        say(f"models: scoring {model_id} ({len(model_revisions)} revision(s)) on {scope}")
        job = ScoringJob(
            stimuli=model_set,
            model_id=model_id,
            out=results,
            revisions=model_revisions,
            tasks=task_names(),
            item_ids=item_ids,
            chunk_size=16,  # the progress bar and its ETA move every 16 items
        )
        with scoring_reporter() as reporter:
            summary = run_scoring(job, reporter)
        scored = sum(summary.scored.values())
        say(
            f"models: {model_id}: {scored} rows scored, {sum(summary.already.values())} "
            "already in the store"
        )


def _write_report(options: RunOptions, summary: RunSummary, say: Callable[[str], None]) -> Report:
    from tracktale.analysis.report.build import build_report

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


def print_summary(summary: RunSummary, console: Console | None = None) -> None:
    """Print the report's inference, the paper's GLMs and where everything went.

    Args:
        summary: The run.
        console: Where to print [default: standard output, the terminal's width].
    """
    from rich.console import Console

    console = console or Console(highlight=False, soft_wrap=True)
    for name, title in (
        ("inference_model1", "the report's inference: accuracy ~ complexity x task"),
        ("inference_model2", "the report's inference, with focus position (recency)"),
        ("glm_complexity", "the paper's GLM: accuracy ~ complexity x task"),
        ("glm_recency", "the paper's GLM, with focus position (recency)"),
    ):
        coefficients = summary.tables.get(name)
        if coefficients is not None:
            complexity = summary.tables.get("complexity_permutation")
            how = None if complexity is None or complexity.empty else complexity["method"].iloc[0]
            _print_coefficients(console, name, title, coefficients, how)
    joint = summary.tables.get("humans_and_models")
    if joint is not None:
        _print_side_by_side(console, joint)
    console.print(
        f"{summary.completed_participants} simulated participants in {summary.database_url}"
    )
    if summary.results_dir:
        console.print(f"model results: {summary.results_dir}")
    console.print(f"report: {summary.report_path}")


def _print_coefficients(
    console: Console, name: str, title: str, rows: pd.DataFrame, complexity: str | None = None
) -> None:
    """One model's coefficient table (as the report wrote it), then its item-level test.

    ``complexity``: how the report's complexity test was made (its table's ``method``).
    """
    import pandas as pd

    from tracktale.terminal import compact_table

    method = rows["method"].iloc[0] if "method" in rows.columns and len(rows) else "glm"
    columns = ("term", "b", "SE", "z", "p", "OR [95% CI]")
    table = compact_table(f"Human data, {title} [{method}]", columns, text_columns=("term",))
    for row in rows.to_dict("records"):
        number = {
            key: float("nan") if pd.isna(row.get(key)) else float(row[key])
            for key in ("b", "se", "z", "p", "odds_ratio", "or_low", "or_high")
        }
        table.add_row(
            str(row["label"]),
            f"{number['b']:.2f}",
            f"{number['se']:.2f}",
            f"{number['z']:.2f}",
            f"{number['p']:.3g}",
            f"{number['odds_ratio']:.2f} [{number['or_low']:.2f}, {number['or_high']:.2f}]",
        )
    console.print(table)
    if "p_permutation" in rows.columns:
        permuted = rows["p_permutation"].dropna()
        if len(permuted):
            console.print(_permutation_line(name, float(permuted.iloc[0]), complexity))


def _permutation_line(table: str, p: float, complexity: str | None = None) -> str:
    """The item-level test printed under its model's table (complexity: as ``complexity``)."""
    if table == "inference_model1":
        how = complexity or "item permutation across all items"
        return f"complexity by {how} (the report's complexity test): p = {p:.3g}"
    return (
        f"recency by item permutation within complexity levels (the report's recency test): "
        f"p = {p:.3g}"
    )


def _print_side_by_side(console: Console, rows: pd.DataFrame) -> None:
    """Accuracy by complexity of the participants and each model (n in brackets).

    One table per task; each participant group or model on a line of its own with its
    templates under it, so that a long model name never squeezes the numbers (80 columns).
    """
    import pandas as pd

    from tracktale.terminal import compact_table

    levels = sorted({int(level) for level in rows["complexity"]})
    lines: dict[str, dict[str, dict[str, dict[int, str]]]] = {}
    for row in rows.to_dict("records"):
        template = "" if pd.isna(row["template"]) else str(row["template"])
        cell = f"{float(row['accuracy']):.0%} ({int(row['n'])})"
        who = lines.setdefault(str(row["task"]), {}).setdefault(str(row["label"]), {})
        who.setdefault(template, {})[int(row["complexity"])] = cell
    for task, by_who in lines.items():
        table = compact_table(
            f"{task.capitalize()} task: accuracy by complexity (n), participants after exclusions",
            ("who, template", *(f"C{level}" for level in levels)),
            text_columns=("who, template",),
        )
        for label, templates in by_who.items():
            if list(templates) == [""]:
                table.add_row(label, *(templates[""].get(level, "") for level in levels))
                continue
            table.add_row(label, *("" for _ in levels), style="bold")
            for template, cells in templates.items():
                table.add_row(f"  {template}", *(cells.get(level, "") for level in levels))
        console.print(table)
