"""Item-permutation tests of recency and complexity: exact whatever the items' spread.

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

Complexity is tested the same way (:func:`complexity_test_of_trials`): it too varies only
between items (the 36 main items), and glmer and the two-way GLM rejected its true null 7-7.5%
of the time at N 48, item SD 0.5. The null model is task only (no complexity, no interaction),
the statistic the score of centred complexity there, and the items' complexity values are
permuted across all items (one stratum). The null tested is that an item's complexity is
unrelated to how it is answered in either task: no complexity main effect *and* no complexity x
task interaction. Each item is answered in both tasks (across the lists), so an interaction
without a main effect (the tasks' slopes opposite) largely cancels in an item's summed residual
and the test then stays close to its level, but it is exact only under that joint null.
Exchangeability assumes that, under it, items differ only at random (items of any complexity
alike in difficulty, recency included) and that each item is seen in about the same number of
trials in each task, as the four lists make it.

Since issue 29's second pass the complexity test's default statistic is not this score but the
slope of the items' empirical logits over its two-way SE
(:mod:`~tracktale.analysis.stats.logit_permutation`): under a truth whose item SD grows with
complexity and whose participants have their own complexity slopes the score rejected about 6%;
``complexity_test_of_trials(..., statistic="score")`` keeps it.
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
RECENCY_METHOD = "item permutation within complexity levels (score at model 1)"
COMPLEXITY_METHOD = "item permutation across all items (score at the task-only model)"
COMPLEXITY_LOGIT_METHOD = (
    "item permutation across all items (empirical-logit slope over its two-way SE)"
)
COMPLEXITY_T_METHOD = "items' empirical-logit slope over its two-way SE (HC3), t(items - 2)"
COMPLEXITY_STATISTICS = ("logit-hc3-t", "logit-two-way", "score")
"""The complexity test's statistics: the default first (issue 29, third pass: no permutation),
then the permuted studentized slope (the default of the second pass) and the score."""
UNPERMUTED_STATISTICS = frozenset({"logit-hc3-t"})
"""The complexity statistics whose test draws no relabelling (so ``--permutations 0``, which
leaves the permutation tests out, keeps them)."""


@dataclass(frozen=True)
class PermutationTest:
    """A stratified item-permutation test of an item-level covariate.

    Attributes:
        covariate: The covariate tested (``focus``, ``sentences_since_focus``, ``complexity``).
        statistic: The observed score statistic ``T`` (its sign is the direction of the effect).
        p: Two-sided p, ``(1 + k) / (1 + B)``.
        permutations: ``B``, the random relabellings drawn.
        items: Items in the test; ``informative_items``: those in strata where it varies.
        strata: Strata (complexity levels); ``informative_strata``: those where it varies.
        test: The test's name in tables (``recency`` or ``complexity``).
        method: How it permutes, for tables.
    """

    covariate: str
    statistic: float
    p: float
    permutations: int
    items: int
    informative_items: int
    strata: int
    informative_strata: int
    test: str = "recency"
    method: str = RECENCY_METHOD

    def row(self) -> dict[str, object]:
        """The test as one table row (``test`` and ``method`` first)."""
        return {"test": self.test, "method": self.method, **self.__dict__}


def item_residuals(
    frame: pd.DataFrame, fitted: np.ndarray, covariate: str, stratum: str | None = "complexity"
) -> pd.DataFrame:
    """Per item: the summed residual of the null model, the covariate and the stratum.

    ``stratum=None`` puts every item in one stratum (stratum 0).

    Raises:
        TracktaleError: When an item carries two values of the covariate or of the stratum
            (the test needs both to be properties of the item).
    """
    residual = frame["correct"].to_numpy(dtype=float) - fitted
    if stratum is None:
        frame, stratum = frame.assign(_one_stratum=0.0), "_one_stratum"
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


def item_permutation_test(
    frame: pd.DataFrame,
    fitted: np.ndarray,
    covariate: str,
    stratum: str | None = "complexity",
    permutations: int = PERMUTATIONS,
    seed: int = PERMUTATION_SEED,
    *,
    test: str = "recency",
    method: str = RECENCY_METHOD,
) -> PermutationTest:
    """An item-level covariate's values permuted across items within strata.

    Args:
        frame: The null model's design frame with ``item_id``, the covariate and the stratum.
        fitted: The null model's fitted probabilities, one per row of ``frame``.
        covariate: The covariate tested.
        stratum: The column whose levels are the strata (``None``: one stratum).
        permutations: Random relabellings.
        seed: Seed of the relabellings.
        test: The test's name in tables.
        method: How it permutes, for tables.

    Returns:
        The test.
    """
    import numpy as np

    items = item_residuals(frame, np.asarray(fitted, dtype=float), covariate, stratum)
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
        test=test,
        method=method,
    )


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
    return item_permutation_test(frame, fitted, covariate, "complexity", permutations, seed)


def _null_fit(frame: pd.DataFrame, terms: list[str], model: str) -> np.ndarray:
    """The null model's fitted probabilities (one fixed-effect fit is all a score needs)."""
    import numpy as np

    from tracktale.analysis.stats.glm import fit_clustered_logit

    try:
        return np.asarray(fit_clustered_logit(frame, terms).predict(), dtype=float)
    except (ValueError, ArithmeticError) as error:
        raise TracktaleError(f"{model}: {error}") from error


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
    from tracktale.analysis.stats.glm import design_frame, glm_terms

    frame, _ = design_frame(analysed, recency=recency, task_coding=task_coding, extra=("item_id",))
    terms = glm_terms(False, frame["task"].nunique() == 2)
    fitted = _null_fit(frame, terms, "model 1 for the recency permutation test")
    return recency_permutation_test(frame, fitted, recency, permutations, seed)


def complexity_test_of_trials(
    analysed: pd.DataFrame,
    task_coding: str = "sum",
    permutations: int = PERMUTATIONS,
    seed: int = PERMUTATION_SEED,
    statistic: str = COMPLEXITY_STATISTICS[0],
) -> PermutationTest:
    """The report's complexity test: the items' complexity slope, tested across all items.

    ``statistic="logit-hc3-t"`` (the default since issue 29's third pass): the items'
    empirical-logit slope over its two-way SE with an HC3 items' part, referred to
    t(items - 2), no relabelling (``permutations`` unused;
    :func:`~tracktale.analysis.stats.logit_permutation.logit_t_test`).
    ``statistic="logit-two-way"``: the slope of the items' empirical logits on
    complexity over its two-way SE (:mod:`~tracktale.analysis.stats.logit_permutation`).
    ``statistic="score"`` (the default before issue 29's second pass): the null model is the
    GLM of task alone (sum-coded as model 1; intercept only when one task is present), fitted
    on model 1's trials; the statistic is the score of complexity there, ``sum over items of
    (c_i - mean c) * (sum of y - mu over its trials)``. What the null is and what
    exchangeability assumes: see the module docstring.

    Raises:
        TracktaleError: When the null model cannot be fitted, complexity is not an item
            property or the statistic is unknown.
    """
    from tracktale.analysis.stats.glm import design_frame

    if statistic not in COMPLEXITY_STATISTICS:
        raise TracktaleError(
            f"unknown complexity statistic {statistic!r}: one of {', '.join(COMPLEXITY_STATISTICS)}"
        )
    frame, _ = design_frame(analysed, task_coding=task_coding, extra=("item_id",))
    if statistic in UNPERMUTED_STATISTICS:
        from tracktale.analysis.stats.logit_permutation import logit_t_test

        found = logit_t_test(frame)
        return PermutationTest(
            covariate="complexity", statistic=found.statistic, p=found.p, permutations=0,
            items=found.items, informative_items=found.items if found.varies else 0, strata=1,
            informative_strata=int(found.varies), test="complexity", method=COMPLEXITY_T_METHOD,
        )  # fmt: skip
    if statistic == "logit-two-way":
        from tracktale.analysis.stats.logit_permutation import logit_two_way_test

        found = logit_two_way_test(frame, permutations, seed)
        return PermutationTest(
            covariate="complexity",
            statistic=found.statistic,
            p=found.p,
            permutations=permutations,
            items=found.items,
            informative_items=found.items if found.varies else 0,
            strata=1,
            informative_strata=int(found.varies),
            test="complexity",
            method=COMPLEXITY_LOGIT_METHOD,
        )
    terms = ["task_s"] if frame["task"].nunique() == 2 else []
    fitted = _null_fit(frame, terms, "the task-only model for the complexity permutation test")
    return item_permutation_test(
        frame,
        fitted,
        "complexity",
        None,
        permutations,
        seed,
        test="complexity",
        method=COMPLEXITY_METHOD,
    )
