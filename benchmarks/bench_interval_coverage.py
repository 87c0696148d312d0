"""Coverage of the human accuracy intervals: pooled-trial Wilson, participant bootstrap, two-way.

Simulates the human protocol (four lists, 36 main trials per participant, no exclusions) with
participants differing in ability (random intercepts, SD 0.5) and, by default, the richer truth
of the null benchmarks (task slopes by participant SD 0.5 and by item SD 0.4, complexity slopes
by participant SD 0.15, 10% guessers, item SD twice as large at C4 as at C1), at item SD 0 and
0.5. The truth of each task x complexity cell is its accuracy over participants *and* items
(:func:`~tracktale.analysis.power.simulate.population_cell_accuracy`, task coded as the
simulator codes it: explicit +0.5), the quantity a reader takes the interval to be about. Prints
how often each interval covers it (Wilson over pooled trials, the participant BCa bootstrap and,
since issue 29's second pass, the report's default over participants and items,
:func:`~tracktale.analysis.stats.proportions.two_way_accuracy_interval`), with the Wilson
interval of each coverage over its cells, and the mean width ratios. Asserts nothing.

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
from tracktale.analysis.stats.proportions import (
    clustered_accuracy_interval,
    two_way_accuracy_interval,
    wilson_interval,
)
from tracktale.stimuli.registry import get_paradigm

LABELS = {
    "wilson": "Wilson over pooled trials",
    "bootstrap": "participant bootstrap (BCa)",
    "two-way": "participants and items (two-way, the default)",
}


def _load() -> str:
    return f"load average {os.getloadavg()[0]:.1f}"


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
        covered: dict[str, list[bool]] = {"wilson": [], "bootstrap": [], "two-way": []}
        ratios: dict[str, list[float]] = {"bootstrap": [], "two-way": []}
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
                _, t_low, t_high, _ = two_way_accuracy_interval(
                    group["correct"], group["agent"], group["item_id"]
                )
                target = truth[(task, level)]
                for name, (low, high) in (
                    ("wilson", (w_low, w_high)),
                    ("bootstrap", (b_low, b_high)),
                    ("two-way", (t_low, t_high)),
                ):
                    covered[name].append(low <= target <= high)
                    if name in ratios:
                        ratios[name].append((high - low) / (w_high - w_low))
        shown = {k: v for k, v in dataclasses.asdict(params).items() if k.endswith(("sd", "ers"))}
        print(
            f"item SD {item_sd} ({shown}): {args.simulations} studies x 8 cells in "
            f"{time.perf_counter() - started:.0f} s ({_load()}); coverage of the population "
            "cell accuracy [Wilson 95% over cells]:"
        )
        for name, label in LABELS.items():
            hits = covered[name]
            low, high = wilson_interval(sum(hits), len(hits))
            width = f"; width / Wilson's {np.mean(ratios[name]):.2f}" if name in ratios else ""
            print(
                f"  {label:<48}{100 * np.mean(hits):5.1f}% [{100 * low:.1f}, {100 * high:.1f}]"
                f"{width}"
            )


if __name__ == "__main__":
    main()
