"""Null calibration of the boxes and arithmetic people tests (``analysis power --paradigm``).

Simulates each paradigm's human study in its own design (the human protocol's set, seed 1;
four lists given in turn; the study's simulated people: ability SD 0.5, 6% inattentive) with
no effect of the tested term (the other effects as the study simulates them), at 8, 16 and 32
participants, and prints the share of studies in which each test of
:mod:`tracktale.analysis.power.people` rejects at alpha 0.05, with its Wilson 95% interval.
Each simulated study is tested by every test, so the rows of one design share their data.
Goal: the default (``participant-t``) within 5% +- 1.5 or below. benchmarks/RESULTS.md gives
the table.

Run: .venv/bin/python benchmarks/bench_people_null.py [--studies 400] [--terms default|all]
[--tests participant-t]
Prints figures and the load average; asserts nothing.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from bench_null_calibration import _load

from tracktale.analysis.power.people import (
    TESTS,
    default_effects,
    list_designs,
    power_model,
    power_paradigms,
    simulate_study,
    test_study,
)
from tracktale.analysis.stats.proportions import wilson_interval
from tracktale.stimuli.registry import get_paradigm


def calibrate(
    paradigm: str, term: str, size: int, studies: int, seed: int, tests: tuple[str, ...] = TESTS
) -> dict[tuple[str, str], tuple[int, int]]:
    """Rejections per (test, outcome) under the null of ``term``: (rejected, failed)."""
    stimulus_set = get_paradigm(paradigm).generate_set("human", 1)
    designs = list_designs(stimulus_set, paradigm)
    effects = {**default_effects(paradigm), term: 0.0}
    rng = np.random.default_rng(seed)
    counts = {
        (test, outcome): [0, 0] for test in tests for outcome in power_model(paradigm).outcomes
    }
    for _ in range(studies):
        right = simulate_study(designs, paradigm, size, effects, rng)
        for (test, outcome), count in counts.items():
            found = test_study(designs, paradigm, right, term, test, outcome)
            if found is None:
                count[1] += 1
            elif found[1] < 0.05:
                count[0] += 1
    return {key: (value[0], value[1]) for key, value in counts.items()}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--studies", type=int, default=400, help="simulated studies per row")
    parser.add_argument("--sizes", default="8,16,32")
    parser.add_argument("--terms", choices=("default", "all"), default="default")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--tests", default=",".join(TESTS), help="comma-separated")
    args = parser.parse_args(argv)
    print(f"start: {_load()}; {args.studies} null studies per design")
    started = time.perf_counter()
    for paradigm in power_paradigms():
        terms = power_model(paradigm).terms
        for term in terms if args.terms == "all" else terms[:1]:
            for size in (int(n) for n in args.sizes.split(",")):
                t0 = time.perf_counter()
                tests = tuple(args.tests.split(","))
                counts = calibrate(paradigm, term, size, args.studies, args.seed, tests)
                print(
                    f"\n{paradigm}, no {term} effect, N = {size} ({time.perf_counter() - t0:.0f} s)"
                )
                for (test, outcome), (rejected, failed) in counts.items():
                    low, high = wilson_interval(rejected, args.studies)
                    rate = rejected / args.studies
                    flag = "  <- above 6.5%" if rate > 0.065 else ""
                    print(
                        f"  {test:<15}{outcome:<10}{100 * rate:6.1f}%  "
                        f"[{100 * low:4.1f}, {100 * high:4.1f}]  failed {failed:>3}{flag}"
                    )
    print(f"\ntotal {time.perf_counter() - started:.0f} s; end: {_load()}")


if __name__ == "__main__":
    main()
