"""Exclusion rules for human data, applied in a stated order and counted for the report.

Order: (1) session rules on the participant record (incomplete session, attentiveness or AI
assistance not confirmed) remove a participant from every task; (2) an optional comprehension
threshold on the filler questions does the same; (3) only ``main`` trials enter the analyses
(fillers and practice are counted, then dropped); (4) optionally, timed-out trials are dropped
(by default they stay, scored incorrect, as the study records them), and trials the study
server flagged for their timing (:data:`tracktale.trial.TIMING_FLAGS`; by default they stay,
as the paper had no such flags); (5) the paper's rule: a participant whose accuracy on a task
is below ``min_accuracy`` is excluded from that task only; or, with ``accuracy_rule="chance"``
(ours), below that task's own chance level: the mean over the participant's trials of each
trial's ``chance`` column (the probability of a right answer by guessing, which the paradigm
puts on its rows: 1/2 for a forced choice of two).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Literal

from tracktale.errors import TracktaleError
from tracktale.experiment.export.summary import EXCLUSION_THRESHOLD, RULED_TASKS, below_threshold
from tracktale.trial import TIMING_FLAGS

if TYPE_CHECKING:
    import pandas as pd

AccuracyRule = Literal["paper", "chance"]
ACCURACY_RULES: tuple[AccuracyRule, ...] = ("paper", "chance")


@dataclass(frozen=True)
class ExclusionRules:
    """Which participants and trials leave the analysis.

    Attributes:
        min_accuracy: A participant with accuracy strictly below this on a task is excluded
            from that task (the paper: 0.5).
        require_completed: Exclude sessions whose status is not ``completed``.
        require_attentive: Exclude participants who did not confirm attentiveness.
        require_no_ai: Exclude participants who did not confirm working without AI assistance.
        min_comprehension: Exclude participants below this accuracy on the filler questions
            (``None``: fillers are not used to exclude anyone).
        drop_timeouts: Drop timed-out trials instead of scoring them incorrect.
        exclude_flagged: Drop trials the server flagged for their timing (a flag of
            :data:`~tracktale.trial.TIMING_FLAGS`; ``several_answers`` is a verdict on the
            answer, scored incorrect, and stays).
        sources: Keep only these sources (``online``, ``lab``, ``simulated``); ``None``: all.
        accuracy_rule: ``paper`` (below ``min_accuracy`` on a task) or ``chance`` (below the
            task's chance level over the participant's own trials, from the ``chance``
            column; ``min_accuracy`` is then not used).
    """

    min_accuracy: float = EXCLUSION_THRESHOLD
    require_completed: bool = True
    require_attentive: bool = True
    require_no_ai: bool = True
    min_comprehension: float | None = None
    drop_timeouts: bool = False
    exclude_flagged: bool = False
    sources: tuple[str, ...] | None = None
    accuracy_rule: AccuracyRule = "paper"

    def describe(self) -> list[str]:
        """The rules as sentences, for the report."""
        lines = []
        if self.sources:
            lines.append(f"only sessions from: {', '.join(self.sources)}")
        if self.require_completed:
            lines.append("sessions that were not completed are excluded from every task")
        if self.require_attentive:
            lines.append("participants who did not confirm attentiveness are excluded")
        if self.require_no_ai:
            lines.append("participants who did not confirm working without AI are excluded")
        if self.min_comprehension is not None:
            lines.append(f"filler (comprehension) accuracy below {self.min_comprehension:.0%}")
        lines.append("filler and practice trials are not analysed")
        lines.append(
            "timed-out trials are dropped"
            if self.drop_timeouts
            else "timed-out trials count as incorrect"
        )
        if self.exclude_flagged:
            lines.append(
                "trials the server flagged for their timing are dropped ("
                + ", ".join(flag.replace("_", " ") for flag in TIMING_FLAGS)
                + ")"
            )
        if self.accuracy_rule == "chance":
            lines.append(
                "accuracy below the task's chance level (the mean over the participant's trials "
                "of 1 / the answers possible) excludes from that task"
            )
        else:
            lines.append(
                f"accuracy below {self.min_accuracy:.0%} on a task excludes from that task"
            )
        return lines

    def to_dict(self) -> dict:
        """Plain data for the report."""
        return asdict(self)


@dataclass(frozen=True)
class ExclusionResult:
    """What the rules left, and why the rest went.

    Attributes:
        trials: The analysed human trials (main role, both tasks, after every rule).
        log: One row per exclusion: ``participant``, ``task`` (``all`` for session rules),
            ``rule`` and ``detail``.
        summary: Per task: participants before, excluded by each rule, and after.
        notes: Rules that could not be applied, and why.
    """

    trials: pd.DataFrame
    log: pd.DataFrame
    summary: pd.DataFrame
    notes: tuple[str, ...]


def apply_exclusions(
    trials: pd.DataFrame,
    participants: pd.DataFrame | None,
    rules: ExclusionRules | None = None,
    tasks: tuple[str, ...] = RULED_TASKS,
) -> ExclusionResult:
    """Apply ``rules`` to human trials from the tidy table.

    Args:
        trials: Human rows of the tidy trial table (``agent`` is the participant id).
        participants: The participants' session records, or ``None``.
        rules: The rules (defaults: the paper's).
        tasks: The analysed tasks.

    Returns:
        The kept trials, the exclusion log and the per-task summary.

    Raises:
        TracktaleError: When no human trials are given.
    """
    import pandas as pd

    rules = rules or ExclusionRules()
    if trials.empty:
        raise TracktaleError("no human trials to apply exclusions to")
    log: list[dict] = []
    notes: list[str] = []
    everyone = sorted(trials["agent"].unique())
    if rules.sources:
        off = trials.loc[~trials["source"].isin(rules.sources), "agent"].unique()
        log += [_entry(p, "all", "source", "source not selected") for p in sorted(off)]
    if participants is None:
        notes.append("no participant records were given: session rules were not applied")
    else:
        log += _session_exclusions(everyone, participants, rules)
    gone = {e["participant"] for e in log}
    if rules.min_comprehension is not None:
        log += _comprehension_exclusions(trials, gone, rules.min_comprehension)
        gone = {e["participant"] for e in log}
    kept = trials[~trials["agent"].isin(gone) & (trials["role"] == "main")]
    kept = kept[kept["task"].isin(tasks)]
    if rules.drop_timeouts and "timed_out" in kept.columns:
        kept = kept[kept["timed_out"].fillna(0) != 1]
    flagged: dict[str, int] | None = None
    if rules.exclude_flagged:
        kept, flagged = _drop_flagged(kept, notes)
    low = _low_accuracy(kept, rules)
    for (participant, task), (value, threshold) in low.items():
        detail = f"accuracy {value:.1%} on the {task} task"
        if rules.accuracy_rule == "chance":
            detail += f", chance {threshold:.1%}"
        log.append(_entry(participant, task, "low_accuracy", detail))
    low_pairs = set(low)
    keep_mask = [(p, t) not in low_pairs for p, t in zip(kept["agent"], kept["task"], strict=True)]
    # A Series, not a list: an empty list would select no *columns* (and lose "task").
    kept = kept[pd.Series(keep_mask, index=kept.index, dtype=bool)]
    log_table = pd.DataFrame(log, columns=["participant", "task", "rule", "detail"])
    summary = _summary(trials, kept, log_table, tasks, flagged)
    return ExclusionResult(kept.reset_index(drop=True), log_table, summary, tuple(notes))


def _low_accuracy(
    kept: pd.DataFrame, rules: ExclusionRules
) -> dict[tuple[str, str], tuple[float, float]]:
    """(participant, task) -> (accuracy, threshold) for each pair the accuracy rule excludes."""
    groups = kept.groupby(["agent", "task"])
    accuracy = groups["correct"].mean()
    if rules.accuracy_rule == "chance":
        if "chance" not in kept.columns or kept["chance"].isna().any():
            raise TracktaleError(
                "the chance accuracy rule needs every trial's chance level (a `chance` column), "
                "which this paradigm's rows do not give: use the paper's rule"
            )
        threshold = groups["chance"].mean()
        low = accuracy < threshold
    else:
        threshold = accuracy * 0 + rules.min_accuracy
        low = below_threshold(accuracy, rules.min_accuracy)
    return {
        (p, t): (float(accuracy[(p, t)]), float(threshold[(p, t)])) for p, t in accuracy[low].index
    }


def _entry(participant: str, task: str, rule: str, detail: str) -> dict:
    return {"participant": participant, "task": task, "rule": rule, "detail": detail}


def _session_exclusions(
    everyone: list[str], participants: pd.DataFrame, rules: ExclusionRules
) -> list[dict]:
    records = participants.set_index("participant_id")
    entries = []
    for participant in everyone:
        if participant not in records.index:
            entries.append(_entry(participant, "all", "no_record", "no participant record"))
            continue
        record = records.loc[participant]
        if rules.require_completed and record["status"] != "completed":
            detail = f"session status {record['status']!r}"
            entries.append(_entry(participant, "all", "incomplete", detail))
        elif rules.require_attentive and record["attentive"] != 1:
            entries.append(_entry(participant, "all", "attention", "attentiveness not confirmed"))
        elif rules.require_no_ai and record["no_ai_assistance"] != 1:
            detail = "working without AI assistance not confirmed"
            entries.append(_entry(participant, "all", "ai_assistance", detail))
    return entries


def _comprehension_exclusions(trials: pd.DataFrame, gone: set[str], threshold: float) -> list[dict]:
    fillers = trials[(trials["task"] == "comprehension") & ~trials["agent"].isin(gone)]
    accuracy = fillers.groupby("agent")["correct"].mean()
    return [
        _entry(p, "all", "comprehension", f"filler accuracy {value:.1%}")
        for p, value in accuracy.items()
        if value < threshold
    ]


def _drop_flagged(kept: pd.DataFrame, notes: list[str]) -> tuple[pd.DataFrame, dict[str, int]]:
    """The trials without a timing flag, and how many were dropped per task."""
    if "flags" not in kept.columns:
        notes.append("the trials carry no server flags: flagged trials could not be excluded")
        return kept, {}
    names = kept["flags"].fillna("").astype(str).str.split(";")
    mask = names.map(lambda flags: bool(set(flags) & set(TIMING_FLAGS))).astype(bool)
    return kept[~mask], kept[mask].groupby("task").size().to_dict()


def _summary(
    trials: pd.DataFrame,
    kept: pd.DataFrame,
    log: pd.DataFrame,
    tasks: tuple[str, ...],
    flagged: dict[str, int] | None = None,
) -> pd.DataFrame:
    import pandas as pd

    rules = ["source", "no_record", "incomplete", "attention", "ai_assistance", "comprehension"]
    rows = []
    for task in tasks:
        row = {"task": task, "participants": trials["agent"].nunique()}
        for rule in [*rules, "low_accuracy"]:
            scope = log[(log["rule"] == rule) & log["task"].isin(["all", task])]
            row[f"excluded_{rule}"] = scope["participant"].nunique()
        if flagged is not None:
            row["flagged_trials"] = flagged.get(task, 0)
        task_rows = kept[kept["task"] == task]
        row["analysed"] = task_rows["agent"].nunique()
        row["trials"] = len(task_rows)
        rows.append(row)
    summary = pd.DataFrame(rows)
    # Rules that excluded nobody anywhere are left out to keep the table readable.
    empty = [c for c in summary.columns if c.startswith("excluded_") and summary[c].sum() == 0]
    return summary.drop(columns=[c for c in empty if c != "excluded_low_accuracy"])
