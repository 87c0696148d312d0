"""An optional Bayesian estimate of recency with brms, to support (or not) a null (issue 29).

A non-significant p does not show that recency does not matter; the report's TOST does so
against a smallest effect of interest, and this fit gives the Bayesian counterpart: the
posterior of the recency effect in percentage points per focus position, and the posterior mass
inside the same equivalence region. It is optional because brms needs R, rstan and a C++
compiler, and a fit takes minutes (the Stan model is compiled first): the report runs it with
``--bayes`` only. Priors are stated in ``brms_recency.R`` and printed with the result.

Why an R script and not a Python sampler: brms's formulas are the lme4 formulas the report
already fits, so the Bayesian model is the same model; PyMC/Bambi would be a second
implementation of the design to keep in step.
"""

from __future__ import annotations

import functools
import subprocess
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel

from tracktale.analysis.stats.lme4 import rscript_path, run_rscript
from tracktale.analysis.stats.random_structure import maximal_slopes, random_part
from tracktale.errors import TracktaleError

if TYPE_CHECKING:
    import pandas as pd

FIXED = ["complexity_c", "task_s", "complexity_c:task_s", "recency_c"]
"""Model 2's fixed terms, as the two-way GLM and glmer fit them."""


class BayesRecency(BaseModel):
    """The posterior of recency in percentage points per focus position (one fit)."""

    estimate_points: float
    ci95_low: float
    ci95_high: float
    bound: float
    mass_inside: float
    p_positive: float
    b_median: float
    rhat_max: float
    ess_bulk_min: float
    divergent: int
    draws: int
    formula: str
    priors: str
    brms_version: str
    r_version: str


@functools.cache
def brms_available() -> bool:
    """Whether R with brms (and so rstan) can be run here."""
    rscript = rscript_path()
    if rscript is None:
        return False
    check = 'quit(status = !requireNamespace("brms", quietly = TRUE))'
    try:
        completed = subprocess.run(
            [rscript, "--vanilla", "-e", check], capture_output=True, timeout=120, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return completed.returncode == 0


def recency_formula(frame: pd.DataFrame) -> str:
    """Model 2 with the maximal random effects the data's design allows (correlated)."""
    random = random_part(maximal_slopes(frame, FIXED))
    return "correct ~ complexity_c * task_s + recency_c + " + random


def fit_bayes_recency(
    frame: pd.DataFrame,
    bound_points: float,
    *,
    seed: int = 1,
    chains: int = 4,
    iterations: int = 2000,
    formula: str | None = None,
    timeout: float = 3600,
) -> BayesRecency:
    """Fit model 2 with brms and summarise recency against +-``bound_points``.

    Args:
        frame: The design frame (``correct``, ``complexity_c``, ``task_s``, ``recency_c``,
            ``agent``, ``item_id``), as the GLMs and glmer fit it.
        bound_points: The equivalence bound, percentage points per position.
        seed: Stan's seed (the same seed and data give the same draws).
        chains: Markov chains.
        iterations: Iterations per chain, half of them warm-up.
        formula: Another model (lme4/brms notation); default :func:`recency_formula`.
        timeout: Seconds before R is stopped.

    Raises:
        TracktaleError: Without brms, with a bad argument, or when the fit fails.
    """
    if not brms_available():
        raise TracktaleError(
            "the Bayesian fit needs R with brms (Debian: r-cran-brms); leave out --bayes"
        )
    if bound_points <= 0:
        raise TracktaleError(f"the equivalence bound must be positive, not {bound_points:g}")
    missing = {"correct", "complexity_c", "task_s", "recency_c", "agent", "item_id"} - set(frame)
    if missing:
        raise TracktaleError(f"the Bayesian fit needs the column {sorted(missing)[0]!r}")
    import pandas as pd

    chosen = formula or recency_formula(frame)
    with tempfile.TemporaryDirectory(prefix="tracktale-brms-") as folder:
        data, out = Path(folder) / "data.csv", Path(folder) / "out.csv"
        frame.to_csv(data, index=False)
        arguments = [str(data), chosen, str(out), f"{bound_points:g}", str(seed), str(chains)]
        run_rscript("brms_recency.R", [*arguments, str(iterations)], timeout, "the brms fit")
        row = pd.read_csv(out).iloc[0].to_dict()
    return BayesRecency.model_validate(row)
