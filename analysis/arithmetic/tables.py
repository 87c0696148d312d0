"""The arithmetic paper's tables (Tables 1-4) and the tables behind its figures.

Every function takes the rows of :func:`~tracktale.analysis.arithmetic.rows.scored_rows`
(``faa``, ``caa`` and ``expected`` hold the chosen reference and first-answer rule) and returns
a DataFrame; rates are in percent.

Confidence intervals are 95% Wilson intervals over items by default (``interval="wilson"``,
statsmodels' ``proportion_confint``). The paper reports percentile bootstraps over the
evaluation examples (``interval="bootstrap"``, 2,000 resamples, seeded): for a 0/1 outcome the
mean of a resample of n items is distributed as Binomial(n, p)/n with p the observed rate, so
resamples are drawn that way. That bootstrap collapses to [1, 1] when every item is right (and
to [0, 0] when none is), claiming certainty from 20 items; Wilson gives [0.84, 1] at 20/20 and
agrees with the bootstrap elsewhere.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tracktale.analysis.arithmetic.paper_models import PAPER_MODELS, paper_model, short_label
from tracktale.analysis.arithmetic.rows import FACTORS, factor_rows
from tracktale.analysis.report.tables import to_latex
from tracktale.atomic import atomic_write_text
from tracktale.errors import TracktaleError
from tracktale.stimuli.arithmetic.scoring import caa_column, faa_column

if TYPE_CHECKING:
    import pandas as pd

    from tracktale.stimulus_set import StimulusSet

OPERATION_ORDER = ("add", "sub", "mul", "div", "mixed")
OPERATION_NAMES = {"add": "Add", "sub": "Subtract", "mul": "Multiply", "div": "Divide",
                   "mixed": "Mixed"}  # fmt: skip
SFB_LEVELS = ("exact", "under", "over")
N_BOOT = 2000
LEVEL = 0.95
INTERVALS = ("wilson", "bootstrap")
POOLED = "all models"


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
    from tracktale.analysis.stats.proportions import proportion_interval

    if interval == "wilson":
        return proportion_interval(successes, n, LEVEL)
    if interval == "bootstrap":
        return bootstrap_interval(successes, n, n_boot=n_boot, seed=seed)
    raise TracktaleError(f"unknown interval {interval!r} (use {' or '.join(INTERVALS)})")


def rate_table(
    rows: pd.DataFrame,
    by: Sequence[str],
    value: str = "faa",
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
        ``model``, ``label`` (the paper's abbreviation where known), ``n``, ``faa``,
        ``ci_low``, ``ci_high``, ``half_width``, ``caa``, ``faa_caa_gap`` (CAA - FAA, points)
        and ``par``, in percent, sorted by FAA.
    """
    table = rate_table(rows, ["model"], n_boot=n_boot, seed=seed, interval=interval)
    table = table.rename(columns={"rate": "faa"})
    table["half_width"] = (table["ci_high"] - table["ci_low"]) / 2
    means = rows.groupby("model")[["caa", "parseable"]].mean().mul(100)
    table = table.merge(means.reset_index(), on="model").rename(columns={"parseable": "par"})
    table["faa_caa_gap"] = table["caa"] - table["faa"]
    table.insert(1, "label", table["model"].map(short_label))
    columns = ["model", "label", "n", "faa", "ci_low", "ci_high", "half_width", "caa"]
    columns += ["faa_caa_gap", "par"]
    return table[columns].sort_values("faa", kind="stable").reset_index(drop=True)


def reference_table(rows: pd.DataFrame) -> pd.DataFrame:
    """FAA and CAA per model against both references and under both first-answer rules.

    Returns:
        Per model: ``n``, ``n_references_differ`` (items whose two references differ),
        ``faa_paper``, ``faa_ieee``, ``faa_numeric_paper``, ``faa_numeric_ieee``, ``caa_paper``,
        ``caa_ieee``, the same FAA pair on the differing items only (``faa_paper_differing``,
        ``faa_ieee_differing``), and ``first_answer_rules_differ`` (outputs whose first span is
        not a number while a later one is), in percent except the counts.
    """
    import pandas as pd

    records = []
    for model, group in rows.groupby("model", sort=True):
        differing = group[group["references_differ"]]
        record: dict[str, Any] = {
            "model": model,
            "n": len(group),
            "n_references_differ": len(differing),
        }
        for reference in ("paper", "ieee"):
            record[f"faa_{reference}"] = _rate(group[faa_column(reference, "span")])
            record[f"faa_numeric_{reference}"] = _rate(group[faa_column(reference, "numeric")])
            record[f"caa_{reference}"] = _rate(group[caa_column(reference)])
            record[f"faa_{reference}_differing"] = _rate(differing[faa_column(reference)])
        record["first_answer_rules_differ"] = int(group["first_answer_rules_differ"].sum())
        records.append(record)
    return pd.DataFrame.from_records(records)


def _rate(values: pd.Series) -> float:
    return 100 * float(values.mean()) if len(values) else math.nan


def set_references(stimulus_set: StimulusSet) -> pd.DataFrame:
    """Per dataset: items, items dividing by zero, items whose two references differ."""
    import pandas as pd

    records: dict[str, dict[str, Any]] = {}
    for item in stimulus_set:
        if item.paradigm != "arithmetic":
            continue
        truth = item.truth
        name = str(item.condition["dataset"])
        record = records.setdefault(
            name, {"dataset": name, "n": 0, "division_by_zero": 0, "references_differ": 0}
        )
        record["n"] += 1
        record["division_by_zero"] += bool(truth["flags"]["division_by_zero"])
        record["references_differ"] += bool(truth.get("references_differ", False))
    table = pd.DataFrame(list(records.values()))
    total = table[["n", "division_by_zero", "references_differ"]].sum()
    table = pd.concat([table, pd.DataFrame([{"dataset": "all", **total}])], ignore_index=True)
    table["references_differ_pct"] = 100 * table["references_differ"] / table["n"]
    return table


def models_table(rows: pd.DataFrame) -> pd.DataFrame:
    """Table 1: the models of the results, with the paper's abbreviation and scale group.

    Models of the paper's Table 1 come first, in its order; others follow by name.
    """
    import pandas as pd

    from tracktale.analysis.data.catalog import describe_model

    records = []
    for model in sorted(set(rows["model"])):
        known = paper_model(model)
        order = PAPER_MODELS.index(known) if known is not None else len(PAPER_MODELS)
        description = describe_model(model.split("@", 1)[0])
        records.append(
            {
                "abbreviation": known.abbreviation if known else "",
                "model": model,
                "paper_name": known.name if known else "",
                "params": known.parameters if known else description.size_label,
                "scale": known.scale if known else "",
                "_order": order,
            }
        )
    table = pd.DataFrame.from_records(records).sort_values(["_order", "model"], kind="stable")
    return table.drop(columns="_order").reset_index(drop=True)


def horizon_table(
    rows: pd.DataFrame, *, n_boot: int = N_BOOT, seed: int = 0, interval: str = "wilson"
) -> pd.DataFrame:
    """FAA (with interval), CAA, their gap and PAR by model and horizon (Figures 2, 3, 19)."""
    table = rate_table(rows, ["model", "horizon"], n_boot=n_boot, seed=seed, interval=interval)
    table = table.rename(columns={"rate": "faa"})
    means = rows.groupby(["model", "horizon"])[["caa", "parseable"]].mean().mul(100)
    table = table.merge(means.reset_index(), on=["model", "horizon"])
    table = table.rename(columns={"parseable": "par"})
    table["faa_caa_gap"] = table["caa"] - table["faa"]
    return table


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
        rows: Scored rows.
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


def answer_position_table(rows: pd.DataFrame) -> pd.DataFrame:
    """AP per model (Figure 7): mean (the paper's AP), quartiles, and outputs with an answer."""
    import pandas as pd

    records = []
    for model, group in rows.groupby("model", sort=True):
        positions = pd.to_numeric(group["answer_position"], errors="coerce").dropna()
        quartiles = positions.quantile([0.25, 0.5, 0.75]) if len(positions) else None
        records.append(
            {
                "model": model,
                "n": len(group),
                "n_answered": len(positions),
                "ap_mean": float(positions.mean()) if len(positions) else math.nan,
                **{
                    name: float(quartiles.iloc[i]) if quartiles is not None else math.nan
                    for i, name in enumerate(("ap_q1", "ap_median", "ap_q3"))
                },
            }
        )
    return pd.DataFrame.from_records(records)


def output_statistics(stimulus_set: StimulusSet, reference: str = "paper") -> pd.DataFrame:
    """Table 4: median, standard deviation, minimum and maximum of the expected outputs.

    Over the look-back-1 datasets (the only ones with all five operations), per operation, with
    numpy's float64 arithmetic: a standard deviation whose squares overflow is ``inf``, as the
    paper's multiplication row shows. ``n_non_finite`` counts ``inf``/``nan`` references, which
    are left out of every statistic.
    """
    import numpy as np
    import pandas as pd

    from tracktale.analysis.arithmetic.rows import _as_float
    from tracktale.stimuli.arithmetic.executor import parse_value

    key = "paper_reference" if reference == "paper" else "reference"
    values: dict[str, list[float]] = {}
    for item in stimulus_set:
        if item.paradigm == "arithmetic" and item.condition["lookback"] == 1:
            value = _as_float(parse_value(item.truth.get(key, item.truth["reference"])))
            values.setdefault(str(item.condition["operation"]), []).append(value)
    records = []
    for operation in [o for o in OPERATION_ORDER if o in values]:
        data = np.asarray(values[operation], dtype=float)
        finite = data[np.isfinite(data)]
        with np.errstate(over="ignore", invalid="ignore"):
            std = float(np.std(finite, ddof=1)) if len(finite) > 1 else math.nan
        records.append(
            {
                "task": OPERATION_NAMES[operation],
                "reference": reference,
                "n": len(data),
                "median": float(np.median(finite)) if len(finite) else math.nan,
                "std": std,
                "min": float(finite.min()) if len(finite) else math.nan,
                "max": float(finite.max()) if len(finite) else math.nan,
                "n_non_finite": int(len(data) - len(finite)),
            }
        )
    columns = ["task", "reference", "n", "median", "std", "min", "max", "n_non_finite"]
    return pd.DataFrame.from_records(records, columns=columns)


def magnitude_table(rows: pd.DataFrame, by: Sequence[str]) -> pd.DataFrame:
    """Median expected-output magnitude by horizon, correct vs incorrect (Figures 10-15).

    The magnitude is ``|expected|`` (the chosen reference); non-finite references are left out.

    Returns:
        Columns ``by``, ``horizon``, ``correct`` (FAA), ``n``, ``median_magnitude``.
    """
    import numpy as np

    finite = rows[np.isfinite(rows["expected"])].assign(
        magnitude=lambda frame: frame["expected"].abs(), correct=lambda frame: frame["faa"]
    )
    keys = [*by, "horizon", "correct"]
    grouped = finite.groupby(keys, sort=True)["magnitude"]
    table = grouped.agg(n="size", median_magnitude="median").reset_index()
    return table


def heatmap_table(rows: pd.DataFrame, factor: str) -> pd.DataFrame:
    """FAA per model and level of ``factor`` (the paper's Figures 16-17), wide."""
    import pandas as pd

    subset = factor_rows(rows, factor)
    if subset.empty:
        return pd.DataFrame()
    table = subset.pivot_table(index="model", columns=factor, values="faa", aggfunc="mean")
    return table.mul(100).reset_index().rename_axis(columns=None)


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


def write_table(
    table: pd.DataFrame, stem: Path, *, latex: bool = False, title: str | None = None
) -> list[Path]:
    """Write ``table`` as CSV (and as a booktabs LaTeX table captioned ``title``), atomically."""
    csv_path = stem.with_suffix(".csv")
    atomic_write_text(csv_path, table.to_csv(index=False, float_format="%.4f"))
    if not latex:
        return [csv_path]
    tex_path = stem.with_suffix(".tex")
    caption = title or stem.name.replace("_", " ")
    atomic_write_text(tex_path, to_latex(table, caption, label=stem.name, digits=2))
    return [csv_path, tex_path]
