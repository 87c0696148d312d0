"""Per-participant, per-task accuracy and the source paper's exclusion rule.

"Participants with accuracy below 50% on a given task were excluded from that task's
analysis": accuracy is computed over main trials (timeouts count as incorrect), separately for
the explicit and the implicit task; fillers' comprehension accuracy is reported alongside.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from tracktale.trial import TrialRecord

EXCLUSION_THRESHOLD = 0.5
"""Accuracy below this on a task excludes a participant from that task's analysis."""
RULED_TASKS = ("explicit", "implicit")
"""The tasks the exclusion rule applies to."""


def below_threshold(accuracy: Any, threshold: float = EXCLUSION_THRESHOLD) -> Any:
    """The paper's rule: accuracy strictly below ``threshold`` excludes from the task.

    The one statement of the rule, for the study's admin pages and exports here and for the
    analysis (:func:`tracktale.analysis.data.exclusions.apply_exclusions`): a float gives a bool, a
    pandas Series of accuracies a boolean Series.
    """
    return accuracy < threshold


@dataclass(frozen=True)
class TaskAccuracy:
    """One participant's accuracy on one task.

    Attributes:
        participant_id: The participant.
        task: ``explicit``, ``implicit`` or ``comprehension``.
        n_trials: Trials counted (main trials; fillers for ``comprehension``).
        n_correct: Of which correct.
        n_timeouts: Of which timed out.
        excluded: Below the threshold on a task the rule applies to.
    """

    participant_id: str
    task: str
    n_trials: int
    n_correct: int
    n_timeouts: int
    excluded: bool

    @property
    def accuracy(self) -> float | None:
        """Share correct (``None`` without trials)."""
        return self.n_correct / self.n_trials if self.n_trials else None


def task_accuracy(
    records: Iterable[TrialRecord], threshold: float = EXCLUSION_THRESHOLD
) -> list[TaskAccuracy]:
    """Accuracy per participant and task, with the exclusion flag.

    Args:
        records: Trial records (practice trials are ignored).
        threshold: The exclusion threshold.

    Returns:
        One row per participant and task that has trials, sorted by participant and task.
    """
    tallies: dict[tuple[str, str], list[int]] = {}
    for record in records:
        if record.role == "practice":
            continue
        tally = tallies.setdefault((record.participant_id, record.task), [0, 0, 0])
        tally[0] += 1
        tally[1] += record.correct
        tally[2] += record.timed_out
    rows = []
    for (participant_id, task), (n, correct, timeouts) in sorted(tallies.items()):
        excluded = task in RULED_TASKS and bool(below_threshold(correct / n, threshold))
        rows.append(TaskAccuracy(participant_id, task, n, correct, timeouts, excluded))
    return rows
