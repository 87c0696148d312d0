"""Calibration of ``tracktale analysis reading`` on simulated reading-time studies.

Prints (1) the coverage of the surprisal slope's 95% interval over studies with a planted slope
(target >= 90%) and (2) the false-positive rate at alpha 0.05 of the ΔLL permutation test over
studies with no surprisal effect (target 5% +- 1.5), with the paired t-test on per-word ΔLL
beside it. The simulated truth is richer than the regressions (item intercepts, by-participant
frequency and surprisal slopes, lognormal RTs): :mod:`tracktale.analysis.reading.simulate`.

Run: .venv/bin/python benchmarks/bench_reading_calibration.py [--studies 200]
[--engine auto|lme4|statsmodels] [--permutations 99] [--seed 0] [--part both|slope|null]
Asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import time
from collections import Counter

from tracktale.analysis.reading.analyse import ReadingOptions
from tracktale.analysis.reading.calibration import (
    ALPHA,
    null_design,
    run_study,
    wilson,
)
from tracktale.analysis.reading.regression import resolve_engine
from tracktale.analysis.reading.simulate import ReadingDesign


def _load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.1f} / {five:.1f} / {fifteen:.1f} on {os.cpu_count()} cores"


def _rate(label: str, hits: int, n: int) -> None:
    low, high = wilson(hits, n)
    print(f"  {label:<44}{100 * hits / n:6.1f}%  [{100 * low:.1f}, {100 * high:.1f}]  n={n}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--studies", type=int, default=200)
    parser.add_argument("--engine", default="auto", choices=["auto", "lme4", "statsmodels"])
    parser.add_argument("--permutations", type=int, default=99)
    parser.add_argument("--folds", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--part", default="both", choices=["both", "slope", "null"])
    args = parser.parse_args()
    engine = resolve_engine(args.engine)
    design = ReadingDesign()
    print(f"design: {design}")
    print(f"engine {engine}, {args.folds} folds over participants; {_load()}")
    if args.part != "null":
        _slope_part(design, engine, args)
    if args.part != "slope":
        _null_part(design, args)
    print(f"\n{_load()}")


def _slope_part(design: ReadingDesign, engine: str, args: argparse.Namespace) -> None:
    start = time.time()
    slope_options = ReadingOptions(engine=engine, folds=args.folds, permutations=0)
    planted = [run_study(design, slope_options, args.seed + i) for i in range(args.studies)]
    covered = sum(outcome.covered for outcome in planted)
    mean_slope = sum(outcome.slope for outcome in planted) / len(planted)
    print(
        f"\nplanted slope {design.surprisal_slope} (mean estimate {mean_slope:.4f}), "
        f"{time.time() - start:.0f} s"
    )
    _rate("slope interval covers the planted slope", covered, len(planted))
    laddered = [outcome for outcome in planted if outcome.fits > 1]
    if engine == "lme4":
        print(f"  the ladder moved in {len(laddered)} of {len(planted)} studies; fitted:")
        for random, count in Counter(outcome.random for outcome in planted).most_common():
            print(f"    {count:4d}  {random}")


def _null_part(design: ReadingDesign, args: argparse.Namespace) -> None:
    start = time.time()
    # The null studies' regressions are not used: the fallback engine keeps them cheap.
    null_options = ReadingOptions(
        engine="statsmodels", folds=args.folds, permutations=args.permutations
    )
    null = [
        run_study(null_design(design), null_options, 100_000 + args.seed + i)
        for i in range(args.studies)
    ]
    print(f"\nno surprisal effect, {args.permutations} permutations, {time.time() - start:.0f} s")
    _rate(
        "ΔLL permutation test rejects (alpha 0.05)",
        sum(o.p_permutation <= ALPHA for o in null),
        len(null),
    )
    _rate("paired t on per-word ΔLL rejects", sum(o.p_paired_t <= ALPHA for o in null), len(null))
    mean_delta = sum(o.delta_ll for o in null) / len(null)
    print(f"  mean ΔLL under the null: {1000 * mean_delta:.3f} millinats per word")


if __name__ == "__main__":
    main()
