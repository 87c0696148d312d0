"""Coverage of the human accuracy intervals: pooled-trial Wilson against the participant bootstrap.

Simulates the human protocol (four lists, 36 main trials per participant, no exclusions) with
participants differing in ability (random intercepts with SD 0.5 and 1.0 on the log-odds scale)
and items alike within a cell (item SD 0), so the true accuracy of each task x complexity cell
is known exactly: the mean over participants of the inverse logit, by quadrature. Prints how
often each interval covers it, per cell and per task, and the mean width ratio. Asserts nothing.

Run: .venv/bin/python benchmarks/bench_interval_coverage.py [--simulations 300]
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np
from scipy import integrate, special

from tracktale.analysis.power.simulate import SimulationParams, human_design, simulate_outcomes
from tracktale.analysis.stats.proportions import clustered_accuracy_interval, wilson_interval
from tracktale.stimuli.registry import get_paradigm


def _truth(eta: float, sd: float) -> float:
    density = lambda v: np.exp(-0.5 * (v / sd) ** 2) / (sd * np.sqrt(2 * np.pi))  # noqa: E731
    return integrate.quad(lambda v: special.expit(eta + v) * density(v), -12 * sd, 12 * sd)[0]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--simulations", type=int, default=300)
    parser.add_argument("--participants", type=int, default=48)
    parser.add_argument("--resamples", type=int, default=1999)
    args = parser.parse_args(argv)
    design = human_design(get_paradigm("narrative").generate_set("human", 1))
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    for sd in (0.5, 1.0):
        params = SimulationParams(participant_sd=sd, item_sd=0.0, timeout_rate=0.0)
        main_rows = design.trials[design.trials["role"] == "main"]
        cells = main_rows.groupby(["task", "complexity"])["complexity_c"].first()
        covered = {"wilson": [], "bootstrap": []}
        ratios = []
        started = time.perf_counter()
        for sim in range(args.simulations):
            rng = np.random.default_rng([11, sim, int(10 * sd)])
            trials = simulate_outcomes(design, args.participants, params, rng)
            trials = trials[trials["role"] == "main"]
            for (task, level), group in trials.groupby(["task", "complexity"]):
                c = cells[(task, level)]
                t = 0.5 if task == "implicit" else -0.5
                eta = params.intercept + params.complexity * c + params.task * t
                eta += params.interaction * c * t
                truth = _truth(eta, sd)
                k, n = group["correct"].sum(), len(group)
                w_low, w_high = wilson_interval(k, n)
                _, b_low, b_high, _ = clustered_accuracy_interval(
                    group["correct"], group["agent"], resamples=args.resamples, seed=sim
                )
                covered["wilson"].append(w_low <= truth <= w_high)
                covered["bootstrap"].append(b_low <= truth <= b_high)
                ratios.append((b_high - b_low) / (w_high - w_low))
        print(
            f"participant SD {sd}: {args.simulations} studies x 8 cells in "
            f"{time.perf_counter() - started:.0f} s; coverage of the true cell accuracy: "
            f"Wilson over pooled trials {100 * np.mean(covered['wilson']):.1f}%, participant "
            f"bootstrap (BCa) {100 * np.mean(covered['bootstrap']):.1f}%; bootstrap/Wilson "
            f"width {np.mean(ratios):.2f}"
        )


if __name__ == "__main__":
    main()
