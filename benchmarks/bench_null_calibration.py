"""Null calibration of every default test: the type I error rate of each inference method.

Simulates the human protocol's own design (four lists, blocked formats, 46 trials, the paper's
exclusions) with no complexity, task, interaction or recency effect, items drawn anew in every
study with SD 0.2 and 0.5, at 48 and 96 participants, from a truth richer than the models
fitted (since issue 29: task slopes by participant SD 0.5 and by item SD 0.4, complexity slopes
by participant SD 0.15, 10% guessers, item SD twice as large at C4 as at C1;
``--intercepts-only`` gives the old truth), and prints the share of studies in which
each default test rejects at alpha 0.05, with its Wilson 95% interval, under the paper's GLM
(participant-clustered, z), the two-way clustered GLM (z and t(items - 1), and the report's
default: each SE at least the participant-clustered one, t(items - 1)) and glmer (lme4's Wald z,
the report's t with between-within degrees of freedom, and the LRT for recency), and the
report's item-permutation tests (recency within complexity levels, complexity across items).
``--ladder N`` adds glmer with the design's maximal random effects simplified along the
declared ladder (the report's default since issue 29; slow: minutes per study on two cores).
Failed fits are counted apart (``failed``), not as non-rejections.
Goal: every default test within 5% +- 1.5. benchmarks/RESULTS.md gives the measured table.

Run: .venv/bin/python benchmarks/bench_null_calibration.py [--glm 2000] [--glmer 1000]
[--ladder 0] [--intercepts-only]
Prints figures and the load average; asserts nothing. ``--out FOLDER`` keeps every p-value.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from tracktale.analysis.power.calibration import (
    INTERCEPTS_ONLY,
    NullScenario,
    glm_calibration,
    glmer_calibration,
    glmer_ladder_calibration,
    rejection_table,
)
from tracktale.analysis.stats.lme4 import lme4_available
from tracktale.stimuli.registry import get_paradigm


def _load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.1f} / {five:.1f} / {fifteen:.1f} on {os.cpu_count()} cores"


def _print_table(table, scenario: NullScenario) -> None:
    print(f"\nN = {scenario.participants}, item SD = {scenario.item_sd}")
    print(f"  {'method':<30}{'test':<13}{'rate':>7}  95% CI            sims  failed")
    for row in table.itertuples():
        reference = {
            "normal": "z",
            "likelihood ratio": "LRT",
            "t (between-within df)": "t BW",
            "t, floored": "t, SE floor",
            "permutation": "items",
            "t, HC3": "logit slope, t HC3",
        }
        method = f"{row.method} ({reference.get(row.reference, 't')})"
        flag = "" if 0.035 <= row.rate <= 0.065 else "  <- outside 5% +- 1.5"
        print(
            f"  {method:<30}{row.test:<13}{100 * row.rate:6.1f}%  "
            f"[{100 * row.ci_low:4.1f}, {100 * row.ci_high:4.1f}]    {row.simulations:>5}  "
            f"{row.failed:>6}{flag}"
        )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--glm", type=int, default=2000, help="GLM simulations per design")
    parser.add_argument("--glmer", type=int, default=1000, help="glmer simulations per design")
    parser.add_argument("--sizes", default="48,96")
    parser.add_argument("--item-sds", default="0.2,0.5")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--ladder", type=int, default=0, help="maximal-glmer studies per design")
    parser.add_argument("--ladder-models", default="model 1", help="'model 1' and/or 'model 2'")
    parser.add_argument("--intercepts-only", action="store_true", help="the old, plain truth")
    parser.add_argument("--out", type=Path, help="write every p-value here (CSV per design)")
    args = parser.parse_args(argv)
    stimulus_set = get_paradigm("narrative").generate_set("human", 1)
    glmer = args.glmer if lme4_available() else 0
    if args.glmer and not glmer:
        print("R with lme4 is not installed: glmer is left out", file=sys.stderr)
    print(f"start: {_load()}; {args.glm} GLM and {glmer} glmer simulations per design")
    started = time.perf_counter()
    import pandas as pd

    for participants in (int(n) for n in args.sizes.split(",")):
        for item_sd in (float(s) for s in args.item_sds.split(",")):
            truth = INTERCEPTS_ONLY if args.intercepts_only else {}
            scenario = NullScenario(
                participants=participants, item_sd=item_sd, seed=args.seed, **truth
            )
            t0 = time.perf_counter()
            parts = [glm_calibration(stimulus_set, scenario, args.glm, args.workers)]
            t1 = time.perf_counter()
            if glmer:
                parts.append(glmer_calibration(stimulus_set, scenario, glmer, args.workers))
            t2 = time.perf_counter()
            ladder = None
            if args.ladder and lme4_available():
                models = tuple(m.strip() for m in args.ladder_models.split(","))
                ladder = glmer_ladder_calibration(
                    stimulus_set, scenario, args.ladder, args.workers, models
                )
                parts.append(ladder)
            t3 = time.perf_counter()
            pvalues = pd.concat(parts, ignore_index=True)
            _print_table(rejection_table(pvalues), scenario)
            if glmer:
                fits = parts[1][parts[1]["reference"] == "normal"]
                print(
                    f"  glmer: {100 * fits['singular'].mean():.1f}% singular fits, "
                    f"{(fits['warning'].fillna('') != '').mean() * 100:.1f}% with warnings, "
                    f"{(fits['error'].fillna('') != '').sum()} errors"
                )
            if ladder is not None and not ladder.empty:
                fits = ladder.drop_duplicates(["sim", "formula"])
                print(
                    f"  maximal glmer: {100 * fits['singular'].mean():.0f}% of final fits "
                    f"singular, {100 * (~fits['converged']).mean():.0f}% not converged, "
                    f"{fits['steps'].mean():.1f} fits per ladder; final structures:"
                )
                for formula, count in fits["formula"].value_counts().head(4).items():
                    print(f"    {count:>4}  ({formula.split(' + (', 1)[-1]}")
            print(
                f"  time: GLM {t1 - t0:.0f} s, glmer {t2 - t1:.0f} s, maximal glmer "
                f"{t3 - t2:.0f} s; {_load()}"
            )
            if args.out:
                args.out.mkdir(parents=True, exist_ok=True)
                pvalues.to_csv(args.out / f"null_N{participants}_sd{item_sd}.csv", index=False)
    print(f"\ntotal {time.perf_counter() - started:.0f} s; end: {_load()}")


if __name__ == "__main__":
    main()
