"""Error rate and power of the recency equivalence test (TOST) under the richer truth.

The report tests recency against a smallest effect of interest (``--recency-sesoi``, 3
percentage points per focus position) with two one-sided tests (TOST,
:func:`~tracktale.analysis.stats.primary.recency_equivalence`). A level-5% TOST claims
equivalence in at most 5% of studies whose true effect lies *at* a bound. Participants are
simulated in the human protocol's design under the null benchmarks' richer truth
(:data:`~tracktale.analysis.power.simulate.RICHER_TRUTH`; no complexity, task or interaction
effect, items drawn anew in every study) with a recency effect of +3 and -3 points per position
(the error rate) and of 0 (the power), and every TOST candidate is run on the same studies:

- ``two-way``: the floored two-way GLM's SE, t(items - 1) (the report's TOST before issue 29's
  third pass);
- ``two-way, t(df)``: the same SE with the permutation candidate's fewer df;
- ``permutation``: the SE from the items' dispersion of the recency contrast within complexity
  levels (:func:`~tracktale.analysis.stats.primary.recency_permutation_se`), t(df), df the
  informative items less the informative levels less one;
- ``perm., uncorrected``: the same without its correction for the df that fitting recency takes
  from model 2's residuals (the first version measured);
- ``larger``: the larger of the two SEs, t(df) (the report's default since that pass:
  ``--recency-interval larger``).

The true effect in points is the TOST's estimand on infinite data: the population-averaged GLM
slope times ``100 p (1 - p)`` (:func:`estimand_points`, with the guessers the paper's
exclusions leave), solved for the people's own ``b``; the mean estimate
printed beside each rate checks it. The one-sided misses beside each rate are what a TOST
approaches when its interval is narrow against the bounds: the share of studies whose 90%
interval ends short of the true effect (5% for a valid interval).

Run: .venv/bin/python benchmarks/bench_recency_equivalence.py [--studies 300] [--seed 1]
[--item-sds 0.2,0.5] [--participants 48] [--workers 1]
Prints figures and the load average; asserts nothing.
"""

from __future__ import annotations

import argparse
import math
import os
import time
from dataclasses import replace
from typing import Any

CANDIDATES = ("two-way", "two-way, t(df)", "permutation", "perm., uncorrected", "larger")


def _load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.1f} / {five:.1f} / {fifteen:.1f} on {os.cpu_count()} cores"


def guesser_share(design: Any, params: Any, participants: int, studies: int = 100) -> float:
    """The guessers' share of the analysed trials (the paper's exclusions keep about 2 in 3)."""
    import numpy as np

    from tracktale.analysis.data.exclusions import ExclusionRules, apply_exclusions
    from tracktale.analysis.power.simulate import simulate_outcomes

    shares = []
    for study in range(studies):
        trials = simulate_outcomes(design, participants, params, np.random.default_rng([7, study]))
        kept = apply_exclusions(trials.assign(source="simulated"), None, ExclusionRules())
        shares.append(float(kept.trials["guesser"].mean()))
    return float(np.mean(shares))


def estimand_points(design: Any, params: Any, guessers: float) -> float:
    """What the TOST estimates, on infinite data: ``100 p (1 - p) b`` of the population GLM.

    Each main trial of the design (every list, equally weighted) gets its population accuracy
    over the random effects (Gauss-Hermite quadrature; ``guessers`` of the trials at chance,
    timeouts scored wrong); the two-way GLM's model 2 fitted to those accuracies gives the
    population-averaged recency slope ``b``, and ``p`` is their mean.
    """
    import numpy as np
    import pandas as pd
    import statsmodels.api as sm

    from tracktale.analysis.power.simulate import _item_sd_scale

    main = design.trials[design.trials["role"] == "main"]
    codes, ids = pd.factorize(main["item_id"])
    scale = _item_sd_scale(main, codes, len(ids), params.item_sd_ratio)[codes]
    c, t = main["complexity_c"].to_numpy(), main["task_s"].to_numpy()
    f = main["focus_c"].to_numpy(dtype=float)
    eta = params.intercept + params.complexity * c + params.task * t
    eta = eta + params.interaction * c * t + params.recency * f
    sd = np.sqrt(
        params.participant_sd**2
        + (params.item_sd * scale) ** 2
        + t**2 * (params.participant_task_sd**2 + params.item_task_sd**2)
        + c**2 * params.participant_complexity_sd**2
    )
    nodes, weights = np.polynomial.hermite_e.hermegauss(60)
    weights = weights / weights.sum()
    pi = 1 / (1 + np.exp(-(eta[:, None] + sd[:, None] * nodes[None, :])))
    accuracy = ((1 - guessers) * (pi @ weights) + guessers * 0.5) * (1 - params.timeout_rate)
    exog = np.column_stack([np.ones_like(c), c, t, c * t, f - f.mean()])
    fit = sm.GLM(accuracy, exog, family=sm.families.Binomial()).fit()
    p = float(accuracy.mean())
    return float(100 * p * (1 - p) * fit.params[4])


def recency_for_points(design: Any, params: Any, points: float, guessers: float) -> float:
    """The log-odds per position (people's own) whose estimand is ``points`` per position."""
    b = points / 100 / 0.2
    for _ in range(20):
        b *= points / estimand_points(design, replace(params, recency=b), guessers)
    return b


def _study(arguments: tuple[Any, Any, int, list[int]]) -> dict[str, float]:
    """One simulated study: the recency estimate in points and both SEs with their df."""
    import numpy as np

    from tracktale.analysis.data.exclusions import ExclusionRules, apply_exclusions
    from tracktale.analysis.power.simulate import simulate_outcomes
    from tracktale.analysis.stats.glm import design_frame, fit_human_glm
    from tracktale.analysis.stats.primary import recency_equivalence
    from tracktale.errors import TracktaleError

    design, params, participants, key = arguments
    trials = simulate_outcomes(design, participants, params, np.random.default_rng(key))
    analysed = apply_exclusions(trials.assign(source="simulated"), None, ExclusionRules()).trials
    try:
        fit = fit_human_glm(
            analysed, recency="focus", clustering="two-way", reference="t", floor=True
        )
        frame, _ = design_frame(analysed, recency="focus", extra=("item_id",))
        old = recency_equivalence(fit, 3.0, "two-way")
        new = recency_equivalence(fit, 3.0, "permutation", frame)
    except (TracktaleError, ValueError, ArithmeticError):
        return {"estimate": math.nan}
    return {
        "estimate": new["estimate_points"],
        "se_two_way": old["se_points"],
        "df_two_way": old["df"],
        "se_permutation": new["se_points"],
        "df_permutation": new["df"],
    }


def candidate(rows: Any, name: str) -> tuple[Any, Any]:
    """The SE and df each candidate gives every study."""
    import numpy as np

    df_new = rows["df_permutation"]
    se = {
        "two-way": rows["se_two_way"],
        "two-way, t(df)": rows["se_two_way"],
        "permutation": rows["se_permutation"],
        "perm., uncorrected": rows["se_permutation"] * np.sqrt(df_new / (df_new + 1)),
        "larger": np.fmax(rows["se_two_way"], rows["se_permutation"]),
    }[name]
    df = rows["df_two_way"] if name == "two-way" else rows["df_permutation"]
    df = df + 1 if name == "perm., uncorrected" else df
    return se, df


def rates(rows: Any, name: str, bound: float, truth: float) -> tuple[int, int]:
    """(TOST claims of equivalence, one-sided misses of the truth) of a candidate.

    A one-sided miss: the 90% interval's end towards zero lies beyond the true effect (for a
    true effect at a bound, the one TOST test that can err rejects); for a truth of 0, none.
    """
    from scipy import stats

    se, df = candidate(rows, name)
    half = stats.t.isf(0.05, df) * se
    low, high = rows["estimate"] - half, rows["estimate"] + half
    claims = int(((-bound < low) & (high < bound)).sum())
    misses = int((high < truth).sum()) if truth > 0 else int((low > truth).sum()) if truth else 0
    return claims, misses


def run_cell(stimulus_set: Any, item_sd: float, points: float, args: Any) -> Any:
    """``args.studies`` studies with the true effect at ``points``: ``(b, one row each)``."""
    import multiprocessing

    import pandas as pd

    from tracktale.analysis.power.simulate import RICHER_TRUTH, SimulationParams, human_design

    design = human_design(stimulus_set)
    base = SimulationParams(
        intercept=1.35, complexity=0.0, task=0.0, interaction=0.0, item_sd=item_sd, **RICHER_TRUTH
    )
    share = guesser_share(design, base, args.participants)
    b = recency_for_points(design, base, points, share) if points else 0.0
    params = replace(base, recency=b)
    code = round(1000 * points) + 100_000  # each truth its own streams
    jobs = [
        (design, params, args.participants, [args.seed, round(1000 * item_sd), code, sim])
        for sim in range(args.studies)
    ]
    if args.workers <= 1:
        rows = list(map(_study, jobs))
    else:
        with multiprocessing.get_context("spawn").Pool(args.workers) as pool:
            rows = pool.map(_study, jobs, chunksize=10)
    return b, pd.DataFrame(rows)


def main(argv: list[str] | None = None) -> None:
    from tracktale.analysis.stats.proportions import wilson_interval
    from tracktale.stimuli.registry import get_paradigm

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--studies", type=int, default=300, help="studies per design and truth")
    parser.add_argument("--participants", type=int, default=48)
    parser.add_argument("--item-sds", default="0.2,0.5")
    parser.add_argument("--bound", type=float, default=3.0, help="the SESOI, points")
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    stimulus_set = get_paradigm("narrative").generate_set("human", 1)
    print(
        f"start: {_load()}; {args.studies} studies per cell, N = {args.participants}, "
        f"bound +-{args.bound:g} points per position"
    )
    started = time.perf_counter()
    for item_sd in (float(s) for s in args.item_sds.split(",")):
        for points in (args.bound, -args.bound, 0.0):
            t0 = time.perf_counter()
            b, rows = run_cell(stimulus_set, item_sd, points, args)
            valid = rows.dropna(subset=["estimate"])
            what = "power" if points == 0 else "claims at the bound (should be <= 5%)"
            print(
                f"\nitem SD {item_sd}, true recency {points:+g} points per position "
                f"(b = {b:+.4f} log-odds); {what}"
            )
            mean = valid.mean()
            print(
                f"  mean estimate {mean['estimate']:+.2f} points "
                f"(SD {valid['estimate'].std():.2f});"
                f" mean SE two-way {mean['se_two_way']:.2f}, permutation "
                f"{mean['se_permutation']:.2f}; failed fits {len(rows) - len(valid)}"
            )
            print(f"  {'SE, df':<20}{'claims':>7}  95% CI          one-sided misses")
            for name in CANDIDATES:
                claimed, missed = rates(valid, name, args.bound, points)
                low, high = wilson_interval(claimed, len(valid))
                print(
                    f"  {name:<20}{100 * claimed / len(valid):6.1f}%  [{100 * low:4.1f}, "
                    f"{100 * high:4.1f}]  {100 * missed / len(valid):5.1f}%  ({len(valid)})"
                )
            print(f"  time {time.perf_counter() - t0:.0f} s; {_load()}")
    print(f"\ntotal {time.perf_counter() - started:.0f} s; end: {_load()}")


if __name__ == "__main__":
    main()
