"""The complexity permutation test's default statistic: an empirical-logit slope, studentized.

The score statistic of :mod:`~tracktale.analysis.stats.permutation` rejected a true complexity
null about 6% of the time (5.8-6.8% in the four designs) under the null benchmarks' richer
truth, where items are not quite exchangeable across complexity levels: the item SD grows with
complexity, and participants have their own complexity slopes, which do not average out in a
study and which no relabelling of items can see (issue 29, second pass; ``benchmarks/RESULTS.md``).
This statistic answers both:

- each item's **empirical logit** ``l_i = log((k_i + 0.5) / (n_i - k_i + 0.5))`` (``k_i`` of
  ``n_i`` trials correct, over both tasks): an accuracy averaged on the probability scale moves
  towards 50% when the items' spread grows, a logit much less;
- the OLS slope ``b`` of ``l`` on complexity, **studentized** by a two-way SE: the items' part
  (HC2 over items) plus the participants' part of the slope's linearization (each trial's
  residual from its item's and its participant's mean accuracy, over ``n_i p_i (1 - p_i)``,
  summed within participant) minus the trials' own part, counted in both; at least the items'
  part. A studentized statistic's permutation distribution stays valid when the observed data
  are heteroscedastic (DiCiccio & Romano 2017); here the participants' slopes enter its SE.

The items' complexity values are relabelled across all items, ``b / SE`` recomputed for every
relabelling (SE included), and ``p = (1 + k) / (1 + B)`` as for the score. Measured at N 48,
item SD 0.5: 5.9% [4.9, 7.0] over 2,000 null studies where the score rejected 6.5%; power
46% against the score's 55% at -0.2 log-odds per level (``benchmarks/RESULTS.md``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal, NamedTuple

from tracktale.errors import TracktaleError

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd


def item_parts(frame: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per item: complexity and empirical logit; per participant x item and item: linearization.

    Returns:
        ``(complexity, logit, cells, squares)``: ``cells[person, item]`` the summed scaled
        residuals of a participant on an item, ``squares[item]`` their summed squares.

    Raises:
        TracktaleError: When an item carries two complexity values.
    """
    import numpy as np

    varying = frame.groupby("item_id")["complexity"].nunique()
    if (varying > 1).any():
        raise TracktaleError(
            f"complexity varies within item {varying[varying > 1].index[0]}: the item "
            "permutation test needs it to be a property of the item"
        )
    items, which = np.unique(frame["item_id"].to_numpy(), return_inverse=True)
    people, who = np.unique(frame["agent"].to_numpy(), return_inverse=True)
    y = frame["correct"].to_numpy(dtype=float)
    n = np.bincount(which, minlength=len(items)).astype(float)
    k = np.bincount(which, weights=y, minlength=len(items))
    complexity = np.zeros(len(items))
    complexity[which] = frame["complexity"].to_numpy(dtype=float)
    p = np.clip(k / n, 0.02, 0.98)  # an item all right or all wrong: its variance not 0
    residual = y - p[which]
    residual -= (np.bincount(who, weights=residual) / np.bincount(who))[who]
    scaled = residual / (n * p * (1 - p))[which]
    cells = np.zeros((len(people), len(items)))
    np.add.at(cells, (who, which), scaled)
    squares = np.bincount(which, weights=scaled**2, minlength=len(items))
    return complexity, np.log((k + 0.5) / (n - k + 0.5)), cells, squares


def studentized_slopes(
    weights: np.ndarray,
    logit: np.ndarray,
    cells: np.ndarray,
    squares: np.ndarray,
    hc: Literal[2, 3] = 2,
) -> np.ndarray:
    """``b / SE`` for every row of ``weights`` (centred complexity, one labelling a row).

    ``hc``: the items' part is HC2 (each squared residual over ``1 - h``) or HC3 (over
    ``(1 - h)^2``, larger where an item has leverage).
    """
    import numpy as np

    y = logit - logit.mean()
    sxx = float(weights[0] @ weights[0])
    slope = weights @ y / sxx
    error = y[None, :] - slope[:, None] * weights
    leverage = weights**2 / sxx + 1 / len(y)
    item_part = np.sum(weights**2 * error**2 / (1 - leverage) ** (hc - 1), axis=1)
    person_part = ((weights @ cells.T) ** 2).sum(axis=1)
    variance = np.maximum(item_part + person_part - (weights**2) @ squares, item_part)
    return slope * sxx / np.sqrt(variance)


class LogitTest(NamedTuple):
    """What the test found; :mod:`~tracktale.analysis.stats.permutation` makes it a table row."""

    statistic: float
    p: float
    items: int
    varies: bool


def logit_two_way_test(frame: pd.DataFrame, permutations: int, seed: int) -> LogitTest:
    """The complexity test with the studentized empirical-logit slope (see the module).

    Args:
        frame: Trials with ``item_id``, ``agent``, ``complexity`` and ``correct``.
        permutations: Random relabellings ``B``.
        seed: Seed of the relabellings.

    Returns:
        The test; ``statistic`` is the observed ``b / SE`` (its sign the effect's direction),
        ``p`` NaN where complexity does not vary between items.
    """
    import numpy as np

    complexity, logit, cells, squares = item_parts(frame)
    centred = complexity - complexity.mean()
    varies = bool(np.any(centred))
    statistic, p = float("nan"), float("nan")
    if varies:
        rng = np.random.default_rng(seed)
        drawn = rng.permuted(np.broadcast_to(centred, (permutations, len(centred))), axis=1)
        t = studentized_slopes(np.vstack([centred, drawn]), logit, cells, squares)
        statistic = float(t[0])
        # A relative tolerance so that relabellings tied with the observed one count as extreme.
        extreme = int(np.sum(np.abs(t[1:]) >= abs(statistic) * (1 - 1e-9)))
        p = (1 + extreme) / (1 + permutations)
    return LogitTest(statistic, p, len(complexity), varies)


def logit_t_test(frame: pd.DataFrame) -> LogitTest:
    """The complexity test's default since issue 29's third pass: the same slope, HC3, t(I - 2).

    The studentized empirical-logit slope of :func:`logit_two_way_test`, its items' part HC3
    instead of HC2, referred to t with ``items - 2`` df instead of its permutation
    distribution. Relabelling items moved the noisier high-complexity items to other levels,
    and the permuted statistic's spread followed that: the permutation of the HC2 statistic
    rejected 5.9% and 6.7% of two runs of 1,000 null studies at N 48, item SD 0.5 where this
    test rejected 4.7% and 5.3% (``benchmarks/bench_complexity_statistics.py``; RESULTS.md).

    Args:
        frame: Trials with ``item_id``, ``agent``, ``complexity`` and ``correct``.

    Returns:
        The test; ``p`` NaN where complexity does not vary between items.
    """
    import numpy as np
    from scipy import stats

    complexity, logit, cells, squares = item_parts(frame)
    centred = complexity - complexity.mean()
    varies = bool(np.any(centred)) and len(centred) > 2
    statistic, p = float("nan"), float("nan")
    if varies:
        statistic = float(studentized_slopes(centred[None, :], logit, cells, squares, hc=3)[0])
        p = float(2 * stats.t.sf(abs(statistic), len(centred) - 2))
    return LogitTest(statistic, p, len(complexity), varies)
