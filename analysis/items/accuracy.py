"""Accuracy by the declared factors, people and models side by side, one figure per factor.

People's intervals are percentile bootstraps over participants (each resample draws
participants with replacement and pools their trials in the cell), so a participant's trials
move together, as they are not independent. Models' intervals are Wilson intervals over items
(a model is one agent: its items are the only sampling units).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tracktale.analysis.items.data import (
    Factor,
    analysed_people,
    declared_factors,
    judged_model_rows,
    ordered,
)

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

    from tracktale.analysis.report.build import ReportContext, SectionResult
    from tracktale.analysis.report.style import SavedFigure

N_BOOT = 2000
"""Bootstrap resamples of participants."""
LEVEL = 0.95
PEOPLE = "people"
"""The ``who`` of the people's rows (a model's is its id)."""
BOOTSTRAP_SEED = 20240601
"""The bootstrap's seed: the same data give the same intervals."""


def accuracy_section(context: ReportContext) -> SectionResult | None:
    """People and models by every cell of the factors, and by each factor (a figure each)."""
    from tracktale.analysis.report.build import SectionResult
    from tracktale.analysis.report.tables import save_table

    people, rules = analysed_people(context)
    models = judged_model_rows(context)
    if people is None and models is None:
        return None
    factors = declared_factors(context)
    section = SectionResult(title=f"{context.paradigm}: accuracy by the design's factors")
    cells = accuracy_table(people, models, factors)
    names = ", ".join(factor.name for factor in factors) or "no factors"
    section.tables.append(
        save_table(
            cells,
            context.tables_dir,
            "items_cells",
            f"Accuracy on the test items by {names}: people (participant bootstrap) and models "
            "(Wilson over items), 95% intervals",
        )
    )
    for factor in factors:
        table = accuracy_table(people, models, [factor])
        section.tables.append(
            save_table(
                table,
                context.tables_dir,
                f"items_by_{factor.name}",
                f"Accuracy by {factor.name} (95% intervals)",
            )
        )
        section.figures.append(factor_figure(table, factor, context))
    section.html = _notes(rules, people)
    return section


def accuracy_table(
    people: pd.DataFrame | None, models: pd.DataFrame | None, factors: list[Factor]
) -> pd.DataFrame:
    """One row per who (people, each model), task and cell of ``factors``.

    Columns: ``who``, ``task``, one per factor (named as declared), ``participants`` (people),
    ``n`` (trials), ``accuracy``, ``ci_low``, ``ci_high`` and ``interval``.
    """
    import pandas as pd

    parts = []
    if people is not None:
        parts.append(_people_rows(people, factors))
    if models is not None:
        parts.append(_model_rows(models, factors))
    table = pd.concat(parts, ignore_index=True)
    for factor in factors:
        table[factor.name] = ordered(table[factor.name], factor)
    keys = ["who", "task", *(factor.name for factor in factors)]
    table["who"] = pd.Categorical(
        table["who"], categories=list(dict.fromkeys([PEOPLE, *sorted(set(table["who"]))]))
    )
    table = table.sort_values(keys, kind="stable").reset_index(drop=True)
    for column in ("who", *(factor.name for factor in factors)):
        table[column] = table[column].astype(str)
    return table


def _people_rows(people: pd.DataFrame, factors: list[Factor]) -> pd.DataFrame:
    import numpy as np
    import pandas as pd

    keys = ["task", *(factor.column for factor in factors)]
    rng = np.random.default_rng(BOOTSTRAP_SEED)
    rows = []
    for key, cell in people.groupby(keys, sort=True, observed=True):
        per_person = cell.groupby("agent")["correct"].agg(["sum", "size"])
        correct = per_person["sum"].to_numpy(dtype=float)
        trials = per_person["size"].to_numpy(dtype=float)
        low, high = participant_bootstrap(correct, trials, rng)
        values = key if isinstance(key, tuple) else (key,)
        rows.append(
            {
                "who": PEOPLE,
                **dict(zip(["task", *(f.name for f in factors)], values, strict=True)),
                "participants": len(per_person),
                "n": int(trials.sum()),
                "accuracy": float(correct.sum() / trials.sum()),
                "ci_low": low,
                "ci_high": high,
                "interval": "participant bootstrap",
            }
        )
    return pd.DataFrame(rows)


def participant_bootstrap(
    correct: np.ndarray, trials: np.ndarray, rng: np.random.Generator, n_boot: int = N_BOOT
) -> tuple[float, float]:
    """Percentile interval of pooled accuracy when participants are drawn with replacement.

    Args:
        correct: Correct trials of each participant.
        trials: Trials of each participant.
        rng: The random generator.
        n_boot: Resamples.

    Returns:
        ``(low, high)``; ``(nan, nan)`` with fewer than two participants.
    """
    import numpy as np

    count = len(trials)
    if count < 2:
        return float("nan"), float("nan")
    weights = rng.multinomial(count, np.full(count, 1 / count), size=n_boot)
    rates = (weights @ correct) / (weights @ trials)
    tail = (1 - LEVEL) / 2
    low, high = np.quantile(rates, [tail, 1 - tail])
    return float(low), float(high)


def _model_rows(models: pd.DataFrame, factors: list[Factor]) -> pd.DataFrame:
    from tracktale.analysis.stats.proportions import wilson_interval

    keys = ["agent", "task", *(factor.column for factor in factors)]
    table = models.groupby(keys, sort=True)["correct"].agg(n="size", k="sum").reset_index()
    table = table.rename(columns={"agent": "who", **{f.column: f.name for f in factors}})
    bounds = [wilson_interval(int(k), int(n)) for k, n in zip(table["k"], table["n"], strict=True)]
    table["participants"] = float("nan")
    table["accuracy"] = table["k"] / table["n"]
    table["ci_low"] = [low for low, _ in bounds]
    table["ci_high"] = [high for _, high in bounds]
    table["interval"] = "Wilson over items"
    return table.drop(columns="k")


def factor_figure(table: pd.DataFrame, factor: Factor, context: ReportContext) -> SavedFigure:
    """Accuracy by the factor's levels: one line per who and task, with its interval."""
    from tracktale.analysis.report.style import new_figure, percent_axes, save_figure, styled

    levels = list(dict.fromkeys(table[factor.name]))
    series = list(dict.fromkeys(zip(table["who"], table["task"], strict=True)))
    with styled():
        figure = new_figure(1, width=max(5.4, 1.2 * len(levels) + 4.2))
        ax = figure.axes[0]
        for index, (who, task) in enumerate(series):
            rows = table[(table["who"] == who) & (table["task"] == task)]
            shift = (index - (len(series) - 1) / 2) * 0.08
            x = [levels.index(level) + shift for level in rows[factor.name]]
            accuracy = rows["accuracy"].to_numpy(dtype=float)
            errors = [accuracy - rows["ci_low"].to_numpy(float), rows["ci_high"] - accuracy]
            ax.errorbar(x, accuracy, yerr=errors, marker="o", capsize=3, label=f"{who}: {task}")
        ax.set_xticks(range(len(levels)), levels)
        ax.set_xlabel(factor.name)
        percent_axes(figure, chance=None)
        ax.legend(fontsize="small", frameon=False, loc="upper left", bbox_to_anchor=(1.02, 1))
        return save_figure(
            figure,
            context.figures_dir,
            f"items_by_{factor.name}",
            f"Accuracy by {factor.name}: people (participant bootstrap) and models (Wilson), 95%",
        )


def _notes(rules: list[str], people: pd.DataFrame | None) -> str:
    import html

    if people is None:
        return "<p>No human data: the models only.</p>"
    count = people["agent"].nunique()
    sources = ", ".join(sorted(set(people["source"].dropna()))) if "source" in people else ""
    listed = "".join(f"<li>{html.escape(rule)}</li>" for rule in rules)
    return (
        f"<p>{count} participants ({html.escape(sources)}) after these rules:</p><ul>{listed}</ul>"
        f"<p>People's 95% intervals: percentile bootstrap over participants ({N_BOOT} "
        "resamples); models': Wilson over items.</p>"
    )
