"""ΔLL: how much a model's surprisal improves held-out prediction of log reading times.

For each fold of a K-fold split over participants (or items), the baseline and the full
regression (baseline + surprisal and its spillover) are fitted by least squares with
participant intercepts on the other folds, and each held-out word gets its Gaussian
log-likelihood under each; a word's ΔLL is full minus baseline (Goodkind & Bicknell 2018; Wilcox
et al. 2020; Oh & Schuler 2023 report its mean per word). A held-out participant has no fitted
intercept: it is predicted with the participants' mean intercept, its variance adding the
participants' intercept variance, so the held-out density is the marginal one.

The test (one-sided: does surprisal help?) permutes the part of surprisal that the baseline
predictors do not explain across the scored words (item and position), recomputes its spillover
and the whole cross-validation, and counts permuted ΔLL at least as large as the observed one
(residuals under the reduced model, as in Freedman & Lane 1983, but of the predictor rather
than of the response). A paired t-test on the per-word differences is reported beside it; it
ignores that one person's (and one item's) words are not independent, and with nested models
cross-validated ΔLL is biased below zero under the null, so its error rate is not the nominal
one (see benchmarks/bench_reading_calibration.py).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import numpy as np

if TYPE_CHECKING:
    import pandas as pd

Folds = Literal["participants", "items"]


@dataclass(frozen=True)
class DeltaLL:
    """One model's ΔLL.

    Attributes:
        delta_ll: Mean held-out ΔLL per word (nats).
        per_word: Every held-out word's ΔLL.
        p_permutation: One-sided permutation p-value (``nan`` with no permutations).
        p_paired_t: One-sided paired t-test p-value on the per-word differences.
        n_words: Words evaluated.
    """

    delta_ll: float
    per_word: np.ndarray
    p_permutation: float
    p_paired_t: float
    n_words: int


def fold_labels(data: pd.DataFrame, k: int, by: Folds, seed: int) -> np.ndarray:
    """Each row's fold: participants (or items) shuffled and dealt into ``k`` folds.

    Raises:
        TracktaleError: With a single participant (or item): nothing is left to fit on.
    """
    from tracktale.errors import TracktaleError

    units = data["participant" if by == "participants" else "item"].astype(str).to_numpy()
    unique, codes = np.unique(units, return_inverse=True)
    if len(unique) < 2:
        other = "items" if by == "participants" else "participants"
        raise TracktaleError(
            f"cross-validation over {by} needs at least two, the data have {len(unique)}: "
            f"hold out {other} (--fold-by {other})"
        )
    k = min(k, len(unique))
    order = np.random.default_rng(seed).permutation(len(unique))
    fold_of_unit = np.empty(len(unique), int)
    fold_of_unit[order] = np.arange(len(unique)) % k
    return fold_of_unit[codes]


def heldout_loglik(
    y: np.ndarray, x: np.ndarray, person: np.ndarray, folds: np.ndarray
) -> np.ndarray:
    """Each row's held-out Gaussian log-likelihood (``x`` without intercept; ``person`` codes)."""
    out = np.empty(len(y))
    n_people = int(person.max()) + 1
    for fold in np.unique(folds):
        test, train = folds == fold, folds != fold
        p_train = person[train]
        counts = np.bincount(p_train, minlength=n_people).astype(float)
        stacked = np.column_stack([y[train], x[train]])
        sums = np.stack([np.bincount(p_train, column, n_people) for column in stacked.T], axis=1)
        means = sums / np.maximum(counts, 1)[:, None]
        within = stacked - means[p_train]
        # Normal equations: a few predictors, thousands of rows (lstsq's SVD is 100x slower).
        gram = within[:, 1:].T @ within
        beta = np.linalg.solve(gram[:, 1:], gram[:, 0])
        seen = counts > 0
        intercepts = means[:, 0] - means[:, 1:] @ beta
        n, k = within.shape[0], x.shape[1] + int(seen.sum())
        sigma2 = float(np.sum((within[:, 0] - within[:, 1:] @ beta) ** 2)) / max(n - k, 1)
        tau2 = (
            max(
                float(np.var(intercepts[seen], ddof=1)) - float(np.mean(sigma2 / counts[seen])), 0.0
            )
            if seen.sum() > 1
            else 0.0
        )
        p_test = person[test]
        known = seen[p_test]
        mean = np.where(known, intercepts[p_test], float(np.mean(intercepts[seen])))
        variance = np.where(known, sigma2, sigma2 + tau2)
        residual = y[test] - mean - x[test] @ beta
        out[test] = -0.5 * (np.log(2 * math.pi * variance) + residual**2 / variance)
    return out


def _spillover(values: np.ndarray, item_start: np.ndarray, lags: int) -> np.ndarray:
    """``values`` and its copies shifted by 1..``lags`` words within each item (NaN before)."""
    columns = [values]
    for lag in range(1, lags + 1):
        shifted = np.full(len(values), np.nan)
        shifted[lag:] = values[:-lag]
        position = np.arange(len(values)) - item_start
        shifted[position < lag] = np.nan
        columns.append(shifted)
    return np.column_stack(columns)


def delta_ll(
    rows: pd.DataFrame,
    words: pd.DataFrame,
    column: str,
    baseline: list[str],
    spillover: int,
    folds: np.ndarray,
    permutations: int = 99,
    seed: int = 0,
) -> DeltaLL:
    """The held-out ΔLL of ``column`` (and its spillover) over the baseline, with its tests.

    Args:
        rows: The kept reading times with the baseline predictors.
        words: The word table (:func:`tracktale.analysis.reading.predictors.word_table`):
            sorted by item and word, with ``length``, ``log_frequency``, ``position``.
        column: The surprisal column.
        baseline: The baseline predictors.
        spillover: Spillover lags of surprisal (0-2).
        folds: Each row's fold (:func:`fold_labels`).
        permutations: Permutations for the test (0: none).
        seed: Seed of the permutations.
    """
    from scipy import stats

    y = np.log(rows["rt_ms"].to_numpy(float))
    person = np.unique(rows["participant"].astype(str).to_numpy(), return_inverse=True)[1]
    base_x = rows[baseline].to_numpy(float)
    index = words.reset_index(drop=True)
    where = {key: i for i, key in enumerate(zip(index["item"], index["word_index"], strict=True))}
    codes = np.array([where[key] for key in zip(rows["item"], rows["word_index"], strict=True)])
    item_start = index.groupby("item", sort=False).cumcount().to_numpy()
    item_start = np.arange(len(index)) - item_start
    ll_base = heldout_loglik(y, base_x, person, folds)

    def observed_with(values: np.ndarray) -> np.ndarray:
        full_x = np.column_stack([base_x, _spillover(values, item_start, spillover)[codes]])
        return heldout_loglik(y, full_x, person, folds) - ll_base

    surprisal = index[column].to_numpy(float)
    per_word = observed_with(surprisal)
    observed = float(per_word.mean())
    p_perm = math.nan
    if permutations:
        fitted, residual, valid = _residualised(index, surprisal)
        rng = np.random.default_rng(seed)
        exceed = 0
        for _ in range(permutations):
            permuted = surprisal.copy()
            permuted[valid] = fitted + rng.permutation(residual)
            exceed += float(observed_with(permuted).mean()) >= observed
        p_perm = (1 + exceed) / (1 + permutations)
    sd = float(per_word.std(ddof=1))
    t = observed / (sd / math.sqrt(len(per_word))) if sd > 0 else 0.0
    return DeltaLL(
        observed, per_word, p_perm, float(stats.t.sf(t, len(per_word) - 1)), len(per_word)
    )


def _residualised(words: pd.DataFrame, surprisal: np.ndarray) -> tuple:
    """Surprisal split into what length, frequency and position predict and the rest."""
    valid = np.isfinite(surprisal)
    design = np.column_stack(
        [np.ones(int(valid.sum())), words.loc[valid, ["length", "log_frequency", "position"]]]
    )
    design = np.nan_to_num(design.astype(float))
    beta = np.linalg.lstsq(design, surprisal[valid], rcond=None)[0]
    fitted = design @ beta
    return fitted, surprisal[valid] - fitted, valid
