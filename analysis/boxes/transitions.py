"""Fine-grained transitions between consecutive probed steps (the source paper's Figure 3).

For every state of a probed instance, the model's answers at steps T-1 and T are compared with
the ground truth at both steps. A state is *updated* at T when the step changes it, *untouched*
otherwise. With the answer at T-1 correct:

- ``CU`` correct update: updated, and correct at T;
- ``NFU`` not following the update: updated, wrong at T;
- ``MC`` maintained correctness: untouched, still correct;
- ``HU-IO`` hallucinated update, incorrect outcome: untouched, but changed to a wrong value.

With the answer at T-1 wrong (error propagation, ``EP``):

- ``DR`` dirty read: untouched, still wrong (the earlier error is kept);
- ``HU-AC`` hallucinated update, accidentally correct: untouched, but changed to the right value;
- ``DW`` dirty write: updated, and still wrong (the update was applied over the earlier error);
- ``VA`` void action: updated, and now correct because the update lands on the earlier error.

``NP`` marks a state missing (or given both values) in the answer at T, ``NP-prev`` one missing
at T-1 only. Step-0 is given in every prompt, so the transition into Step-1 starts from the
correct initial state. Values are compared as the answers write them, which under the flipped
instructions are the negated world states; the categories do not depend on that encoding.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from tracktale.analysis.boxes.scores import CELL_FACTORS, MODEL_KEYS
from tracktale.stimuli.boxes.scoring import DEFAULT_RULES, ScoringRules
from tracktale.stimulus_set import StimulusSet

CATEGORIES = ("CU", "NFU", "MC", "HU-IO", "DR", "HU-AC", "DW", "VA", "NP", "NP-prev")
CORRECT_OUTCOMES = ("CU", "MC", "HU-AC", "VA")
WRONG_OUTCOMES = ("NFU", "HU-IO", "DR", "DW")
ERROR_PROPAGATION = ("DR", "HU-AC", "DW", "VA")
NAMES = {
    "CU": "correct update",
    "NFU": "not following the update",
    "MC": "maintained correctness",
    "HU-IO": "hallucinated update, incorrect outcome",
    "DR": "dirty read",
    "HU-AC": "hallucinated update, accidentally correct",
    "DW": "dirty write",
    "VA": "void action",
    "NP": "not parsed",
    "NP-prev": "not parsed at the step before",
}
_TABLE = {
    # (correct before, updated, correct now) -> category
    (True, True, True): "CU",
    (True, True, False): "NFU",
    (True, False, True): "MC",
    (True, False, False): "HU-IO",
    (False, False, False): "DR",
    (False, False, True): "HU-AC",
    (False, True, False): "DW",
    (False, True, True): "VA",
}
_GROUP_COLUMNS = (*MODEL_KEYS, *CELL_FACTORS)


def label_states(
    expected_before: Sequence[bool],
    expected_now: Sequence[bool],
    predicted_before: str,
    predicted_now: str,
) -> list[str]:
    """The transition category of every state between two consecutive steps.

    Args:
        expected_before: Ground-truth answer values at T-1, in query order.
        expected_now: Ground-truth answer values at T.
        predicted_before: The answer at T-1 as ``T``/``F``/``?``/``!`` characters (see
            :meth:`tracktale.stimuli.boxes.scoring.ParsedAnswer.predicted`).
        predicted_now: The answer at T, likewise.

    Returns:
        One of :data:`CATEGORIES` per state.
    """
    labels = []
    for truth_before, truth_now, before, now in zip(
        expected_before, expected_now, predicted_before, predicted_now, strict=True
    ):
        if now not in "TF":
            labels.append("NP")
        elif before not in "TF":
            labels.append("NP-prev")
        else:
            key = (
                (before == "T") == truth_before,
                truth_before != truth_now,
                (now == "T") == truth_now,
            )
            labels.append(_TABLE[key])
    return labels


def _answer_values(truth: Mapping[str, Any], step: int) -> list[bool]:
    table = truth["states"][step]
    return [value != truth["negated"] for value in table["opened"] + table["obtained"]]


def label_transitions(
    scored: pd.DataFrame, stimulus_set: StimulusSet, rules: ScoringRules = DEFAULT_RULES
) -> pd.DataFrame:
    """One row per probed instance, step and state, with its transition category.

    Args:
        scored: Rows from :func:`tracktale.analysis.boxes.scores.scored_items`; only instances
            probed at every step are used.
        stimulus_set: The set the rows belong to (for the state tables).
        rules: With ``unparsed="whole-step"`` (the authors' code) a transition is left out
            whole when either answer was set aside as unparsed or the two answers give
            different sets of states, and only states given in both are labelled; no state is
            then ``NP`` or ``NP-prev``.

    Returns:
        Columns: the model and condition columns, ``instance``, ``step``, ``position`` (query
        order), ``updated`` and ``category``. A transition whose step T-1 has no result is left
        out.
    """
    probed = scored[scored["probe"] == "every"]
    whole_step = rules.unparsed == "whole-step"
    records = []
    keys = [*_GROUP_COLUMNS, "instance"]
    for key, group in probed.groupby(keys, sort=True, dropna=False):
        base = dict(zip(keys, key, strict=True))
        answers = dict(zip(group["probe_step"], group["predicted"], strict=True))
        truth = stimulus_set.get(group["item_id"].iloc[0]).truth
        given = "".join("T" if value else "F" for value in _answer_values(truth, 0))
        for step in sorted(answers):
            before = given if step == 1 else answers.get(step - 1)
            if before is None:
                continue
            expected_before, expected_now = (
                _answer_values(truth, step - 1),
                _answer_values(truth, step),
            )
            now = answers[step]
            if whole_step and not _comparable(before, now):
                continue
            labels = label_states(expected_before, expected_now, before, now)
            for position, label in enumerate(labels):
                if whole_step and label in ("NP", "NP-prev"):
                    continue
                records.append(
                    {
                        **base,
                        "step": step,
                        "position": position,
                        "updated": expected_before[position] != expected_now[position],
                        "category": label,
                    }
                )
    return pd.DataFrame.from_records(
        records, columns=[*keys, "step", "position", "updated", "category"]
    )


def _comparable(before: str, now: str) -> bool:
    """The authors' conditions for a transition: both answers parsed, the same states given."""
    given_before = [char in "TF" for char in before]
    return any(given_before) and given_before == [char in "TF" for char in now]


def transition_counts(labels: pd.DataFrame) -> pd.DataFrame:
    """Counts and shares of every category per model, condition and step (the paper's Figure 4).

    Returns:
        One row per group, step and category (zeros included): ``count``, ``n_states`` (all
        labelled states at that step) and ``share``.
    """
    by = [*_GROUP_COLUMNS, "step"]
    if labels.empty:
        return pd.DataFrame(columns=[*by, "category", "count", "n_states", "share"])
    counts = (
        labels.groupby([*by, "category"], dropna=False).size().unstack("category", fill_value=0)
    )
    counts = counts.reindex(columns=list(CATEGORIES), fill_value=0)
    totals = counts.sum(axis=1).rename("n_states").reset_index()
    long = counts.stack().rename("count").reset_index().merge(totals, on=by, how="left")
    long["share"] = long["count"] / long["n_states"]
    return long
