"""``analysis reading`` as a function: join, exclude, fit, cross-validate, tabulate."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from tracktale.analysis.reading.deltall import Folds, delta_ll, fold_labels
from tracktale.analysis.reading.predictors import Exclusions, exclude, word_table
from tracktale.analysis.reading.regression import (
    Engine,
    Fit,
    RandomChoice,
    baseline_terms,
    fit_models,
    resolve_engine,
    surprisal_terms,
)
from tracktale.analysis.reading.surprisal import SurprisalColumn, join_surprisal

if TYPE_CHECKING:
    import pandas as pd

PYTHIA_TOKENS_PER_STEP = 2_097_152
"""Pythia's batch: 1,024 sequences of 2,048 tokens per step (Biderman et al. 2023)."""


@dataclass(frozen=True)
class ReadingOptions:
    """How to analyse reading times.

    Attributes:
        exclusions: Which reading times to leave out.
        spillover: Previous words in the spillover terms (0-2).
        engine: ``auto`` (lme4 with R, else statsmodels), ``lme4`` or ``statsmodels``.
        random: lmer's random slopes (:data:`~tracktale.analysis.reading.regression.RandomChoice`).
        folds: Cross-validation folds for ΔLL.
        fold_by: ``participants`` or ``items``.
        permutations: Permutations of the ΔLL test (0: none).
        seed: Seed of the folds and permutations.
    """

    exclusions: Exclusions = field(default_factory=Exclusions)
    spillover: int = 2
    engine: Engine = "auto"
    random: RandomChoice = "surprisal"
    folds: int = 10
    fold_by: Folds = "participants"
    permutations: int = 99
    seed: int = 0


@dataclass(frozen=True)
class ReadingResult:
    """What ``analysis reading`` found.

    Attributes:
        engine: The regression engine used.
        exclusions: ``rule``, ``rows``.
        coefficients: One row per model and term (``model``, ``term``, ``estimate``, ``se``,
            ``ci_low``, ``ci_high``, ``engine``, ``note``).
        delta_ll: One row per model and revision (ΔLL per word, tests, tokens, size).
        rows: The kept reading times with their predictors.
        columns: The models' surprisal columns.
        random_effects: Every lmer fit made, one row per model and step (``model``, ``step``,
            ``action``, ``reason``, ``formula``, ``singular``, ``converged``, ``logLik``,
            ``fitted``: the model's final random part); empty with statsmodels.
    """

    engine: str
    exclusions: pd.DataFrame
    coefficients: pd.DataFrame
    delta_ll: pd.DataFrame
    rows: pd.DataFrame
    columns: list[SurprisalColumn]
    random_effects: pd.DataFrame


def analyse_reading(
    reading: pd.DataFrame,
    words: pd.DataFrame,
    columns: list[SurprisalColumn],
    options: ReadingOptions,
) -> ReadingResult:
    """Join reading times with surprisal, exclude, fit both regressions and every ΔLL."""
    import pandas as pd

    names = [column.column for column in columns]
    table = word_table(words, reading, names, options.spillover)
    joined = join_surprisal(reading.drop(columns="log_frequency", errors="ignore"), table, [])
    baseline = baseline_terms(options.spillover)
    needed = baseline + [t for n in names for t in surprisal_terms(n, options.spillover)]
    rows, counts = exclude(joined, options.exclusions, needed)
    engine = resolve_engine(options.engine)
    models = {"baseline": baseline}
    models |= {n: baseline + surprisal_terms(n, options.spillover) for n in names}
    fits = fit_models(rows, models, engine, options.random)
    labels = {column.column: column.label for column in columns} | {"baseline": "baseline"}
    coefficients = pd.concat(
        [
            fit.fixed.assign(model=labels[name], engine=fit.engine, note=fit.note)
            for name, fit in fits.items()
        ],
        ignore_index=True,
    )
    folds = fold_labels(rows, options.folds, options.fold_by, options.seed)
    records = []
    for column in columns:
        result = delta_ll(
            rows, table, column.column, baseline, options.spillover, folds,
            options.permutations, options.seed,
        )  # fmt: skip
        records.append(_delta_record(column, result, fits[column.column].fixed))
    random_effects = random_steps(fits, labels)
    return ReadingResult(
        engine, counts, coefficients, pd.DataFrame(records), rows, columns, random_effects
    )


STEP_COLUMNS = ["step", "action", "reason", "formula", "singular", "converged", "logLik"]


def random_steps(fits: dict[str, Fit], labels: dict[str, str]) -> pd.DataFrame:
    """Every lmer fit of every model, with the model's fitted random part (empty without)."""
    import pandas as pd

    tables = [
        fit.steps[STEP_COLUMNS].assign(model=labels[name], fitted=fit.random)
        for name, fit in fits.items()
        if fit.steps is not None
    ]
    if not tables:
        return pd.DataFrame(columns=["model", *STEP_COLUMNS, "fitted"])
    return pd.concat(tables, ignore_index=True)[["model", *STEP_COLUMNS, "fitted"]]


def _delta_record(column: SurprisalColumn, result, fixed: pd.DataFrame) -> dict:
    from tracktale.analysis.data.catalog import describe_model, training_step

    slope = fixed[fixed["term"] == column.column].iloc[0]
    step = training_step(column.revision)
    description = describe_model(column.model_id)
    tokens = step * PYTHIA_TOKENS_PER_STEP if description.family == "Pythia" else math.nan
    return {
        "model_id": column.model_id,
        "revision": column.revision,
        "label": description.label,
        "parameters": description.nominal_parameters,
        "step": step,
        "training_tokens": tokens,
        "delta_ll_per_word": result.delta_ll,
        "delta_ll_se": float(result.per_word.std(ddof=1) / math.sqrt(result.n_words)),
        "p_permutation": result.p_permutation,
        "p_paired_t": result.p_paired_t,
        "n_words": result.n_words,
        "surprisal_slope": float(slope["estimate"]),
        "slope_ci_low": float(slope["ci_low"]),
        "slope_ci_high": float(slope["ci_high"]),
    }
