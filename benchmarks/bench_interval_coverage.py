"""Coverage of the human accuracy intervals: pooled-trial Wilson against the participant bootstrap.

Simulates the human protocol (four lists, 36 main trials per participant, no exclusions) with
participants differing in ability (random intercepts, SD 0.5) and, by default, the richer truth
of the null benchmarks (task slopes by participant SD 0.5 and by item SD 0.4, complexity slopes
by participant SD 0.15, 10% guessers, item SD twice as large at C4 as at C1), at item SD 0 and
0.5. The truth of each task x complexity cell is its accuracy over participants *and* items
(:func:`~tracktale.analysis.power.simulate.population_cell_accuracy`, task coded as the
simulator codes it: explicit +0.5), the quantity a reader takes the interval to be about. Prints
how often each interval covers it, and the mean width ratio. Asserts nothing.

Until issue 29 this script coded implicit as +0.5 while the simulator coded explicit +0.5, so its
truth swapped the tasks, and its truth held the items fixed.

Run: .venv/bin/python benchmarks/bench_interval_coverage.py [--simulations 300]
[--item-sds 0,0.5] [--intercepts-only]
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import time

import numpy as np

from tracktale.analysis.power.simulate import (
    SimulationParams,
    human_design,
    population_cell_accuracy,
    simulate_outcomes,
)
from tracktale.analysis.stats.proportions import clustered_accuracy_interval, wilson_interval
from tracktale.stimuli.registry import get_paradigm


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--simulations", type=int, default=300)
    parser.add_argument("--participants", type=int, default=48)
    parser.add_argument("--resamples", type=int, default=1999)
    parser.add_argument("--item-sds", default="0,0.5")
    parser.add_argument("--intercepts-only", action="store_true", help="no slopes or guessers")
    args = parser.parse_args(argv)
    design = human_design(get_paradigm("narrative").generate_set("human", 1))
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    for item_sd in (float(s) for s in args.item_sds.split(",")):
        params = SimulationParams(participant_sd=0.5, item_sd=item_sd)
        if not args.intercepts_only:
            params = params.richer()
        truth = population_cell_accuracy(design, params)
        covered: dict[str, list[bool]] = {"wilson": [], "bootstrap": []}
        ratios = []
        started = time.perf_counter()
        for sim in range(args.simulations):
            rng = np.random.default_rng([11, sim, round(100 * item_sd)])
            trials = simulate_outcomes(design, args.participants, params, rng)
            trials = trials[trials["role"] == "main"]
            for (task, level), group in trials.groupby(["task", "complexity"]):
                k, n = group["correct"].sum(), len(group)
                w_low, w_high = wilson_interval(k, n)
                _, b_low, b_high, _ = clustered_accuracy_interval(
                    group["correct"], group["agent"], resamples=args.resamples, seed=sim
                )
                covered["wilson"].append(w_low <= truth[(task, level)] <= w_high)
                covered["bootstrap"].append(b_low <= truth[(task, level)] <= b_high)
                ratios.append((b_high - b_low) / (w_high - w_low))
        shown = {k: v for k, v in dataclasses.asdict(params).items() if k.endswith(("sd", "ers"))}
        print(
            f"item SD {item_sd} ({shown}): {args.simulations} studies x 8 cells in "
            f"{time.perf_counter() - started:.0f} s; coverage of the population cell accuracy: "
            f"Wilson over pooled trials {100 * np.mean(covered['wilson']):.1f}%, participant "
            f"bootstrap (BCa) {100 * np.mean(covered['bootstrap']):.1f}%; bootstrap/Wilson "
            f"width {np.mean(ratios):.2f}"
        )


if __name__ == "__main__":
    main()
