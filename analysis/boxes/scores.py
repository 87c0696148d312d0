"""State-EM and Step-EM of boxes items, aggregated with bootstrap intervals.

:func:`scored_items` joins explicit-task model result rows to the items of a boxes stimulus set
(every design factor comes from the items) and takes each output's judgement as the explicit
task stored it, scoring the output again with the paradigm's own scorer only where the stored
one does not answer (other rules, several samples, rows without it). The aggregations then
average Step-EM and State-EM over instances (one item per instance and probed step) with
percentile bootstrap intervals:

- :func:`final_step_table`: the source paper's Table 1 (final test step; Step-EM / State-EM per
  shot count and condition), also Tables 2-4 when the set crosses those factors;
- :func:`probing_table`: the per-step curves of intermediate state probing (Figure 2);
- :func:`paired_compression`: compressed minus normal initialization on the same worlds.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from tracktale.errors import TracktaleError
from tracktale.item import Item
from tracktale.schema.derive import base_type, hints
from tracktale.schema.results import field_names, sample_mean_fields
from tracktale.stimuli.boxes.scoring import DEFAULT_RULES, BoxesJudgement, ScoringRules
from tracktale.stimulus_set import StimulusSet

MODEL_KEYS = ("model_id", "revision")
ROW_FACTORS = ("instruction", "language", "distractors", "prompt_format", "initialization")
"""Condition factors a table row is labelled with (instruction and language always, the others
when they vary in the data), outside the shot count, which makes the columns."""
ORDER = {
    "instruction": ("normal", "counterintuitive-language", "flipped-truth"),
    "language": ("nl", "functor-only", "argument-only", "synthetic"),
    "distractors": ("off", "on"),
    "prompt_format": ("single-turn", "multi-round"),
    "initialization": ("normal", "compressed"),
}
"""Row order of the source paper's tables."""
METRICS = ("step_em", "state_em")
CELL_FACTORS = (
    "shots",
    "language",
    "instruction",
    "distractors",
    "prompt_format",
    "initialization",
    "compressed_steps",
)
"""The condition factors that make a design cell (instances are nested in them)."""
_CONDITION_COLUMNS = (
    *CELL_FACTORS,
    "probe",
    "probe_step",
    "world",
    "instance",
    "boxes",
    "n_steps",
    "n_demonstrations",
    "in_demonstrations",
    "final",
)
_JUDGEMENT = field_names(BoxesJudgement)
"""What a stored explicit-task row of a boxes item holds about its first output."""
_AVERAGED = sample_mean_fields(BoxesJudgement)
"""What an output sampled several times scores as the mean of its samples."""
_SCORE_COLUMNS = (*_JUDGEMENT, "n_samples")


def scored_items(
    results: pd.DataFrame, stimulus_set: StimulusSet, rules: ScoringRules = DEFAULT_RULES
) -> pd.DataFrame:
    """One row per model revision and boxes item: the item's factors and the output's scores.

    The scores are the paradigm's judgement (:class:`~tracktale.stimuli.boxes.scoring.
    BoxesJudgement`): under the default rules, of a row that holds every judgement column
    (what the explicit task stored when it ran), the stored one; the output is scored again
    with the paradigm's own scorer under other rules, for an output sampled several times,
    and for a row without the judgement (an older store, another runner's rows, people's
    answers). An output sampled several times (``sample_outputs``, from ``--num-samples``)
    scores as the mean over its samples for the fields the judgement marks (Step-EM, State-EM
    and the parse rates then lie between 0 and 1 per item); the others (``predicted`` and
    ``unparsed_step``, which the transition analysis reads) are those of the first sample (the
    row's ``output``).

    Args:
        results: Model result rows with at least ``model_id``, ``revision``, ``item_id``,
            ``task`` and ``output`` (other tasks and other sets' items are ignored).
        stimulus_set: The boxes set the results were scored on.
        rules: Our scoring rules or the authors' (see
            :class:`~tracktale.stimuli.boxes.scoring.ScoringRules`).

    Returns:
        The joined rows (``revision`` of ``None`` becomes ``""``).

    Raises:
        TracktaleError: If a column is missing, or a model revision has two rows for one item.
    """
    from tracktale.stimuli.boxes import PARADIGM

    missing = [c for c in (*MODEL_KEYS, "item_id", "task", "output") if c not in results.columns]
    if missing:
        raise TracktaleError(f"the model results have no {missing[0]!r} column")
    items = {item.item_id: item for item in stimulus_set if item.paradigm == PARADIGM.name}
    rows = results[(results["task"] == "explicit") & results["item_id"].isin(list(items))].copy()
    rows["revision"] = rows["revision"].fillna("").astype(str)
    repeated = rows.duplicated(["model_id", "revision", "item_id"])
    if repeated.any():
        first = rows[repeated].iloc[0]
        raise TracktaleError(
            f"the model results hold item {first['item_id']} twice for {first['model_id']} "
            f"{first['revision'] or '(no revision)'}"
        )
    records = []
    for (model_id, revision, item_id), scores in zip(
        zip(rows["model_id"], rows["revision"], rows["item_id"], strict=True),
        _scores(rows, items, rules),
        strict=True,
    ):
        item = items[item_id]
        records.append(
            {
                "model_id": model_id,
                "revision": revision,
                "item_id": item_id,
                **{name: item.condition[name] for name in _CONDITION_COLUMNS},
                **{name: scores[name] for name in _SCORE_COLUMNS},
            }
        )
    columns = [*MODEL_KEYS, "item_id", *_CONDITION_COLUMNS, *_SCORE_COLUMNS]
    return pd.DataFrame.from_records(records, columns=columns)


def _scores(
    rows: pd.DataFrame, items: Mapping[str, Item], rules: ScoringRules
) -> Iterator[dict[str, Any]]:
    """Each row's scores: its stored judgement where that is the answer, else scored again."""
    from tracktale.stimuli.boxes import PARADIGM

    samples = rows["sample_outputs"] if "sample_outputs" in rows else [None] * len(rows)
    stored = _stored_judgements(rows) if rules == DEFAULT_RULES else [None] * len(rows)
    for item_id, output, sampled, judgement in zip(
        rows["item_id"], rows["output"], samples, stored, strict=True
    ):
        outputs = _outputs(output, sampled)
        if judgement is not None and len(outputs) == 1:
            every = [judgement]
        else:
            every = [
                dataclasses.asdict(PARADIGM.score_response(items[item_id], text, rules))
                for text in outputs
            ]
        yield {
            **every[0],
            **{name: float(np.mean([s[name] for s in every])) for name in _AVERAGED},
            "n_samples": len(every),
        }


def _stored_judgements(rows: pd.DataFrame) -> list[dict[str, Any] | None]:
    """Each row's stored judgement, as the scorer gives it (``None``: the row lacks some).

    A value that is not of its declared type (text where a truth value belongs, in a table
    read from CSV) counts as missing, so the output is scored again rather than misread.
    """
    if any(name not in rows.columns for name in _JUDGEMENT):
        return [None] * len(rows)
    kinds = [base_type(hints(BoxesJudgement)[name]) for name in _JUDGEMENT]
    values = rows[list(_JUDGEMENT)]
    complete = values.notna().all(axis=1).tolist()
    found: list[dict[str, Any] | None] = []
    for row, whole in zip(values.itertuples(index=False), complete, strict=True):
        judgement = [_as_declared(kind, value) for kind, value in zip(kinds, row, strict=True)]
        if whole and all(value is not None for value in judgement):
            found.append(dict(zip(_JUDGEMENT, judgement, strict=True)))
        else:
            found.append(None)
    return found


def _as_declared(kind: type, value: Any) -> Any:
    """``value`` as the plain Python ``kind`` (``None`` when it is not one)."""
    if kind is bool:
        return bool(value) if isinstance(value, bool | np.bool_) else None
    if kind is str:
        return value if isinstance(value, str) else None
    if isinstance(value, bool | np.bool_) or not isinstance(value, int | float | np.number):
        return None
    if kind is int:
        return int(value) if float(value).is_integer() else None
    return float(value)


def _outputs(output: object, sampled: object) -> list[str]:
    """The texts to score: every sample where there are several, else the output."""
    if isinstance(sampled, list | tuple | np.ndarray) and len(sampled) > 1:
        return [text if isinstance(text, str) else "" for text in sampled]
    return [output if isinstance(output, str) else ""]


def bootstrap_mean(
    values: Sequence[float] | np.ndarray, n_boot: int = 2000, level: float = 0.95, seed: int = 0
) -> tuple[float, float, float]:
    """Mean and percentile bootstrap interval (resampling the values with replacement).

    Returns:
        ``(mean, low, high)``; NaNs for no values, the value itself for one.
    """
    data = np.asarray(values, dtype=float)
    if data.size == 0:
        return (float("nan"),) * 3
    mean = float(data.mean())
    if data.size == 1:
        return mean, mean, mean
    rng = np.random.default_rng(seed)
    means = data[rng.integers(0, data.size, size=(n_boot, data.size))].mean(axis=1)
    tail = (1 - level) / 2
    low, high = np.quantile(means, [tail, 1 - tail])
    return mean, float(low), float(high)


def summarize(
    scored: pd.DataFrame, by: Sequence[str], n_boot: int = 2000, seed: int = 0
) -> pd.DataFrame:
    """Step-EM and State-EM (with intervals), parse rates and counts per group.

    Args:
        scored: Rows from :func:`scored_items` (one per instance in each group).
        by: The grouping columns.
        n_boot: Bootstrap resamples.
        seed: Seed of every group's resampling.

    Returns:
        One row per group: ``n``, ``step_em``, ``step_em_low``, ``step_em_high``, the same for
        ``state_em``, ``parsed`` (share of outputs with any state) and ``parse_rate``.
    """
    rows = []
    for key, group in scored.groupby(list(by), sort=True, dropna=False):
        row = dict(zip(by, key if isinstance(key, tuple) else (key,), strict=True))
        row["n"] = len(group)
        for metric in METRICS:
            mean, low, high = bootstrap_mean(group[metric].to_numpy(), n_boot, seed=seed)
            row |= {metric: mean, f"{metric}_low": low, f"{metric}_high": high}
        row["parsed"] = float(group["parsed"].mean())
        row["parse_rate"] = float(group["parse_rate"].mean())
        rows.append(row)
    columns = [*by, "n", *(f"{m}{s}" for m in METRICS for s in ("", "_low", "_high"))]
    return pd.DataFrame(rows, columns=[*columns, "parsed", "parse_rate"])


def row_factors(scored: pd.DataFrame) -> list[str]:
    """Instruction and language, plus every other row factor that varies in ``scored``."""
    return [
        name
        for name in ROW_FACTORS
        if name in ("instruction", "language") or scored[name].nunique() > 1
    ]


def final_step_table(scored: pd.DataFrame, n_boot: int = 2000, seed: int = 0) -> pd.DataFrame:
    """The paper's Table 1 in long form: final test step, per model, condition and shot count."""
    final = scored[scored["final"].astype(bool)]
    table = summarize(final, [*MODEL_KEYS, *row_factors(scored), "shots"], n_boot, seed)
    return order_rows(table)


def probing_table(scored: pd.DataFrame, n_boot: int = 2000, seed: int = 0) -> pd.DataFrame:
    """Per-step Step-EM and State-EM of probed instances (the paper's Figure 2).

    ``world_step`` counts steps from the empty world, so a compressed instance's step ``n`` sits
    at ``k + n`` beside the normal instance's step ``k + n``.
    """
    probed = scored[scored["probe"] == "every"].copy()
    probed["world_step"] = probed["probe_step"] + probed["compressed_steps"]
    by = [*MODEL_KEYS, *row_factors(scored), "shots", "probe_step", "world_step"]
    return order_rows(summarize(probed, by, n_boot, seed))


def paired_compression(scored: pd.DataFrame, n_boot: int = 2000, seed: int = 0) -> pd.DataFrame:
    """Compressed minus normal initialization, paired by world, at the final test step.

    Both versions of a world end in the same state; the normal one gets there in k more steps.
    """
    final = scored[scored["final"].astype(bool)]
    keys = [*MODEL_KEYS, *(f for f in row_factors(scored) if f != "initialization"), "shots"]
    wide = final.pivot_table(
        index=[*keys, "world"], columns="initialization", values=list(METRICS), aggfunc="first"
    )
    rows = []
    if wide.empty or "compressed" not in wide.columns.get_level_values(1):
        return pd.DataFrame(columns=[*keys, "n_pairs"])
    for key, group in wide.groupby(level=list(range(len(keys))), sort=True):
        row = dict(zip(keys, key, strict=True))
        pairs = group.dropna()
        row["n_pairs"] = len(pairs)
        for metric in METRICS:
            difference = pairs[(metric, "compressed")] - pairs[(metric, "normal")]
            mean, low, high = bootstrap_mean(difference.to_numpy(), n_boot, seed=seed)
            row |= {f"{metric}_diff": mean, f"{metric}_diff_low": low, f"{metric}_diff_high": high}
        rows.append(row)
    return pd.DataFrame(rows)


def order_rows(table: pd.DataFrame) -> pd.DataFrame:
    """Sort a table's rows in the source paper's order of conditions."""
    keys = [name for name in (*MODEL_KEYS, *ROW_FACTORS, "shots", "probe_step") if name in table]
    rank = {
        name: table[name].map({v: i for i, v in enumerate(ORDER[name])})
        for name in keys
        if name in ORDER
    }
    ordered = table.assign(**{f"_rank_{name}": values for name, values in rank.items()})
    sort_by = [f"_rank_{name}" if name in rank else name for name in keys]
    ordered = ordered.sort_values(sort_by, kind="stable")
    return ordered.drop(columns=[f"_rank_{name}" for name in rank]).reset_index(drop=True)
