"""``tracktale run --study STUDY_DIR``: the whole job on a researcher's study folder.

The folder (:mod:`tracktale.experiment.study.folder`) holds the item table and its design. The
job imports them (a content-hashed set), runs simulated people through the real study server,
scores the default model (and any other) on the same items, and writes the report: accuracy by
the declared factors, people and models side by side, and the mixed model
(:mod:`tracktale.analysis.items`). Every step is a stage's library call, as in
:mod:`tracktale.app.pipeline`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from tracktale.app.pipeline import SIMULATED_DATABASE, RunSummary

if TYPE_CHECKING:
    import pandas as pd
    from rich.console import Console

    from tracktale.stimulus_set import StimulusSet

STUDY_PARTICIPANTS = 24
"""Simulated people of ``run --study`` by default: six per list of a 2 x 2 Latin square."""


@dataclass(frozen=True)
class StudyRunOptions:
    """What ``run --study`` does.

    Attributes:
        study: The study folder.
        seed: Seed of the simulated participants.
        participants: Simulated participants.
        models: Further model ids or local paths to score.
        revisions: Revisions of every model of ``models``.
        default_model: Also score the embedded default model, first.
        items_per_cell: Score the models on the first this many test items of each design
            cell (and every filler and practice item); ``None``: every item.
        out: The run's folder (default: ``<study>/output/run-s<seed>``).
    """

    study: Path
    seed: int = 1
    participants: int = STUDY_PARTICIPANTS
    models: Sequence[str] = ()
    revisions: Sequence[str] | None = None
    default_model: bool = True
    items_per_cell: int | None = None
    out: Path | None = None

    @property
    def folder(self) -> Path:
        """Where the run writes its database, results and report."""
        from tracktale.experiment.study.folder import OUTPUT

        return self.out or self.study / OUTPUT / f"run-s{self.seed}"


def run_study_job(options: StudyRunOptions, say: Callable[[str], None] = print) -> RunSummary:
    """Import the folder's items, simulate the study, score models, write the report.

    Raises:
        InputProblems: Every problem of the item table or the design.
        TracktaleError: For a folder that is not a study, or a step that fails.
    """
    from tracktale.app.pipeline import simulate_people
    from tracktale.experiment.study.folder import check_study_folder, import_study, study_config
    from tracktale.stimulus_set import read_stimulus_set

    check_study_folder(options.study)
    if options.default_model:
        from tracktale.models.gguf import default_gguf_path

        default_gguf_path()  # a missing package is one line now, not after the simulation
    summary = RunSummary()
    set_dir = import_study(options.study)
    stimulus_set = read_stimulus_set(set_dir)
    say(f"stimuli: {len(stimulus_set)} items imported into {set_dir}")
    summary.stimulus_dirs = {"human": set_dir, "model": set_dir}
    options.folder.mkdir(parents=True, exist_ok=True)
    database = options.folder / SIMULATED_DATABASE
    config = study_config(options.study, set_dir, database=f"sqlite:///{database}")
    summary.database_url, summary.completed_participants = simulate_people(
        config, database, options.participants, options.seed, say
    )
    if options.models or options.default_model:
        summary.results_dir = _score(options, stimulus_set, say)
    _write_report(options, summary, say)
    return summary


def study_model_items(stimulus_set: StimulusSet, per_cell: int | None) -> frozenset[str] | None:
    """The first ``per_cell`` test items of each design cell, and every other item."""
    if per_cell is None:
        return None
    counts: dict[tuple[tuple[str, object], ...], int] = {}
    chosen = []
    for item in stimulus_set:
        if item.role != "main":
            chosen.append(item.item_id)
            continue
        cell = tuple(sorted(item.condition.items()))
        if counts.get(cell, 0) < per_cell:
            counts[cell] = counts.get(cell, 0) + 1
            chosen.append(item.item_id)
    return frozenset(chosen)


def _score(options: StudyRunOptions, stimulus_set: StimulusSet, say: Callable[[str], None]) -> Path:
    from tracktale.app.pipeline import score_chosen_items

    item_ids = study_model_items(stimulus_set, options.items_per_cell)
    return score_chosen_items(options, stimulus_set, item_ids, "test items per cell", say)


def _write_report(
    options: StudyRunOptions, summary: RunSummary, say: Callable[[str], None]
) -> None:
    from tracktale.analysis.report.build import build_report

    report = build_report(
        stimuli=[summary.stimulus_dirs["human"]],
        out=options.folder / "report",
        human=summary.database_url,
        models=summary.results_dir,
    )
    for warning in report.warnings:
        say(f"warning: {warning}")
    say(f"report: {report.html_path}")
    summary.report_path = report.html_path
    summary.report_tables = report.html_path.parent / "tables"
    summary.tables = report.tables()


def print_study_summary(summary: RunSummary) -> None:
    """Print accuracy by cell (people and models) and the mixed model, then where things went."""
    from rich.console import Console

    console = Console(highlight=False, soft_wrap=True)
    cells = summary.tables.get("items_cells")
    if cells is not None:
        shown = cells.drop(columns=["interval", "participants"], errors="ignore").copy()
        shown["accuracy"] = [
            f"{a:.0%} [{low:.0%}, {high:.0%}]"
            for a, low, high in zip(
                shown.pop("accuracy"), shown.pop("ci_low"), shown.pop("ci_high"), strict=True
            )
        ]
        _print_table(console, shown, "Accuracy by cell: people and models [95% interval]")
    mixed = summary.tables.get("items_mixed_model")
    if mixed is not None:
        _print_table(console, mixed, "Mixed model of the people's accuracy (log-odds)")
    console.print(
        f"{summary.completed_participants} simulated participants in {summary.database_url}"
    )
    if summary.results_dir:
        console.print(f"model results: {summary.results_dir}")
    console.print(f"report: {summary.report_path}")


def _print_table(console: Console, table: pd.DataFrame, title: str) -> None:
    from rich.table import Table

    shown = Table(title=title, title_justify="left")
    for column in table.columns:
        shown.add_column(str(column))
    for row in table.itertuples(index=False):
        shown.add_row(*(_cell(value) for value in row))
    console.print(shown)


def _cell(value: object) -> str:
    if isinstance(value, float):
        return "" if value != value else f"{value:.3g}"
    return str(value)
