"""Power of the recency or complexity tests: the item permutation tests beside the Wald tests.

The permutation tests hold their 5% rate where the GLMs' Wald tests do not
(``bench_null_calibration.py``); this prints what that costs in power. Participants are
simulated in the human protocol's design with a recency effect (log-odds per focus position,
centred) or, with ``--term complexity``, a complexity effect (log-odds per level, the same in
both tasks) and no other effect, items with SD 0.2 and 0.5, and each study is tested by the paper's
GLM (participant-clustered z), the two-way clustered GLM (z, t and the report's floored t) and
the permutation test (9,999 relabellings). A Wald test that rejects a true null too often also
looks more powerful here: compare power only between tests that hold their size.

Run: .venv/bin/python benchmarks/bench_recency_power.py [--sims 300] [--effects 0.15,0.3]
[--term recency|complexity]
Prints figures and the load average; asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import time

from tracktale.analysis.power.calibration import NullScenario, glm_calibration, rejection_table
from tracktale.stimuli.registry import get_paradigm

LABELS = {
    ("glm", "normal"): "paper's GLM (z)",
    ("glm-2way", "normal"): "two-way GLM (z)",
    ("glm-2way", "t"): "two-way GLM (t)",
    ("glm-2way", "t, floored"): "two-way GLM (t, SE floor)",
    ("permutation", "permutation"): "item permutation",
}


def _load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.1f} / {five:.1f} / {fifteen:.1f} on {os.cpu_count()} cores"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sims", type=int, default=300, help="studies per design and effect")
    parser.add_argument("--term", choices=("recency", "complexity"), default="recency")
    parser.add_argument("--effects", default="0.15,0.3", help="effects (log-odds per unit)")
    parser.add_argument("--participants", type=int, default=48)
    parser.add_argument("--item-sds", default="0.2,0.5")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    stimulus_set = get_paradigm("narrative").generate_set("human", 1)
    print(f"start: {_load()}; {args.sims} studies per design, N = {args.participants}")
    started = time.perf_counter()
    for item_sd in (float(s) for s in args.item_sds.split(",")):
        for effect in (-float(e) for e in args.effects.split(",")):
            scenario = NullScenario(
                participants=args.participants,
                item_sd=item_sd,
                seed=args.seed,
                **{args.term: effect},
            )
            t0 = time.perf_counter()
            pvalues = glm_calibration(stimulus_set, scenario, args.sims, args.workers)
            table = rejection_table(pvalues[pvalues["test"] == args.term])
            unit = "position" if args.term == "recency" else "complexity level"
            print(f"\nitem SD = {item_sd}, {args.term} = {effect} log-odds per {unit}")
            print(f"  {'test':<28}{'power':>7}  95% CI          failed")
            for row in table.itertuples():
                label = LABELS.get((row.method, row.reference), f"{row.method} {row.reference}")
                print(
                    f"  {label:<28}{100 * row.rate:6.1f}%  [{100 * row.ci_low:4.1f}, "
                    f"{100 * row.ci_high:4.1f}]  {row.failed:>6}"
                )
            print(f"  time {time.perf_counter() - t0:.0f} s; {_load()}")
    print(f"\ntotal {time.perf_counter() - started:.0f} s; end: {_load()}")


if __name__ == "__main__":
    main()
