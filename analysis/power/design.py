"""Power analysis by simulation in the actual trial design, by the model that is fitted.

For each sample size, participants are simulated from the logistic model of
:class:`~tracktale.analysis.power.simulate.SimulationParams` in the study's own list design of a
human-protocol stimulus set, the paper's exclusions are applied (accuracy below the threshold on
a task), the chosen method is fitted (``glm``: the paper's participant-clustered GLM;
``glm-2way``: the GLM with SEs clustered by participant and item; ``glmer``: the mixed model,
through R, in parallel processes), and the share of simulations in which the chosen term is
significant is the power, with a Wilson 95% interval for the simulation error.

Power of a test that does not hold its level is not power: the paper's GLM rejects the
complexity null far too often when items differ, so its "power" for complexity is inflated.
The report's default method (glmer where R has lme4, else the two-way GLM) is the default here.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tracktale.analysis.data.exclusions import ExclusionRules, apply_exclusions
from tracktale.analysis.power.simulate import SimulationParams, human_design, simulate_outcomes
from tracktale.analysis.stats.glm import fit_human_glm
from tracktale.analysis.stats.glmer_batch import BatchEstimate
from tracktale.analysis.stats.inference import TWO_WAY_REFERENCE, resolve_method
from tracktale.analysis.stats.proportions import wilson_interval
from tracktale.errors import TracktaleError
from tracktale.stimulus_set import StimulusSet

if TYPE_CHECKING:
    import pandas as pd

TERMS = ("complexity_c", "task_s", "complexity_c:task_s", "recency_c")
COLUMNS_NEEDED = ("correct", "agent", "item_id")


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
        method: ``glm``, ``glm-2way``, ``glmer`` or ``auto`` (the report's default).
        workers: R processes at once for ``glmer``.
        glmer_test: ``t-bw`` or ``z``, as the report's ``--glmer-test``.
        permutations: For ``recency_c``, and ``complexity_c`` in model 1 (no ``recency``),
            under the report's methods (``glm-2way``, ``glmer``): relabellings of the
            report's item-permutation test of that term, whose p then counts; 0 counts the
            model's own p. The paper's GLM keeps its z test.
    """

    sizes: Sequence[int] = (10, 20, 30, 40, 50)
    simulations: int = 200
    term: str = "complexity_c"
    alpha: float = 0.05
    recency: str | None = None
    rules: ExclusionRules | None = ExclusionRules()
    seed: int = 0
    method: str = "auto"
    workers: int = 2
    glmer_test: str = "t-bw"
    permutations: int = 999


def simulate_power(
    stimulus_set: StimulusSet,
    params: SimulationParams,
    settings: PowerSettings,
    progress: Callable[[int, int], None] | None = None,
    on_estimate: Callable[[BatchEstimate], None] | None = None,
) -> pd.DataFrame:
    """Estimate power for every sample size.

    Args:
        stimulus_set: The human-protocol set whose design is simulated.
        params: The generating model (the effects to detect).
        settings: Sizes, number of simulations, tested term, alpha, exclusions, seed, method.
        progress: Called with (done, total) after each simulated study is fitted.
        on_estimate: For ``glmer``: called once, after one study was fitted alone, with the
            estimated duration of the whole run, before the rest starts.

    Returns:
        One row per size: ``participants``, ``simulations``, ``significant``, ``power``,
        ``ci_low``, ``ci_high``, ``mean_estimate`` (per complexity level, also for glmer),
        ``mean_analysed`` (participants left after exclusions, averaged over tasks),
        ``failed`` (fits that could not be done) and ``method``.

    Raises:
        TracktaleError: For an unknown term or method, a non-positive size or simulation
            count, or glmer without R.
    """
    import numpy as np
    import pandas as pd

    if settings.term not in TERMS:
        raise TracktaleError(f"unknown term {settings.term!r} (choose from {', '.join(TERMS)})")
    if settings.term == "recency_c" and settings.recency is None:
        raise TracktaleError("testing recency_c needs a recency covariate (--recency)")
    if settings.simulations < 1 or not settings.sizes or min(settings.sizes) < 2:
        raise TracktaleError("power needs at least one simulation and sizes of 2 or more")
    method = resolve_method(settings.method)
    design = human_design(stimulus_set)
    rng = np.random.default_rng(settings.seed)
    if method == "glmer":
        outcomes = _glmer_outcomes(design, params, settings, rng, progress, on_estimate)
    else:
        outcomes, done, total = {}, 0, len(settings.sizes) * settings.simulations
        for size in settings.sizes:
            outcomes[size] = []
            for _ in range(settings.simulations):
                outcomes[size].append(_one_study(design, size, params, settings, rng, method))
                done += 1
                if progress:
                    progress(done, total)
    direction = _predicted_direction(params, settings.term)
    rows = [_summary(size, outcomes[size], settings, method, direction) for size in settings.sizes]
    return pd.DataFrame(rows)


def _predicted_direction(params: SimulationParams, term: str) -> int:
    """The sign of the simulated effect of ``term`` (0 under the null)."""
    value = {
        "complexity_c": params.complexity,
        "task_s": params.task,
        "complexity_c:task_s": params.interaction,
        "recency_c": params.recency,
    }.get(term, 0.0)
    return int(math.copysign(1, value)) if value else 0


def _summary(size: int, outcomes: list, settings: Any, method: str, direction: int = 0) -> dict:
    """One size's row; ``settings`` has ``alpha`` and ``simulations`` (also the people's).

    With a predicted ``direction`` (the sign of the simulated effect), only significant results
    of that sign count as power; significant results of the other sign (type S errors) are
    counted apart in ``wrong_sign``. Under the null (``direction`` 0) every rejection counts.
    """
    import numpy as np

    fitted = [o for o in outcomes if o is not None]
    rejected = [(e, p) for e, p, _ in fitted if p < settings.alpha]
    significant = sum(1 for e, _ in rejected if direction == 0 or np.sign(e) == direction)
    low, high = wilson_interval(significant, settings.simulations)
    return {
        "participants": size,
        "simulations": settings.simulations,
        "significant": significant,
        "wrong_sign": len(rejected) - significant,
        "power": significant / settings.simulations,
        "ci_low": low,
        "ci_high": high,
        "mean_estimate": float(np.mean([e for e, _, _ in fitted])) if fitted else float("nan"),
        "mean_analysed": float(np.mean([a for _, _, a in fitted])) if fitted else float("nan"),
        "failed": settings.simulations - len(fitted),
        "method": method,
    }


def _simulate_and_exclude(
    design, size: int, params: SimulationParams, settings: PowerSettings, rng
) -> tuple[pd.DataFrame, float]:
    trials = simulate_outcomes(design, size, params, rng)
    trials["source"] = "simulated"
    if settings.rules is None:
        return trials[trials["role"] == "main"], float(size)
    result = apply_exclusions(trials, None, settings.rules)
    return result.trials, float(result.summary["analysed"].mean())


def _one_study(
    design, size: int, params: SimulationParams, settings: PowerSettings, rng, method: str
) -> tuple[float, float, float] | None:
    """Simulate, exclude and fit a GLM once: (estimate, p, participants analysed), or None."""
    trials, analysed = _simulate_and_exclude(design, size, params, settings, rng)
    try:
        fit = fit_human_glm(
            trials,
            recency=settings.recency,
            clustering="participant" if method == "glm" else "two-way",
            reference="normal" if method == "glm" else TWO_WAY_REFERENCE,
        )
        row = fit.coefficient(settings.term)
        p = _permutation_p(trials, settings, method, float(row["p"]))
    except (TracktaleError, ValueError, ArithmeticError):
        # A degenerate sample (everyone excluded, perfect separation) is counted as a failure,
        # which is also not a significant result: power is not inflated by dropping it.
        return None
    return float(row["b"]), p, analysed


def _permutation_p(trials: pd.DataFrame, settings: PowerSettings, method: str, p: float) -> float:
    """The p that counts: the item-permutation test's where the report uses it, else ``p``.

    The report puts the complexity permutation p on model 1's complexity row only, so it
    counts for ``complexity_c`` only when model 1 is fitted (no recency covariate).
    """
    from tracktale.analysis.stats.permutation import (
        complexity_test_of_trials,
        recency_test_of_trials,
    )

    if method == "glm" or not settings.permutations:
        return p
    if settings.term == "recency_c":
        recency = settings.recency or "focus"
        return recency_test_of_trials(trials, recency, permutations=settings.permutations).p
    if settings.term == "complexity_c" and settings.recency is None:
        return complexity_test_of_trials(trials, permutations=settings.permutations).p
    return p


def _glmer_outcomes(
    design,
    params: SimulationParams,
    settings: PowerSettings,
    rng,
    progress: Callable[[int, int], None] | None,
    on_estimate: Callable[[BatchEstimate], None] | None,
) -> dict[int, list]:
    """Simulate every study, fit them all with glmer in parallel R processes."""
    import pandas as pd
    from scipy import stats

    from tracktale.analysis.stats.glmer_batch import estimate_batch, fit_batch
    from tracktale.analysis.stats.inference import GLMER_TERMS, glmer_formulas, test_of_term
    from tracktale.analysis.stats.mixed import between_within_df, mixed_frame

    model = "model 2" if settings.recency else "model 1"
    formula = {"model": glmer_formulas()[model]}
    term = GLMER_TERMS[test_of_term(settings.term)]
    frames: list[pd.DataFrame] = []
    meta: dict[int, tuple[int, float, float, float]] = {}  # size, analysed, scale, df
    permuted: dict[int, float] = {}
    for size in settings.sizes:
        for _ in range(settings.simulations):
            trials, analysed = _simulate_and_exclude(design, size, params, settings, rng)
            sim = len(meta)
            meta[sim] = (size, analysed, math.nan, math.inf)
            try:
                frame = mixed_frame(trials, settings.recency)
                permuted[sim] = _permutation_p(trials, settings, "glmer", math.nan)
            except TracktaleError:
                continue
            # Estimates are reported per complexity level (or recency step), as the GLM's.
            scale = frame["recency_c" if term == "recency_z" else "complexity_c"].std()
            df = math.inf
            if settings.glmer_test == "t-bw":
                terms = ["Intercept", "complexity_z", "task_s", "complexity_z:task_s"]
                terms += ["recency_z"] if settings.recency else []
                df = between_within_df(frame, terms).get(term, math.inf)
            meta[sim] = (size, analysed, float(scale), df)
            columns = [c for c in frame.columns if c in formula["model"] or c in COLUMNS_NEEDED]
            frames.append(frame[columns].assign(sim=sim))
    results = []
    if frames:
        batch, first = estimate_batch(frames[0], formula, len(frames), settings.workers)
        if on_estimate:
            on_estimate(batch)
        offset = 1 + len(meta) - len(frames)
        if progress:
            progress(offset, len(meta))
        results.append(first)
        if len(frames) > 1:
            rest = pd.concat(frames[1:], ignore_index=True)
            report = (lambda d, t: progress(d + offset, len(meta))) if progress else None
            results.append(fit_batch(rest, formula, workers=settings.workers, progress=report))
    rows = pd.concat(results, ignore_index=True) if results else pd.DataFrame()
    found = rows[rows["term"] == term].set_index("sim") if not rows.empty else rows
    outcomes: dict[int, list] = {size: [] for size in settings.sizes}
    for sim, (size, analysed, scale, df) in meta.items():
        if rows.empty or sim not in found.index or math.isnan(float(found.loc[sim, "p"])):
            outcomes[size].append(None)
            continue
        estimate = float(found.loc[sim, "estimate"]) / scale
        p = float(found.loc[sim, "p"])
        if math.isfinite(df):
            p = float(2 * stats.t.sf(abs(float(found.loc[sim, "z"])), df))
        if not math.isnan(permuted.get(sim, math.nan)):
            p = permuted[sim]
        outcomes[size].append((estimate, p, analysed))
    return outcomes


def sizes_for_power(table: pd.DataFrame, targets: Sequence[float] = (0.8, 0.9)) -> dict:
    """The smallest simulated N whose estimated power reaches each target (``None``: none).

    Only the sizes simulated are candidates (no extrapolation); with power non-monotone by
    simulation error the first size reaching the target is given, and its interval says how
    sure that is.
    """
    out: dict[float, int | None] = {}
    ordered = table.sort_values("participants")
    for target in targets:
        reached = ordered[ordered["power"] >= target]
        out[target] = int(reached["participants"].iloc[0]) if not reached.empty else None
    return out


def power_figure(table: pd.DataFrame, folder, term: str, target: float = 0.8):
    """Power against sample size with its interval band and the target line."""
    from matplotlib.ticker import MaxNLocator

    from tracktale.analysis.report.style import new_figure, percent_axes, save_figure, styled
    from tracktale.analysis.stats.glm import TERM_LABELS

    name = TERM_LABELS.get(term, term)  # "complexity (centred)", not the variable complexity_c
    with styled():
        figure = new_figure(1, width=4.2)
        ax = figure.axes[0]
        ax.fill_between(table["participants"], table["ci_low"], table["ci_high"], alpha=0.25)
        ax.plot(table["participants"], table["power"], marker="o")
        percent_axes(figure, label="Power", chance=None)
        ax.axhline(target, color="0.4", linestyle="--", linewidth=0.8)
        ax.set_xlabel("Participants recruited")
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))  # whole participants
        method = f" ({table['method'].iloc[0]})" if "method" in table else ""
        ax.set_title(f"Power for {name}{method}", loc="left")
        caption = (
            f"Power for {name} by sample size: the share of simulated studies with p < .05, "
            f"with its 95% interval (band); the dashed line is the {target:.0%} target"
        )
        return save_figure(figure, folder, "power_curve", caption)
