"""Stimulus sets and loaded trials joined into one tidy trial table.

:func:`build_trial_table` joins the human trials and model results
(:mod:`tracktale.analysis.data.load`) to the stimulus sets on ``item_id``: every design factor
comes from the items (``condition`` and ``meta``), never from the trial rows.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from tracktale.analysis.data.load import HumanData
from tracktale.errors import TracktaleError
from tracktale.models.tasks import result_records
from tracktale.schema.results import carried_columns
from tracktale.stimulus_set import StimulusSet, is_stimulus_set, read_stimulus_set

if TYPE_CHECKING:
    import pandas as pd


_TRIAL_CARRY = {
    "response_time_ms": "rt_ms",
    "reading_time_ms": "reading_time_ms",
    "timed_out": "timed_out",
    "reading_timed_out": "reading_timed_out",
    "list_id": "list_id",
    "trial_index": "trial_index",
    "stimulus_sha256": "stimulus_sha256",
    "response": "response",
    "correct_paper_rule": "correct_paper_rule",
    "intermediates": "intermediates",
    "flags": "flags",
}


def model_carry() -> tuple[str, ...]:
    """The result columns the trial table carries.

    The result models' fields marked ``CARRIED`` (:mod:`tracktale.schema.results`), over the
    registered tasks.
    """
    return carried_columns(result_records())


ANSWER_COLUMNS = ("max_new_tokens", "finish_reason", "answers_named", "several_answers")
"""How a generated answer ended and what it named, carried where the results hold them: the
report counts budget hits and applies the one-answer rule
(:mod:`tracktale.analysis.narrative.answers`)."""


_MODEL_CARRY = model_carry()
_RESERVED = {
    "agent_kind",
    "agent",
    "revision",
    "source",
    "paradigm",
    "task",
    "item_id",
    "role",
    "correct",
    *_TRIAL_CARRY.values(),
    *_MODEL_CARRY,
    *ANSWER_COLUMNS,
}


def load_stimulus_sets(sources: Iterable[Any]) -> list[StimulusSet]:
    """Stimulus sets from folders (or already loaded sets).

    Raises:
        TracktaleError: For a folder that is not a stimulus set.
    """
    sets = []
    for source in sources:
        if isinstance(source, StimulusSet):
            sets.append(source)
        elif not is_stimulus_set(source):
            raise TracktaleError(f"{source}: not a stimulus set (no manifest.json)")
        else:
            sets.append(read_stimulus_set(source))
    return sets


def human_stimulus_set(sources: Iterable[Any] = (), paradigm: str | None = None) -> StimulusSet:
    """The first of ``sources``, else the human protocol of ``paradigm`` (or the default), seed 1.

    Raises:
        TracktaleError: For a folder that is not a stimulus set, or a set of another paradigm
            than ``paradigm``.
    """
    sources = list(sources)
    if not sources:
        from tracktale.stimuli.registry import DEFAULT_PARADIGM, get_paradigm

        return get_paradigm(paradigm or DEFAULT_PARADIGM).generate_set("human", 1)
    stimulus_set = load_stimulus_sets(sources)[0]
    if paradigm is not None and stimulus_set.manifest.paradigm != paradigm:
        raise TracktaleError(
            f"--paradigm {paradigm}: the --stimuli set is a {stimulus_set.manifest.paradigm} set"
        )
    return stimulus_set


def item_table(sets: Iterable[StimulusSet]) -> pd.DataFrame:
    """One row per item: id, paradigm, role, set sha256, every condition and scalar meta field.

    A condition or meta key that collides with a trial-table column gets a ``condition_`` or
    ``meta_`` prefix. An item present in two sets appears once.
    """
    import pandas as pd

    rows: dict[str, dict[str, Any]] = {}
    for stimulus_set in sets:
        for item in stimulus_set:
            row = {
                "item_id": item.item_id,
                "paradigm": item.paradigm,
                "role": item.role,
                "set_sha256": stimulus_set.sha256,
                "protocol": stimulus_set.manifest.protocol,
            }
            row.update(_prefixed(item.condition, "condition_"))
            row.update(_prefixed(_scalars(item.meta), "meta_"))
            rows.setdefault(item.item_id, row)
    if not rows:
        raise TracktaleError("the stimulus sets hold no items")
    return pd.DataFrame(list(rows.values()))


def _scalars(mapping: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in mapping.items() if isinstance(v, str | int | float | bool)}


def _prefixed(mapping: Mapping[str, Any], prefix: str) -> dict[str, Any]:
    return {
        (prefix + k if k in _RESERVED | {"set_sha256", "protocol"} else k): v
        for k, v in mapping.items()
    }


def _join_items(rows: pd.DataFrame, items: pd.DataFrame, what: str) -> pd.DataFrame:
    """Rows joined to their items; rows of stimulus sets that were not given are left aside.

    A row whose ``stimulus_sha256`` names a set that is not among the given ones belongs to
    another study's set (a results store may hold several): it is dropped and counted in the
    table's ``attrs["left_aside"]`` (``{what: {sha256: rows}}``). A row naming an item its own
    set does not hold, or one without a set, is an error.
    """
    known = rows["item_id"].isin(items["item_id"])
    aside: dict[str, int] = {}
    if not known.all() and "stimulus_sha256" in rows.columns:
        sha = rows["stimulus_sha256"]
        other_set = ~known & sha.notna() & ~sha.isin(set(items["set_sha256"]))
        if other_set.any():
            aside = {str(k): int(n) for k, n in sha[other_set].value_counts().sort_index().items()}
            rows, known = rows[~other_set], known[~other_set]
    if not known.all():
        row = int((~known).to_numpy().nonzero()[0][0])
        item_id = rows["item_id"].iloc[row]
        sha = rows["stimulus_sha256"].iloc[row] if "stimulus_sha256" in rows.columns else None
        named = f" (its stimulus set has sha256 {str(sha)[:12]}...)" if isinstance(sha, str) else ""
        raise TracktaleError(
            f"{what} row {row + 1}: item {item_id!r} is not in the given stimulus sets{named}"
        )
    joined = rows.merge(items, on="item_id", how="left", validate="many_to_one")
    joined.attrs["left_aside"] = {what: aside} if aside else {}
    return joined


def describe_left_aside(left_aside: Mapping[str, Mapping[str, int]]) -> list[str]:
    """One line per source whose rows of other stimulus sets were left aside."""
    lines = []
    for what, counts in left_aside.items():
        sets = ", ".join(f"{sha[:12]}: {n:,}" for sha, n in counts.items())
        total = sum(counts.values())
        lines.append(
            f"{what}: {total:,} rows of {len(counts)} stimulus set(s) not given with --stimuli "
            f"left aside (sha256 {sets})"
        )
    return lines


def human_trial_rows(human: HumanData) -> pd.DataFrame:
    """Human trials in the tidy table's column names (before the join with items)."""
    trials = human.trials
    tidy = trials[["participant_id", "source", "task", "item_id", "correct"]].rename(
        columns={"participant_id": "agent"}
    )
    tidy.insert(0, "agent_kind", "human")
    tidy.insert(2, "revision", "")
    for original, name in _TRIAL_CARRY.items():
        if original in trials.columns:
            tidy[name] = trials[original].to_numpy()
    return tidy


def model_trial_rows(results: pd.DataFrame) -> pd.DataFrame:
    """Model results in the tidy table's column names, with each model's description."""
    import pandas as pd

    from tracktale.analysis.data.catalog import describe_model, training_step, training_tokens

    tidy = results[["model_id", "revision", "task", "item_id"]].rename(
        columns={"model_id": "agent"}
    )
    tidy.insert(0, "agent_kind", "model")
    tidy.insert(3, "source", "model")
    tidy["correct"] = results["correct"] if "correct" in results.columns else math.nan
    for column in (*model_carry(), *ANSWER_COLUMNS):
        if column in results.columns:
            tidy[column] = results[column].to_numpy()
    descriptions = {m: describe_model(m) for m in tidy["agent"].unique()}
    for field in ("family", "label", "size_label", "instruct", "reference"):
        tidy[field] = tidy["agent"].map(lambda m, f=field: getattr(descriptions[m], f))
    nominal = tidy["agent"].map(lambda m: descriptions[m].nominal_parameters)
    counted = (
        pd.to_numeric(results["n_parameters"], errors="coerce")
        if "n_parameters" in results.columns
        else nominal * math.nan
    )
    tidy["n_parameters"] = counted.where(counted > 0, nominal).to_numpy()
    tidy["step"] = tidy["revision"].map(training_step)
    tidy["tokens"] = tidy["revision"].map(training_tokens)
    return tidy


def build_trial_table(
    items: pd.DataFrame,
    human: HumanData | None = None,
    models: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """The one tidy trial table: human trials and model results joined to the items.

    Args:
        items: From :func:`item_table`.
        human: From :func:`load_human_trials`.
        models: From :func:`load_model_results`.

    Returns:
        One row per human trial and per model result, with ``agent_kind`` (human/model),
        ``agent`` (participant or model id), ``revision``, ``source``, ``paradigm``, ``task``,
        ``item_id``, ``role``, every condition and meta column of the items, ``correct`` (1/0),
        and the measures of each kind (``rt_ms``, ``reading_time_ms``, ..., ``logprob``,
        ``n_parameters``, ``step``, ...).

        Rows of stimulus sets that were not given are left aside and counted in
        ``attrs["left_aside"]`` (see :func:`describe_left_aside`).

    Raises:
        TracktaleError: When neither is given, or a row names an item outside its own set.
    """
    import pandas as pd

    parts = []
    if human is not None:
        parts.append(_join_items(human_trial_rows(human), items, human.origin))
    if models is not None:
        parts.append(_join_items(model_trial_rows(models), items, "model results"))
    if not parts:
        raise TracktaleError("no data: give human trials, model results or both")
    left_aside = {k: v for part in parts for k, v in part.attrs.get("left_aside", {}).items()}
    table = pd.concat(parts, ignore_index=True, sort=False)
    table.attrs["left_aside"] = left_aside
    return table


def select(table: pd.DataFrame, **criteria: Any) -> pd.DataFrame:
    """Rows whose columns take the given value (or one of the given values).

    Args:
        table: The tidy trial table.
        **criteria: ``column=value`` or ``column=[values]``; ``None`` means no constraint.

    Returns:
        The matching rows.

    Raises:
        TracktaleError: Naming an unknown column, a value the data does not have (e.g. an
            unknown template) or a selection that leaves no rows.
    """
    mask = None
    for column, wanted in criteria.items():
        if wanted is None:
            continue
        if column not in table.columns:
            raise TracktaleError(f"cannot select on {column!r}: the trial table has no such column")
        values = list(wanted) if isinstance(wanted, list | tuple | set) else [wanted]
        present = set(table[column].dropna().unique())
        unknown = [v for v in values if v not in present]
        if unknown:
            have = ", ".join(sorted(map(str, present))) or "nothing"
            raise TracktaleError(f"unknown {column} {unknown[0]!r} (the data has: {have})")
        match = table[column].isin(values)
        mask = match if mask is None else mask & match
    selected = table if mask is None else table[mask]
    if selected.empty:
        described = ", ".join(f"{k}={v}" for k, v in criteria.items() if v is not None)
        raise TracktaleError(f"no trials match {described}")
    return selected
