"""Tables, figures and a short Markdown summary of ``analysis reading``."""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING

from tracktale.analysis.report.style import OKABE_ITO, new_figure, save_figure, styled
from tracktale.analysis.report.tables import save_table
from tracktale.atomic import atomic_write_text

if TYPE_CHECKING:
    import pandas as pd

    from tracktale.analysis.reading.analyse import ReadingOptions, ReadingResult

BINS = 10
SMOOTH_FRACTION = 0.3
"""The lowess span: the share of the words each local fit uses."""
SMOOTH_POINTS = 100
"""Surprisal values the lowess curve is evaluated at."""


def write_outputs(result: ReadingResult, options: ReadingOptions, out: Path) -> list[Path]:
    """Write the tables (CSV and LaTeX), figures (PNG, PDF, SVG) and ``summary.md``."""
    paths: list[Path] = []
    for table, name, title in (
        (result.exclusions, "reading_exclusions", "Reading times excluded, by rule"),
        (result.coefficients, "reading_coefficients", "Regressions of log reading time"),
        (result.delta_ll, "reading_delta_ll", "Held-out ΔLL per word, by model"),
        (result.random_effects, "reading_random_effects",
         "Random effects of the lmer regressions: every fit, by model"),
        (binned(result.rows, result.columns[0].column), "reading_rt_by_surprisal",
         "Reading time by surprisal bin (first model)"),
        (smooth(result.rows, result.columns[0].column), "reading_rt_smooth",
         "Lowess of the words' mean reading time on surprisal (first model)"),
    ):  # fmt: skip
        paths.append(save_table(table, out, name, title).paths["csv"])
    with styled():
        paths += _figures(result, out)
    summary = out / "summary.md"
    atomic_write_text(summary, summary_text(result, options))
    return [*paths, summary]


def binned(rows: pd.DataFrame, column: str, bins: int = BINS) -> pd.DataFrame:
    """Mean RT per surprisal decile: each participant's mean, then their mean and 95% interval.

    With one participant (a table of by-word means) the interval is over the bin's words, and
    the count column is `words` instead of `participants`.
    """
    import numpy as np
    import pandas as pd

    edges = np.unique(np.quantile(rows[column], np.linspace(0, 1, bins + 1)))
    codes = np.clip(np.searchsorted(edges, rows[column], side="right") - 1, 0, len(edges) - 2)
    frame = pd.DataFrame(
        {"bin": codes, "participant": rows["participant"], "rt": rows["rt_ms"],
         "surprisal": rows[column]}
    )  # fmt: skip
    people = frame.groupby(["bin", "participant"]).agg(rt=("rt", "mean"))
    over = "participants"
    if frame["participant"].nunique() == 1:
        people, over = frame, "words"
    summary = people.groupby("bin")["rt"].agg(["mean", "std", "count"])
    half = 1.96 * summary["std"] / np.sqrt(summary["count"])
    return pd.DataFrame(
        {
            "surprisal": frame.groupby("bin")["surprisal"].mean().to_numpy(),
            "rt_ms": summary["mean"].to_numpy(),
            "ci_low": (summary["mean"] - half).to_numpy(),
            "ci_high": (summary["mean"] + half).to_numpy(),
            over: summary["count"].to_numpy(),  # what the interval is over, and how many
        }
    )


def smooth(
    rows: pd.DataFrame, column: str, fraction: float = SMOOTH_FRACTION, points: int = SMOOTH_POINTS
) -> pd.DataFrame:
    """A lowess curve of mean RT on surprisal: ``surprisal``, ``rt_ms`` at ``points`` values.

    Smoothed are the words' mean RTs over participants (one point per item and word), not every
    reading time: each word counts once, and the curve costs seconds on a corpus of ~10,000
    words rather than minutes on its million reading times. The local fits are plain least
    squares (no robustness passes): robust lowess follows the typical word, which for skewed
    reading times runs below the decile means it is drawn over. The curve is evaluated at
    ``points`` evenly spaced surprisals from the smallest to the largest (a table of that many
    rows, not one per word).
    """
    import numpy as np
    import pandas as pd
    from statsmodels.nonparametric.smoothers_lowess import lowess

    words = rows.groupby(["item", "word_index"]).agg(x=(column, "first"), rt=("rt_ms", "mean"))
    x = words["x"].to_numpy(float)
    grid = np.linspace(x.min(), x.max(), points)
    fitted = lowess(words["rt"].to_numpy(float), x, frac=fraction, it=0, xvals=grid)
    return pd.DataFrame({"surprisal": grid, "rt_ms": fitted})


def rt_figure(rows: pd.DataFrame, column: str, title: str):
    """Binned mean RTs with their 95% intervals, and the lowess curve over the words' means."""
    table = binned(rows, column)
    curve = smooth(rows, column)
    figure = new_figure()
    axes = figure.axes[0]
    axes.plot(
        curve["surprisal"], curve["rt_ms"], color=OKABE_ITO[1], linewidth=1.2,
        label=f"lowess (span {SMOOTH_FRACTION:g}) of word means",
    )  # fmt: skip
    axes.errorbar(
        table["surprisal"],
        table["rt_ms"],
        yerr=[table["rt_ms"] - table["ci_low"], table["ci_high"] - table["rt_ms"]],
        marker="o", linestyle="none", color=OKABE_ITO[0], label="decile mean, 95% CI",
    )  # fmt: skip
    axes.set(xlabel="surprisal (nats)", ylabel="reading time (ms)", title=title)
    axes.legend()
    return figure


def _figures(result: ReadingResult, out: Path) -> list[Path]:
    paths = []
    column = result.columns[0]
    figure = rt_figure(result.rows, column.column, column.label)
    paths.append(save_figure(figure, out, "reading_rt_by_surprisal", "RT by surprisal"))
    delta = result.delta_ll
    for x, name, label in (
        ("training_tokens", "reading_delta_ll_by_tokens", "training tokens"),
        ("parameters", "reading_delta_ll_by_size", "parameters"),
    ):
        present = delta[delta[x].notna()]
        if present.empty or (x == "parameters" and present["parameters"].nunique() < 2):
            continue
        paths.append(save_figure(_delta_plot(present, x, label), out, name, f"ΔLL by {label}"))
    return [saved.paths["png"] for saved in paths]


def _delta_plot(delta: pd.DataFrame, x: str, label: str):
    figure = new_figure()
    axes = figure.axes[0]
    for model, group in delta.groupby("label", sort=False):
        group = group.sort_values(x)
        axes.errorbar(
            group[x].clip(lower=1), 1000 * group["delta_ll_per_word"],
            yerr=1000 * 1.96 * group["delta_ll_se"], marker="o", label=str(model),
        )  # fmt: skip
    axes.axhline(0, color="grey", linewidth=0.8)
    axes.set(xscale="log", xlabel=label, ylabel="ΔLL (millinats per word)")
    if delta["label"].nunique() > 1:
        axes.legend()
    return figure


def _engine_text(result: ReadingResult, options: ReadingOptions) -> str:
    if result.rows["participant"].nunique() == 1:
        return (
            f"one participant, by-word means: lmer, item random effects below "
            f"(`--random {options.random}`)"
            if result.engine == "lme4"
            else "one participant, by-word means: OLS, SEs clustered by item"
        )
    if result.engine == "lme4":
        return f"lmer, random effects below (`--random {options.random}`)"
    return (
        "fallback without R: OLS with participant fixed effects, SEs clustered by participant"
        " and item"
    )


def random_lines(random_effects: pd.DataFrame) -> list[str]:
    """Each model's fitted random part and, where there were several fits, every step."""
    from tracktale.analysis.reading.regression import random_of

    lines = []
    for model, steps in random_effects.groupby("model", sort=False):
        lines.append(f"- {model}: `{steps['fitted'].iloc[0]}`")
        if len(steps) == 1 and not steps["singular"].iloc[0]:
            continue
        for row in steps.itertuples():
            state = "singular" if row.singular else "ok" if row.converged else "not converged"
            lines.append(
                f"    {row.step}. {row.action} ({row.reason}): `{random_of(row.formula)}` -> "
                f"{state}"
            )
    return lines


def summary_text(result: ReadingResult, options: ReadingOptions) -> str:
    """A Markdown page: engine, exclusions and each model's ΔLL and surprisal slope."""
    rules = options.exclusions
    lines = [
        "# Reading times and surprisal",
        "",
        f"- Regressions: **{result.engine}** ({_engine_text(result, options)})",
        f"- ΔLL: {options.folds}-fold cross-validation over {options.fold_by}; one-sided "
        f"permutation test with {options.permutations} permutations.",
        f"- Exclusions: RT outside {rules.min_rt_ms:g}-{rules.max_rt_ms:g} ms, first/last word "
        f"of a screen: {rules.first_last}, words with punctuation: {rules.punctuation}.",
        *(["", "Random effects (lmer; every fit in reading_random_effects.csv):",
           *random_lines(result.random_effects)] if len(result.random_effects) else []),
        "",
        "| rule | rows |",
        "|---|---|",
        *(f"| {row.rule} | {row.rows} |" for row in result.exclusions.itertuples()),
        "",
        "| model | revision | ΔLL (millinats/word) | p (permutation) | surprisal slope [95% CI] |",
        "|---|---|---|---|---|",
    ]  # fmt: skip
    for row in result.delta_ll.itertuples():
        p = "n/a" if math.isnan(row.p_permutation) else f"{row.p_permutation:.3f}"
        lines.append(
            f"| {row.model_id} | {row.revision or '-'} | {1000 * row.delta_ll_per_word:.2f} "
            f"| {p} | {row.surprisal_slope:.4f} [{row.slope_ci_low:.4f}, "
            f"{row.slope_ci_high:.4f}] |"
        )
    return "\n".join(lines) + "\n"
