"""Scored rows: explicit-task results joined to their items, with the chosen FAA and CAA.

Every analysis reads the rows :func:`scored_rows` gives: one per (model, revision, item), the
item's conditions (``dataset``, ``input_range``, ``data_type``, ``operation``, ``lookback``,
``horizon``), both references (``expected_paper`` and ``expected_ieee`` as floats, and
``references_differ``), every score column of
:func:`~tracktale.stimuli.arithmetic.scoring.score_output`, and ``faa``/``caa``/``expected``:
the columns an :class:`ArithmeticOptions` chooses (by default the paper's executor and the
first extracted span): every choice is a stored column, so no option scores an output again.
The score columns are the judgement the explicit task stored
(:class:`~tracktale.stimuli.arithmetic.scoring.ArithmeticJudgement`); only where one is
missing, or empty in some row (an older store, another runner's rows), are they computed again
from ``output`` with the paradigm's scorer. An output sampled several times counts by its first
sample, the row's ``output``, whose judgement the row holds.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tracktale.errors import TracktaleError
from tracktale.schema.derive import columns
from tracktale.schema.results import field_names, typed_columns
from tracktale.stimuli.arithmetic.scoring import (
    FIRST_ANSWER_RULES,
    REFERENCES,
    ArithmeticJudgement,
    caa_column,
    faa_column,
)
from tracktale.stimulus_set import StimulusSet, read_stimulus_set

if TYPE_CHECKING:
    import pandas as pd

SCORE_COLUMNS = field_names(ArithmeticJudgement)
"""The judgement the explicit task stores with each output (:func:`score_output`'s fields)."""
_NEEDED = [column.name for column in columns(ArithmeticJudgement) if not column.nullable]
_BOOLEAN = list(typed_columns((ArithmeticJudgement,), bool))
CONDITION_COLUMNS = ("dataset", "input_range", "data_type", "operation", "lookback", "horizon")


@dataclass(frozen=True)
class ArithmeticOptions:
    """Which reference and which first-answer rule the tables use.

    Attributes:
        reference: ``paper`` (the paper's executor, the default) or ``ieee`` (ours).
        first_answer: ``span`` (the first extracted span, the paper's words; the default) or
            ``numeric`` (the first span that is a number).
        interval: ``wilson`` (ours, the default: it does not collapse to [1, 1] at 20/20) or
            ``bootstrap`` (the paper's percentile bootstrap over items).
        n_boot: Bootstrap resamples per interval.
        seed: Bootstrap seed.
    """

    reference: str = "paper"
    first_answer: str = "span"
    interval: str = "wilson"
    n_boot: int = 2000
    seed: int = 0

    def __post_init__(self) -> None:
        if self.reference not in REFERENCES:
            raise TracktaleError(
                f"--arithmetic-reference {self.reference!r} is not one of {', '.join(REFERENCES)}"
            )
        if self.first_answer not in FIRST_ANSWER_RULES:
            raise TracktaleError(
                f"--arithmetic-first-answer {self.first_answer!r} is not one of "
                f"{', '.join(FIRST_ANSWER_RULES)}"
            )


def read_set(stimulus_set: StimulusSet | str | os.PathLike[str]) -> StimulusSet:
    """The set itself, read from its folder when given one."""
    return (
        stimulus_set if isinstance(stimulus_set, StimulusSet) else read_stimulus_set(stimulus_set)
    )


def arithmetic_items(stimulus_set: StimulusSet) -> dict[str, Any]:
    """The set's arithmetic items by id."""
    return {item.item_id: item for item in stimulus_set if item.paradigm == "arithmetic"}


def has_rows(results: pd.DataFrame, stimulus_set: StimulusSet) -> bool:
    """Whether any explicit-task row belongs to an arithmetic item of the set."""
    if not {"task", "item_id"} <= set(results.columns):
        return True  # let scored_rows name the missing column
    ids = set(arithmetic_items(stimulus_set))
    return bool(((results["task"] == "explicit") & results["item_id"].isin(ids)).any())


def scored_rows(
    results: pd.DataFrame,
    stimulus_set: StimulusSet | str | os.PathLike[str],
    options: ArithmeticOptions | None = None,
) -> pd.DataFrame:
    """Explicit-task rows of arithmetic items, with their conditions, references and scores.

    Args:
        results: Result rows (other tasks and items of other sets are ignored).
        stimulus_set: The set the rows were scored on, or its folder.
        options: The reference and first-answer rule behind ``faa``, ``caa`` and ``expected``.

    Returns:
        One row per (model, revision, item), ``model`` being ``model_id`` or
        ``model_id@revision``.

    Raises:
        TracktaleError: If a needed column is missing or no row belongs to the set.
    """
    import pandas as pd

    options = options or ArithmeticOptions()
    items = arithmetic_items(read_set(stimulus_set))
    missing = sorted({"model_id", "item_id", "task"} - set(results.columns))
    if missing:
        raise TracktaleError(f"the results have no column {missing[0]!r}")
    rows = results[(results["task"] == "explicit") & results["item_id"].isin(items)].copy()
    if rows.empty:
        raise TracktaleError("no explicit-task result belongs to an arithmetic item of this set")
    if "revision" not in rows.columns:
        rows["revision"] = None
    if _scores_incomplete(rows):
        rows = _rescore(rows, items)
    truth = pd.DataFrame([_item_record(item_id, item) for item_id, item in items.items()])
    rows = rows.drop(columns=[c for c in truth.columns if c != "item_id" and c in rows.columns])
    rows = rows.merge(truth, on="item_id", how="left")
    model_id = rows["model_id"].astype(str)
    revision = rows["revision"].fillna("").astype(str)
    rows["model"] = model_id.where(revision == "", model_id + "@" + revision)
    for column in _BOOLEAN:
        rows[column] = rows[column].astype(bool)
    rows["faa"] = rows[faa_column(options.reference, options.first_answer)]
    rows["caa"] = rows[caa_column(options.reference)]
    rows["expected"] = rows[f"expected_{options.reference}"]
    return rows


def _item_record(item_id: str, item: Any) -> dict[str, Any]:
    from tracktale.stimuli.arithmetic.executor import parse_value
    from tracktale.stimuli.arithmetic.paper_executor import execute_context_as_paper

    truth = item.truth
    if "paper_reference" in truth:
        paper = parse_value(truth["paper_reference"])
        differ = bool(truth["references_differ"])
    else:  # a set written before the paper's executor was stored
        paper = execute_context_as_paper(item.context).value
        differ = paper != parse_value(truth["reference"])
    return {
        "item_id": item_id,
        **{name: item.condition[name] for name in CONDITION_COLUMNS},
        "expected_paper": _as_float(paper),
        "expected_ieee": _as_float(parse_value(truth["reference"])),
        "references_differ": differ,
        "division_by_zero": bool(truth["flags"]["division_by_zero"]),
    }


def _as_float(value: Any) -> float:
    try:
        return float(value)
    except OverflowError:  # an exact integer beyond binary64's range
        return float("inf") if value > 0 else float("-inf")


def _scores_incomplete(rows: pd.DataFrame) -> bool:
    """Whether a score column is missing, or empty in some row (a NaN would read as True)."""
    if any(column not in rows.columns for column in SCORE_COLUMNS):
        return True
    return bool(rows[_NEEDED].isna().to_numpy().any())


def _rescore(rows: pd.DataFrame, items: dict[str, Any]) -> pd.DataFrame:
    import pandas as pd

    from tracktale.stimuli.arithmetic import PARADIGM

    if "output" not in rows.columns:
        raise TracktaleError("the results have neither the score columns nor 'output'")
    scores = [
        dataclasses.asdict(
            PARADIGM.score_response(items[item_id], output if isinstance(output, str) else "")
        )
        for item_id, output in zip(rows["item_id"], rows["output"], strict=True)
    ]
    scored = pd.DataFrame(scores, index=rows.index)[list(SCORE_COLUMNS)]
    return pd.concat([rows.drop(columns=[c for c in SCORE_COLUMNS if c in rows]), scored], axis=1)


def factor_rows(rows: pd.DataFrame, factor: str) -> pd.DataFrame:
    """The rows a comparison over ``factor`` uses (the paper's design).

    Look-back over the mixed-operation datasets only (the only variant with look-back 2-7),
    operation over the look-back-1 datasets only (the only ones with all five variants), data
    type over the [1,10] and [10,100] ranges (the only ranges with both types), input range
    over everything.
    """
    if factor == "lookback":
        return rows[rows["operation"] == "mixed"]
    if factor == "operation":
        return rows[rows["lookback"] == 1]
    if factor == "data_type":
        return rows[rows["input_range"].isin(["1-10", "10-100"])]
    if factor == "input_range":
        return rows
    raise TracktaleError(f"unknown factor {factor!r} (choose from {', '.join(FACTORS)})")


FACTORS = ("lookback", "input_range", "data_type", "operation")
