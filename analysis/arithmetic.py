"""The arithmetic paradigm's tables and figures (the paper's Tables 2-3, Figures 2 and 4-6).

Input: explicit-task model result rows (``model_id``, ``revision``, ``item_id``, ``task``,
``output`` and the columns :func:`~tracktale.stimuli.arithmetic.scoring.score_output` returns)
and the stimulus set they were scored on. Rows are joined to their items' conditions; where the
score columns are missing they are recomputed from ``output`` with the paradigm's scorer.

Confidence intervals are 95% Wilson intervals over items by default (``interval="wilson"``,
statsmodels' ``proportion_confint``). The paper reports percentile bootstraps over the
evaluation examples (``interval="bootstrap"``, 2,000 resamples, seeded): for a 0/1 outcome the
mean of a resample of n items is distributed as Binomial(n, p)/n with p the observed rate, so
resamples are drawn that way. That bootstrap collapses to [1, 1] when every item is right (and
to [0, 0] when none is), claiming certainty from 20 items; Wilson gives [0.84, 1] at 20/20 and
agrees with the bootstrap elsewhere.

Comparisons follow the paper's design: look-back over the mixed-operation datasets only (the
only variant with look-back 2-7), operation over the look-back-1 datasets only (the only ones
with all five variants), data type over the [1,10] and [10,100] ranges (the only ranges with
both types), input range over everything.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tracktale.analysis.tables import to_latex
from tracktale.atomic import atomic_write, atomic_write_text
from tracktale.errors import TracktaleError
from tracktale.stimulus_set import StimulusSet, read_stimulus_set

if TYPE_CHECKING:
    import pandas as pd

SCORE_COLUMNS = (
    "correct",
    "correct_any",
    "parseable",
    "answer_position",
    "generated_steps",
    "expected_steps",
    "step_following",
)
CONDITION_COLUMNS = ("dataset", "input_range", "data_type", "operation", "lookback", "horizon")
FACTORS = ("lookback", "input_range", "data_type", "operation")
FACTOR_TITLES = {
    "lookback": "look-back (mixed operations)",
    "input_range": "input range",
    "data_type": "data type ([1,10] and [10,100])",
    "operation": "operation (look-back 1)",
}
OPERATION_ORDER = ("add", "sub", "mul", "div", "mixed")
SFB_LEVELS = ("exact", "under", "over")
N_BOOT = 2000
LEVEL = 0.95
INTERVALS = ("wilson", "bootstrap")
FIGURE_FORMATS = ("png", "pdf", "svg")
POOLED = "all models"
_COLOURS = ("#0072B2", "#D55E00", "#009E73", "#E69F00", "#CC79A7", "#56B4E9", "#F0E442", "#000000")


def scored_rows(
    results: pd.DataFrame, stimulus_set: StimulusSet | str | os.PathLike[str]
) -> pd.DataFrame:
    """Explicit-task rows of arithmetic items, with their conditions and scores.

    Args:
        results: Result rows (other tasks and items of other sets are ignored).
        stimulus_set: The set the rows were scored on, or its folder.

    Returns:
        One row per (model, revision, item) with ``model`` (``model_id`` or
        ``model_id@revision``), the condition columns and the score columns.

    Raises:
        TracktaleError: If a needed column is missing or no row belongs to the set.
    """
    import pandas as pd

    items = _items(stimulus_set)
    needed = {"model_id", "item_id", "task"}
    missing = sorted(needed - set(results.columns))
    if missing:
        raise TracktaleError(f"the results have no column {missing[0]!r}")
    rows = results[(results["task"] == "explicit") & results["item_id"].isin(items)].copy()
    if rows.empty:
        raise TracktaleError("no explicit-task result belongs to an arithmetic item of this set")
    if "revision" not in rows.columns:
        rows["revision"] = None
    if _scores_incomplete(rows):
        rows = _rescore(rows, items)
    conditions = pd.DataFrame(
        [{"item_id": item_id, **item.condition} for item_id, item in items.items()]
    )
    rows = rows.drop(columns=[c for c in CONDITION_COLUMNS if c in rows.columns])
    rows = rows.merge(conditions[["item_id", *CONDITION_COLUMNS]], on="item_id", how="left")
    model_id = rows["model_id"].astype(str)
    revision = rows["revision"].fillna("").astype(str)
    rows["model"] = model_id.where(revision == "", model_id + "@" + revision)
    for column in ("correct", "correct_any", "parseable"):
        rows[column] = rows[column].astype(bool)
    return rows


def _items(stimulus_set: StimulusSet | str | os.PathLike[str]) -> dict[str, Any]:
    if not isinstance(stimulus_set, StimulusSet):
        stimulus_set = read_stimulus_set(stimulus_set)
    return {item.item_id: item for item in stimulus_set if item.paradigm == "arithmetic"}


def _scores_incomplete(rows: pd.DataFrame) -> bool:
    """Whether a score column is missing, or empty in some row (a NaN would read as True)."""
    if any(column not in rows.columns for column in SCORE_COLUMNS):
        return True
    needed = ["correct", "correct_any", "parseable", "generated_steps", "step_following"]
    return bool(rows[needed].isna().to_numpy().any())


def _rescore(rows: pd.DataFrame, items: dict[str, Any]) -> pd.DataFrame:
    import pandas as pd

    from tracktale.stimuli.arithmetic import PARADIGM

    if "output" not in rows.columns:
        raise TracktaleError("the results have neither the score columns nor 'output'")
    scores = [
        PARADIGM.score_response(items[item_id], output if isinstance(output, str) else "")
        for item_id, output in zip(rows["item_id"], rows["output"], strict=True)
    ]
    scored = pd.DataFrame(scores, index=rows.index)[list(SCORE_COLUMNS)]
    return pd.concat([rows.drop(columns=[c for c in SCORE_COLUMNS if c in rows]), scored], axis=1)


def bootstrap_interval(
    successes: int, n: int, *, n_boot: int = N_BOOT, level: float = LEVEL, seed: int = 0
) -> tuple[float, float]:
    """Percentile bootstrap interval of a rate over ``n`` items (see the module docstring).

    Returns:
        ``(low, high)`` as proportions; ``(nan, nan)`` for ``n == 0``.
    """
    import numpy as np

    if n == 0:
        return float("nan"), float("nan")
    rng = np.random.default_rng(seed)
    means = rng.binomial(n, successes / n, size=n_boot) / n
    tail = (1 - level) / 2
    low, high = np.quantile(means, [tail, 1 - tail])
    return float(low), float(high)


def rate_interval(
    successes: int, n: int, *, interval: str = "wilson", n_boot: int = N_BOOT, seed: int = 0
) -> tuple[float, float]:
    """The 95% interval of a rate over ``n`` items: Wilson, or the paper's bootstrap.

    Raises:
        TracktaleError: For an unknown interval.
    """
    from tracktale.analysis.stats import proportion_interval

    if interval == "wilson":
        return proportion_interval(successes, n, LEVEL)
    if interval == "bootstrap":
        return bootstrap_interval(successes, n, n_boot=n_boot, seed=seed)
    raise TracktaleError(f"unknown interval {interval!r} (use {' or '.join(INTERVALS)})")


def rate_table(
    rows: pd.DataFrame,
    by: Sequence[str],
    value: str = "correct",
    *,
    n_boot: int = N_BOOT,
    seed: int = 0,
    interval: str = "wilson",
) -> pd.DataFrame:
    """The rate of ``value`` per group, in percent, with its interval (:func:`rate_interval`).

    Returns:
        Columns ``by``, ``n``, ``rate``, ``ci_low``, ``ci_high`` (percent).
    """
    import pandas as pd

    records = []
    for keys, group in rows.groupby(list(by), sort=True, dropna=False):
        n, successes = len(group), int(group[value].sum())
        low, high = rate_interval(successes, n, interval=interval, n_boot=n_boot, seed=seed)
        keys = keys if isinstance(keys, tuple) else (keys,)
        records.append(
            {
                **dict(zip(by, keys, strict=True)),
                "n": n,
                "rate": 100 * successes / n,
                "ci_low": 100 * low,
                "ci_high": 100 * high,
            }
        )
    return pd.DataFrame.from_records(records, columns=[*by, "n", "rate", "ci_low", "ci_high"])


def accuracy_table(
    rows: pd.DataFrame, *, n_boot: int = N_BOOT, seed: int = 0, interval: str = "wilson"
) -> pd.DataFrame:
    """Table 3: per model, FAA with its interval, CAA, the FAA-CAA gap and PAR.

    Returns:
        ``model``, ``n``, ``faa``, ``ci_low``, ``ci_high``, ``half_width``, ``caa``,
        ``faa_caa_gap`` (CAA - FAA, points) and ``par``, in percent, sorted by FAA.
    """
    table = rate_table(rows, ["model"], n_boot=n_boot, seed=seed, interval=interval)
    table = table.rename(columns={"rate": "faa"})
    table["half_width"] = (table["ci_high"] - table["ci_low"]) / 2
    means = rows.groupby("model")[["correct_any", "parseable"]].mean().mul(100)
    table = table.merge(means.reset_index(), on="model")
    table = table.rename(columns={"correct_any": "caa", "parseable": "par"})
    table["faa_caa_gap"] = table["caa"] - table["faa"]
    columns = ["model", "n", "faa", "ci_low", "ci_high", "half_width", "caa", "faa_caa_gap", "par"]
    return table[columns].sort_values("faa", kind="stable").reset_index(drop=True)


def horizon_table(
    rows: pd.DataFrame, *, n_boot: int = N_BOOT, seed: int = 0, interval: str = "wilson"
) -> pd.DataFrame:
    """FAA (with interval), CAA and their gap by model and horizon (Figures 2 and 3)."""
    table = rate_table(rows, ["model", "horizon"], n_boot=n_boot, seed=seed, interval=interval)
    table = table.rename(columns={"rate": "faa"})
    caa = rows.groupby(["model", "horizon"])["correct_any"].mean().mul(100).rename("caa")
    table = table.merge(caa.reset_index(), on=["model", "horizon"])
    table["faa_caa_gap"] = table["caa"] - table["faa"]
    return table


def factor_rows(rows: pd.DataFrame, factor: str) -> pd.DataFrame:
    """The rows a comparison over ``factor`` uses (see the module docstring)."""
    if factor == "lookback":
        return rows[rows["operation"] == "mixed"]
    if factor == "operation":
        return rows[rows["lookback"] == 1]
    if factor == "data_type":
        return rows[rows["input_range"].isin(["1-10", "10-100"])]
    if factor == "input_range":
        return rows
    raise TracktaleError(f"unknown factor {factor!r} (choose from {', '.join(FACTORS)})")


def factor_table(
    rows: pd.DataFrame,
    *,
    by_horizon: bool = False,
    n_boot: int = N_BOOT,
    seed: int = 0,
    interval: str = "wilson",
) -> pd.DataFrame:
    """FAA by look-back, input range, data type and operation, per model and pooled.

    Args:
        rows: Scored rows (:func:`scored_rows`).
        by_horizon: Also split by horizon (the paper's Figures 4-6).
        n_boot: Bootstrap resamples.
        seed: Bootstrap seed.
        interval: ``wilson`` or ``bootstrap`` (:func:`rate_interval`).

    Returns:
        ``factor``, ``level``, ``model`` (:data:`POOLED` for the rows of all models),
        [``horizon``,] ``n``, ``faa``, ``ci_low``, ``ci_high``.
    """
    import pandas as pd

    tables = []
    split = ["horizon"] if by_horizon else []
    for factor in FACTORS:
        subset = factor_rows(rows, factor)
        if subset.empty:
            continue
        for model_rows in (subset, subset.assign(model=POOLED)):
            table = rate_table(
                model_rows, ["model", factor, *split], n_boot=n_boot, seed=seed, interval=interval
            )
            tables.append(table.rename(columns={factor: "level"}).assign(factor=factor))
    table = pd.concat(tables, ignore_index=True).rename(columns={"rate": "faa"})
    table["level"] = table["level"].astype(str)
    return table[["factor", "level", "model", *split, "n", "faa", "ci_low", "ci_high"]]


def generation_change(
    rows: pd.DataFrame, short: int | None = None, long: int | None = None
) -> pd.DataFrame:
    """Table 2: PAR and step-following rates at the shortest and longest horizon, per model.

    Args:
        rows: Scored rows.
        short: The short horizon (default: the shortest present, 5 in the paper).
        long: The long horizon (default: the longest present, 95 in the paper).

    Returns:
        Per model, for PAR and each SFB level (``exact``, ``under``, ``over``): the rate at
        each horizon and ``<metric>_diff`` = rate(short) - rate(long) in points, the paper's
        sign (a positive PAR difference is a drop).
    """
    import pandas as pd

    short = int(rows["horizon"].min()) if short is None else short
    long = int(rows["horizon"].max()) if long is None else long
    records = []
    for model, group in rows.groupby("model", sort=True):
        record: dict[str, Any] = {"model": model, "short": short, "long": long}
        ends = {"short": group[group["horizon"] == short], "long": group[group["horizon"] == long]}
        for metric in ("par", *SFB_LEVELS):
            for name, subset in ends.items():
                record[f"{metric}_{name}"] = _percent(subset, metric)
            record[f"{metric}_diff"] = record[f"{metric}_short"] - record[f"{metric}_long"]
        records.append(record)
    return pd.DataFrame.from_records(records)


def _percent(rows: pd.DataFrame, metric: str) -> float:
    if rows.empty:
        return float("nan")
    values = rows["parseable"] if metric == "par" else rows["step_following"] == metric
    return 100 * float(values.mean())


def plot_faa_by_horizon(table: pd.DataFrame, stem: Path) -> list[Path]:
    """Figure 2: FAA against horizon, one line per model with its 95% band.

    Args:
        table: :func:`horizon_table`.
        stem: Output path without suffix; PNG, PDF and SVG are written.
    """
    from matplotlib.figure import Figure

    figure = Figure(figsize=(5.5, 3.6), layout="constrained")
    axes = figure.add_subplot()
    for index, (model, series) in enumerate(table.groupby("model", sort=True)):
        colour = _COLOURS[index % len(_COLOURS)]
        axes.plot(series["horizon"], series["faa"], marker="o", color=colour, label=model)
        axes.fill_between(
            series["horizon"], series["ci_low"], series["ci_high"], color=colour, alpha=0.15
        )
    _decorate(axes, "FAA (%) by procedure length")
    axes.legend(fontsize=7, frameon=False, loc="best")
    return _save(figure, stem)


def plot_factors_by_horizon(table: pd.DataFrame, stem: Path) -> list[Path]:
    """Figures 4-6 (pooled over models): FAA against horizon for each level of each factor.

    Args:
        table: :func:`factor_table` with ``by_horizon=True``.
        stem: Output path without suffix.
    """
    from matplotlib.figure import Figure

    pooled = table[table["model"] == POOLED]
    figure = Figure(figsize=(8, 6), layout="constrained")
    for position, factor in enumerate(FACTORS, start=1):
        axes = figure.add_subplot(2, 2, position)
        rows = pooled[pooled["factor"] == factor]
        levels = sorted(set(rows["level"]), key=_level_key)
        for index, level in enumerate(levels):
            series = rows[rows["level"] == level]
            colour = _COLOURS[index % len(_COLOURS)]
            label = f"[{level.replace('-', ',')}]" if factor == "input_range" else level
            axes.plot(series["horizon"], series["faa"], marker="o", color=colour, label=label)
        _decorate(axes, FACTOR_TITLES[factor])
        if levels:  # a factor with no rows has nothing to label
            axes.legend(fontsize=7, frameon=False, loc="best")
    return _save(figure, stem)


def _level_key(level: str) -> tuple[int, str]:
    """Operations in the paper's order, numbers by value, the rest as text."""
    if level in OPERATION_ORDER:
        return OPERATION_ORDER.index(level), level
    return (int(level), level) if level.isdigit() else (0, level)


def _decorate(axes: Any, title: str) -> None:
    axes.set_title(title, fontsize=10)
    axes.set_xlabel("steps")
    axes.set_ylabel("FAA (%)")
    axes.set_ylim(-2, 102)
    axes.grid(alpha=0.25)


def _save(figure: Any, stem: Path) -> list[Path]:
    import matplotlib

    paths = []
    for extension in FIGURE_FORMATS:
        path = stem.with_suffix(f".{extension}")
        # No timestamps and no random SVG ids: the same data gives the same files.
        metadata = {"Software": None} if extension == "png" else {"Creator": None}
        if extension != "png":
            metadata["CreationDate" if extension == "pdf" else "Date"] = None
        with (
            matplotlib.rc_context({"svg.hashsalt": "tracktale"}),
            atomic_write(path, "wb") as handle,
        ):
            figure.savefig(handle, format=extension, dpi=200, metadata=metadata)
        paths.append(path)
    return paths


def write_table(table: pd.DataFrame, stem: Path, *, latex: bool = False) -> list[Path]:
    """Write ``table`` as CSV (and as a booktabs LaTeX table), atomically."""
    csv_path = stem.with_suffix(".csv")
    atomic_write_text(csv_path, table.to_csv(index=False, float_format="%.4f"))
    if not latex:
        return [csv_path]
    tex_path = stem.with_suffix(".tex")
    title = stem.name.replace("_", " ")
    atomic_write_text(tex_path, to_latex(table, title, label=stem.name, digits=2))
    return [csv_path, tex_path]


def arithmetic_section(
    results: pd.DataFrame,
    stimulus_set: StimulusSet | str | os.PathLike[str],
    out_dir: str | os.PathLike[str],
    *,
    n_boot: int = N_BOOT,
    seed: int = 0,
    interval: str = "wilson",
) -> list[Path]:
    """Every arithmetic table and figure, for the report.

    Writes into ``out_dir``: ``arithmetic_accuracy`` (Table 3, CSV + LaTeX),
    ``arithmetic_generation_change`` (Table 2, CSV + LaTeX), ``arithmetic_faa_by_horizon``
    (CSV and Figure 2 as PNG/PDF/SVG), ``arithmetic_faa_by_factor`` (CSV) and
    ``arithmetic_faa_by_factor_and_horizon`` (CSV and Figures 4-6 pooled over models).

    Args:
        results: Explicit-task result rows (see :func:`scored_rows`).
        stimulus_set: The set they were scored on, or its folder.
        out_dir: Folder to write into (created).
        n_boot: Bootstrap resamples.
        seed: Bootstrap seed.
        interval: ``wilson`` (default) or the paper's ``bootstrap`` (:func:`rate_interval`).

    Returns:
        The paths written.
    """
    folder = Path(out_dir)
    folder.mkdir(parents=True, exist_ok=True)
    rows = scored_rows(results, stimulus_set)
    written = []
    written += write_table(
        accuracy_table(rows, n_boot=n_boot, seed=seed, interval=interval),
        folder / "arithmetic_accuracy",
        latex=True,
    )
    written += write_table(
        generation_change(rows), folder / "arithmetic_generation_change", latex=True
    )
    horizons = horizon_table(rows, n_boot=n_boot, seed=seed, interval=interval)
    written += write_table(horizons, folder / "arithmetic_faa_by_horizon")
    written += plot_faa_by_horizon(horizons, folder / "arithmetic_faa_by_horizon")
    written += write_table(
        factor_table(rows, n_boot=n_boot, seed=seed, interval=interval),
        folder / "arithmetic_faa_by_factor",
    )
    by_horizon = factor_table(rows, by_horizon=True, n_boot=n_boot, seed=seed, interval=interval)
    stem = folder / "arithmetic_faa_by_factor_and_horizon"
    written += write_table(by_horizon, stem)
    written += plot_factors_by_horizon(by_horizon, stem)
    return written
