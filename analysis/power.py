"""Power analysis by simulation in the actual trial design.

For each sample size, participants are simulated from the logistic model of
:class:`~tracktale.analysis.simulate.SimulationParams` in the Latin-square design of a
human-protocol stimulus set, the paper's exclusions are applied (accuracy below the threshold on
a task), the GLM with participant-clustered SEs is fitted, and the share of simulations in which
the chosen term is significant is the power, with a Wilson 95% interval for the simulation
error.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tracktale.analysis.exclusions import ExclusionRules, apply_exclusions
from tracktale.analysis.glm import fit_human_glm
from tracktale.analysis.simulate import SimulationParams, human_design, simulate_outcomes
from tracktale.analysis.stats import wilson_interval
from tracktale.errors import TracktaleError
from tracktale.stimulus_set import StimulusSet

if TYPE_CHECKING:
    import pandas as pd

TERMS = ("complexity_c", "task_s", "complexity_c:task_s", "recency_c")


@dataclass(frozen=True)
class PowerSettings:
    """What a power analysis simulates and tests.

    Attributes:
        sizes: Numbers of participants recruited (before exclusions).
        simulations: Simulated studies per size.
        term: The GLM term whose significance counts.
        alpha: The significance level (two-sided).
        recency: Fit the model with this recency covariate (needed for ``recency_c``).
        rules: Exclusions applied before fitting (``None``: none).
        seed: Seed of every random draw.
    """

    sizes: Sequence[int] = (10, 20, 30, 40, 50)
    simulations: int = 200
    term: str = "complexity_c"
    alpha: float = 0.05
    recency: str | None = None
    rules: ExclusionRules | None = ExclusionRules()
    seed: int = 0


def simulate_power(
    stimulus_set: StimulusSet,
    params: SimulationParams,
    settings: PowerSettings,
    progress: Callable[[int, int], None] | None = None,
) -> pd.DataFrame:
    """Estimate power for every sample size.

    Args:
        stimulus_set: The human-protocol set whose design is simulated.
        params: The generating model (the effects to detect).
        settings: Sizes, number of simulations, tested term, alpha, exclusions, seed.
        progress: Called with (done, total) after each simulated study.

    Returns:
        One row per size: ``participants``, ``simulations``, ``significant``, ``power``,
        ``ci_low``, ``ci_high``, ``mean_estimate``, ``mean_analysed`` (participants left after
        exclusions, averaged over tasks) and ``failed`` (fits that could not be done).

    Raises:
        TracktaleError: For an unknown term, a non-positive size or simulation count.
    """
    import numpy as np
    import pandas as pd

    if settings.term not in TERMS:
        raise TracktaleError(f"unknown term {settings.term!r} (choose from {', '.join(TERMS)})")
    if settings.term == "recency_c" and settings.recency is None:
        raise TracktaleError("testing recency_c needs a recency covariate (--recency)")
    if settings.simulations < 1 or not settings.sizes or min(settings.sizes) < 2:
        raise TracktaleError("power needs at least one simulation and sizes of 2 or more")
    design = human_design(stimulus_set)
    rng = np.random.default_rng(settings.seed)
    rows, done, total = [], 0, len(settings.sizes) * settings.simulations
    for size in settings.sizes:
        significant = failed = 0
        estimates, analysed = [], []
        for _ in range(settings.simulations):
            outcome = _one_study(design, size, params, settings, rng)
            done += 1
            if progress:
                progress(done, total)
            if outcome is None:
                failed += 1
                continue
            estimate, p, n_analysed = outcome
            significant += p < settings.alpha
            estimates.append(estimate)
            analysed.append(n_analysed)
        fitted = settings.simulations - failed
        low, high = wilson_interval(significant, settings.simulations)
        rows.append(
            {
                "participants": size,
                "simulations": settings.simulations,
                "significant": significant,
                "power": significant / settings.simulations,
                "ci_low": low,
                "ci_high": high,
                "mean_estimate": float(np.mean(estimates)) if fitted else float("nan"),
                "mean_analysed": float(np.mean(analysed)) if fitted else float("nan"),
                "failed": failed,
            }
        )
    return pd.DataFrame(rows)


def _one_study(
    design, size: int, params: SimulationParams, settings: PowerSettings, rng
) -> tuple[float, float, float] | None:
    """Simulate, exclude and fit once: (estimate, p, participants analysed), or None."""
    trials = simulate_outcomes(design, size, params, rng)
    trials["source"] = "simulated"
    if settings.rules is not None:
        result = apply_exclusions(trials, None, settings.rules)
        trials = result.trials
        analysed = float(result.summary["analysed"].mean())
    else:
        trials = trials[trials["role"] == "main"]
        analysed = float(size)
    try:
        fit = fit_human_glm(trials, recency=settings.recency)
        row = fit.coefficient(settings.term)
    except (TracktaleError, ValueError, ArithmeticError):
        # A degenerate sample (everyone excluded, perfect separation) is counted as a failure,
        # which is also not a significant result: power is not inflated by dropping it.
        return None
    return float(row["b"]), float(row["p"]), analysed


def power_figure(table: pd.DataFrame, folder, term: str, target: float = 0.8):
    """Power against sample size with its interval band and the target line."""
    from tracktale.analysis.style import new_figure, percent_axes, save_figure, styled

    with styled():
        figure = new_figure(1, width=4.2)
        ax = figure.axes[0]
        ax.fill_between(table["participants"], table["ci_low"], table["ci_high"], alpha=0.25)
        ax.plot(table["participants"], table["power"], marker="o")
        percent_axes(figure, label="Power", chance=None)
        ax.axhline(target, color="0.4", linestyle="--", linewidth=0.8)
        ax.set_xlabel("Participants recruited")
        ax.set_title(f"Power for {term}", loc="left")
        return save_figure(figure, folder, "power_curve", f"Power for {term} by sample size")
