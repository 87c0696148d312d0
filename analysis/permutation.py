"""The recency test by permutation of items: exact under the null whatever the items' spread.

Recency (the focus position) varies only between items, and in the human protocol it varies
only inside complexity 3 and 4, among 20 of the 36 items, four of them at the far end. With so
few items carrying the information, every asymptotic reference (z, t with between-within
degrees of freedom, the likelihood-ratio chi-square) rejected a true recency null far more
often than 5% once items differ by SD 0.5 on the log-odds scale (9-13% for glmer, 8-11% for the
two-way GLM; ``benchmarks/bench_null_calibration.py``).

A permutation test does not lean on asymptotics. Under the null the focus position an item
carries is unrelated to how the item is answered, so within a stratum of items that the null
model treats alike (the same complexity) any relabelling of focus positions is as likely as
the one observed. The statistic is the score of recency at the null model (model 1: complexity
x task, fitted once; it does not involve recency, so it is the same under every relabelling):

    T = sum over items of (f_i - mean of f in the item's stratum) * (sum of y - mu over its trials)

and the two-sided p is the share of relabellings with ``|T|`` at least the observed one,
counting the observed labelling itself (``(1 + k) / (1 + B)``), so the test is exact up to the
Monte Carlo error of ``B`` random relabellings. Strata are the exact complexity levels, so a
complexity effect of any shape (not only the model's linear one) cannot leak into the test.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from tracktale.errors import TracktaleError

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

PERMUTATIONS = 9999
"""Random relabellings of the report's test (Monte Carlo SE of a p of 0.05: 0.002)."""
PERMUTATION_SEED = 20240501
"""Fixed, so the report's p is the same on every run of the same data."""


@dataclass(frozen=True)
class PermutationTest:
    """A stratified item-permutation test of an item-level covariate.

    Attributes:
        covariate: The covariate tested (``focus`` or ``sentences_since_focus``).
        statistic: The observed score statistic ``T`` (its sign is the direction of the effect).
        p: Two-sided p, ``(1 + k) / (1 + B)``.
        permutations: ``B``, the random relabellings drawn.
        items: Items in the test; ``informative_items``: those in strata where it varies.
        strata: Strata (complexity levels); ``informative_strata``: those where it varies.
    """

    covariate: str
    statistic: float
    p: float
    permutations: int
    items: int
    informative_items: int
    strata: int
    informative_strata: int

    def row(self) -> dict[str, object]:
        """The test as one table row."""
        return {
            "test": "recency",
            "method": "item permutation within complexity levels (score at model 1)",
            **self.__dict__,
        }


def item_residuals(
    frame: pd.DataFrame, fitted: np.ndarray, covariate: str, stratum: str = "complexity"
) -> pd.DataFrame:
    """Per item: the summed residual of the null model, the covariate and the stratum.

    Raises:
        TracktaleError: When an item carries two values of the covariate or of the stratum
            (the test needs both to be properties of the item).
    """
    residual = frame["correct"].to_numpy(dtype=float) - fitted
    grouped = frame.assign(_residual=residual).groupby("item_id", sort=True)
    for column in (covariate, stratum):
        varying = grouped[column].nunique()
        if (varying > 1).any():
            raise TracktaleError(
                f"{column} varies within item {varying[varying > 1].index[0]}: the item "
                "permutation test needs it to be a property of the item"
            )
    return grouped.agg(
        residual=("_residual", "sum"), value=(covariate, "first"), stratum=(stratum, "first")
    )


def stratified_permutation_p(
    values: np.ndarray,
    residuals: np.ndarray,
    strata: np.ndarray,
    permutations: int = PERMUTATIONS,
    seed: int = PERMUTATION_SEED,
) -> tuple[float, float]:
    """The observed score statistic and its two-sided permutation p.

    Args:
        values: The covariate of each item.
        residuals: Each item's summed null-model residual.
        strata: Each item's stratum; values are permuted within strata only.
        permutations: Random relabellings ``B``.
        seed: Seed of the relabellings.

    Returns:
        ``(T, p)``; ``p`` is NaN where the covariate is constant within every stratum.
    """
    import numpy as np

    rng = np.random.default_rng(seed)
    centred = np.asarray(values, dtype=float).copy()
    shuffled = np.zeros((permutations, len(centred)))
    for level in np.unique(strata):
        members = np.flatnonzero(strata == level)
        centred[members] -= centred[members].mean()
        block = np.broadcast_to(centred[members], (permutations, len(members)))
        shuffled[:, members] = rng.permuted(block, axis=1)
    observed = float(centred @ residuals)
    if not np.any(centred):
        return observed, float("nan")
    drawn = np.abs(shuffled @ residuals)
    # A relative tolerance so that relabellings tied with the observed one count as extreme.
    extreme = int(np.sum(drawn >= abs(observed) * (1 - 1e-9)))
    return observed, (1 + extreme) / (1 + permutations)


def recency_permutation_test(
    frame: pd.DataFrame,
    fitted: np.ndarray,
    covariate: str = "focus",
    permutations: int = PERMUTATIONS,
    seed: int = PERMUTATION_SEED,
) -> PermutationTest:
    """The report's recency test: items' focus positions permuted within complexity levels.

    Args:
        frame: The design frame of model 1 with ``item_id``, ``complexity`` and the covariate.
        fitted: Model 1's fitted probabilities, one per row of ``frame``.
        covariate: The recency covariate.
        permutations: Random relabellings.
        seed: Seed of the relabellings.

    Returns:
        The test.
    """
    import numpy as np

    items = item_residuals(frame, np.asarray(fitted, dtype=float), covariate)
    values = items["value"].to_numpy(dtype=float)
    strata = items["stratum"].to_numpy(dtype=float)
    statistic, p = stratified_permutation_p(
        values, items["residual"].to_numpy(), strata, permutations, seed
    )
    varies = items.groupby("stratum")["value"].nunique() > 1
    return PermutationTest(
        covariate=covariate,
        statistic=statistic,
        p=p,
        permutations=permutations,
        items=len(items),
        informative_items=int(items["stratum"].isin(varies[varies].index).sum()),
        strata=len(varies),
        informative_strata=int(varies.sum()),
    )


def recency_test_of_trials(
    analysed: pd.DataFrame,
    recency: str = "focus",
    task_coding: str = "sum",
    permutations: int = PERMUTATIONS,
    seed: int = PERMUTATION_SEED,
) -> PermutationTest:
    """:func:`recency_permutation_test` on analysed human trials (model 1 fitted here).

    Model 1 is the GLM of complexity x task fitted on the trials that model 2 uses (those
    with a recency value); its fixed-effect fit is all the score statistic needs.

    Raises:
        TracktaleError: When model 1 cannot be fitted or recency is not an item property.
    """
    from tracktale.analysis.glm import design_frame, fit_clustered_logit, glm_terms

    frame, _ = design_frame(analysed, recency=recency, task_coding=task_coding, extra=("item_id",))
    terms = glm_terms(False, frame["task"].nunique() == 2)
    try:
        fitted = fit_clustered_logit(frame, terms).predict()
    except (ValueError, ArithmeticError) as error:
        raise TracktaleError(f"model 1 for the recency permutation test: {error}") from error
    return recency_permutation_test(frame, fitted, recency, permutations, seed)
