"""Calibration of ``analysis reading`` on simulated studies (tests and the benchmark).

Two figures: how often the surprisal slope's 95% interval covers the planted slope, and how
often the ΔLL permutation test rejects at 5% when no surprisal effect is planted (beside it the
paired t-test on per-word differences, for comparison).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from tracktale.analysis.reading.analyse import ReadingOptions, analyse_reading
from tracktale.analysis.reading.simulate import SIMULATED_MODEL, ReadingDesign, simulate_study

ALPHA = 0.05


@dataclass(frozen=True)
class StudyOutcome:
    """One simulated study's figures.

    Attributes:
        slope: The estimated surprisal slope.
        covered: Whether its interval holds the planted slope.
        delta_ll: Held-out ΔLL per word.
        p_permutation: The permutation test's p.
        p_paired_t: The paired t-test's p.
        random: The surprisal model's fitted random part (lme4; ``""`` with statsmodels).
        fits: The lmer fits made for it (1: the declared structure fitted; more: the ladder).
    """

    slope: float
    covered: bool
    delta_ll: float
    p_permutation: float
    p_paired_t: float
    random: str = ""
    fits: int = 0


def run_study(design: ReadingDesign, options: ReadingOptions, seed: int) -> StudyOutcome:
    """Simulate one study and analyse it."""
    reading, words = simulate_study(design, seed)
    result = analyse_reading(reading, words, [SIMULATED_MODEL], replace(options, seed=seed))
    row = result.delta_ll.iloc[0]
    low, high = float(row["slope_ci_low"]), float(row["slope_ci_high"])
    steps = result.random_effects
    steps = steps[steps["model"] == SIMULATED_MODEL.label]
    return StudyOutcome(
        slope=float(row["surprisal_slope"]),
        covered=low <= design.surprisal_slope <= high,
        delta_ll=float(row["delta_ll_per_word"]),
        p_permutation=float(row["p_permutation"]),
        p_paired_t=float(row["p_paired_t"]),
        random=str(steps["fitted"].iloc[0]) if len(steps) else "",
        fits=len(steps),
    )


def null_design(design: ReadingDesign) -> ReadingDesign:
    """The same study with no surprisal effect at all (no slope, no by-participant slope)."""
    return replace(design, surprisal_slope=0.0, surprisal_slope_sd=0.0)


def wilson(successes: int, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    """Wilson 95% interval of a proportion."""
    if n == 0:
        return (float("nan"), float("nan"))
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * ((p * (1 - p) / n + z * z / (4 * n * n)) ** 0.5) / (1 + z * z / n)
    return centre - half, centre + half
