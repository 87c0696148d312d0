"""Re-check a stimulus set on disk: file integrity, every line, every item's simulation."""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from tracktale.errors import TracktaleError
from tracktale.stimuli.maze import as_generated, distractor_problems
from tracktale.stimuli.registry import get_paradigm
from tracktale.stimulus_set import ITEMS_FILE, read_lines


@dataclass(frozen=True)
class Problem:
    """One failure, located by line and item id where known."""

    message: str
    line_number: int | None = None
    item_id: str | None = None

    def __str__(self) -> str:
        where = []
        if self.item_id:
            where.append(f"item {self.item_id}")
        if self.line_number is not None:
            where.append(f"line {self.line_number}")
        return f"{' '.join(where)}: {self.message}" if where else self.message


@dataclass
class ValidationReport:
    """What :func:`validate_stimulus_set` found."""

    directory: Path
    n_items: int = 0
    problems: list[Problem] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """Whether the set passed every check."""
        return not self.problems


def validate_stimulus_set(directory: str | os.PathLike[str]) -> ValidationReport:
    """Re-check every item of a set and report each failure by item id.

    Checks: the manifest; each line parses, is canonical, and its id matches its content; the
    file's sha256 and item count match the manifest; item ids are unique; each item passes its
    paradigm's simulator and re-rendering; the counts per design cell match the manifest.

    Raises:
        TracktaleError: If ``directory`` is not a stimulus set at all.
    """
    manifest, lines, actual_sha = read_lines(directory)
    report = ValidationReport(Path(directory), n_items=len(lines))
    if actual_sha != manifest.items_sha256:
        report.problems.append(
            Problem(f"{ITEMS_FILE} does not match the sha256 in the manifest (corrupted or edited)")
        )
    if len(lines) != manifest.n_items:
        report.problems.append(Problem(f"{len(lines)} items, the manifest says {manifest.n_items}"))
    try:
        paradigm = get_paradigm(manifest.paradigm)
    except TracktaleError as error:
        report.problems.append(Problem(str(error)))
        return report
    seen: set[str] = set()
    cells: Counter[str] = Counter()
    for line in lines:
        if line.item is None:
            report.problems.append(Problem(line.problem or "", line.line_number, line.item_id))
            continue
        if line.item.item_id in seen:
            report.problems.append(
                Problem("appears more than once", line.line_number, line.item.item_id)
            )
        seen.add(line.item.item_id)
        cells[paradigm.design_cell(line.item)] += 1
        # Maze distractors (tracktale stimuli maze-apply) are checked apart from what the
        # paradigm generated.
        report.problems.extend(
            Problem(message, line.line_number, line.item.item_id)
            for message in [
                *paradigm.verify(as_generated(line.item)),
                *distractor_problems(line.item),
            ]
        )
    if all(line.item for line in lines) and dict(cells) != dict(manifest.counts):
        report.problems.append(Problem("the counts per design cell differ from the manifest"))
    return report
