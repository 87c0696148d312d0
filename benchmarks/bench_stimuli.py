"""Time the generation of the full narrative model protocol (550 items x 3 templates).

Target: under 2 seconds on one core. Prints the best of several runs; nothing is asserted.
Run: .venv/bin/python benchmarks/bench_stimuli.py
"""

from __future__ import annotations

import os
import time

from tracktale.stimuli.registry import get_paradigm


def main(repeats: int = 5) -> None:
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})  # one core, as the target says
    narrative = get_paradigm("narrative")
    narrative.generate_set("model", 0)  # warm the lexicon caches and imports
    timings = []
    for seed in range(1, repeats + 1):
        start = time.perf_counter()
        stimulus_set = narrative.generate_set("model", seed)
        timings.append(time.perf_counter() - start)
    best, worst = min(timings), max(timings)
    print(f"narrative model protocol: {len(stimulus_set)} items (generate + verify + manifest)")
    print(
        f"best {best:.3f} s, worst {worst:.3f} s over {repeats} runs on one core "
        f"({len(stimulus_set) / best:,.0f} items/s); target < 2 s"
    )


if __name__ == "__main__":
    main()
