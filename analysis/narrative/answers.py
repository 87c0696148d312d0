"""Typed answers under one rule: people and models scored alike, and how the models answered.

Two rules judge a typed (explicit) answer:

- ``contains``: the response contains the target container's name (the paper's rule for the
  models' generated answers; the models' own results use it, as in the paper).
- ``one-answer``: the same, and the response names no other container (the study's default for
  people, who would otherwise be right by typing ``box bag basket drawer``).

The paradigm's judgement stores both parts (``correct`` and ``several_answers`` for a model;
``correct_paper_rule`` and the ``several_answers`` flag for a person), so either rule can be
applied to both. Where people and models stand side by side they are scored under one rule,
:data:`SIDE_BY_SIDE_RULE`, and the figure and the scorecard say which. The implicit task has no
typed answer: both rules are its ``correct``.

:func:`answers_table` says, per model and task, how many generations hit their token budget
(the answer may be cut before its location word) and how many name several containers, with
the accuracy under each rule.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

RULES = ("contains", "one-answer")
SIDE_BY_SIDE_RULE = "one-answer"
"""The rule people and models share wherever they are compared (the study's rule for people)."""
RULE_WORDS = {
    "contains": "the paper's rule: the answer contains the target container",
    "one-answer": "the answer names the target container and no other",
}


def several_answers(rows: pd.DataFrame) -> pd.Series:
    """Whether each row's typed answer names more than one container (``False`` elsewhere)."""
    import pandas as pd

    several = pd.Series(False, index=rows.index)
    if "several_answers" in rows.columns:
        several |= rows["several_answers"].astype("boolean").fillna(False).astype(bool)
    if "flags" in rows.columns:
        flags = rows["flags"].fillna("").astype(str).str.split(";")
        several |= flags.map(lambda names: "several_answers" in names).astype(bool)
    return several


def correct_under(rows: pd.DataFrame, rule: str, value: str = "correct") -> pd.Series:
    """Each row's correctness under ``rule`` (people's and models' rows alike).

    Args:
        rows: Trial-table rows (people's, models' or both).
        rule: One of :data:`RULES`.
        value: The models' correctness column (``correct`` or ``correct_calibrated``, an
            implicit-task column that the typed rules leave as it is).

    Raises:
        ValueError: For an unknown rule.
    """
    if rule not in RULES:
        raise ValueError(f"unknown answer rule {rule!r} (choose from {RULES})")
    column = value if value in rows.columns else "correct"
    correct = rows[column].astype("boolean")
    if "agent_kind" in rows.columns and "correct_paper_rule" in rows.columns:
        # A person's "correct" is the study's rule; the paper's rule is stored beside it.
        human = (rows["agent_kind"] == "human") & rows["correct_paper_rule"].notna()
        paper = rows["correct_paper_rule"].astype("boolean")
        correct = correct.mask(human, paper)
    typed = rows["task"] == "explicit"
    if rule == "one-answer":
        correct = correct.mask(typed & several_answers(rows), False)
    return correct


def answers_table(models: pd.DataFrame, value: str = "correct") -> pd.DataFrame:
    """Per model and task: rows, budget hits, answers naming several containers, both rules.

    ``hit_budget`` counts generations that stopped at their token budget (``finish_reason``
    ``length``; blank where the backend does not say); ``budget`` is the budget(s) used.
    """
    import pandas as pd

    out = []
    for (label, task), rows in models.groupby(["label", "task"], sort=True):
        entry: dict[str, object] = {"model": label, "task": task, "n": len(rows)}
        if task == "explicit":
            entry["budget"] = _budgets(rows)
            entry["hit_budget"] = _budget_hits(rows)
            entry["several_containers"] = int(several_answers(rows).sum())
        for rule in RULES:
            entry[f"accuracy_{rule}"] = float(correct_under(rows, rule, value).mean())
        out.append(entry)
    table = pd.DataFrame(out)
    for column in ("budget", "hit_budget", "several_containers"):
        if column not in table.columns:
            table[column] = None
    columns = ["model", "task", "n", "budget", "hit_budget", "several_containers"]
    return table[columns + [f"accuracy_{rule}" for rule in RULES]]


def _budget_hits(rows: pd.DataFrame) -> int | None:
    """Generations that stopped at their budget; ``None`` where the backend does not say."""
    if "finish_reason" not in rows.columns or rows["finish_reason"].isna().all():
        return None
    return int((rows["finish_reason"] == "length").sum())


def _budgets(rows: pd.DataFrame) -> str:
    if "max_new_tokens" not in rows.columns:
        return ""
    budgets = sorted({int(b) for b in rows["max_new_tokens"].dropna()})
    return ", ".join(map(str, budgets))
