"""Time the generation of the arithmetic model protocol: the paper's 55 datasets, 55,000 items.

Target: under 10 seconds on one core for generate + manifest (what `tracktale stimuli generate`
does before writing). Also prints, without a target, writing the set and reading it back (every
line re-validated). Nothing is asserted.
Run: .venv/bin/python benchmarks/bench_arithmetic.py [--repeats N]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

from tracktale.stimuli.registry import get_paradigm
from tracktale.stimulus_set import read_stimulus_set, write_stimulus_set


def main(repeats: int) -> None:
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})  # one core, as the target says
    arithmetic = get_paradigm("arithmetic")
    arithmetic.generate_set("pilot", 0)  # warm imports and caches
    timings, cpu_timings = [], []
    for seed in range(1, repeats + 1):
        start, cpu_start = time.perf_counter(), time.process_time()
        stimulus_set = arithmetic.generate_set("model", seed)
        timings.append(time.perf_counter() - start)
        cpu_timings.append(time.process_time() - cpu_start)
        del stimulus_set  # one set in memory at a time
    stimulus_set = arithmetic.generate_set("model", 1)
    n = len(stimulus_set)
    print(f"arithmetic model protocol: {n:,} items (generate + execute + manifest)")
    print(
        f"wall: best {min(timings):.2f} s, worst {max(timings):.2f} s over {repeats} runs on one "
        f"core ({n / min(timings):,.0f} items/s); target < 10 s"
    )
    # On a shared machine the wall clock includes time other processes held the core.
    print(f"CPU:  best {min(cpu_timings):.2f} s, worst {max(cpu_timings):.2f} s")
    with tempfile.TemporaryDirectory() as folder:
        target = Path(folder) / "set"
        start = time.perf_counter()
        write_stimulus_set(stimulus_set, target)
        written = time.perf_counter() - start
        size = (target / "items.jsonl").stat().st_size
        start = time.perf_counter()
        read_stimulus_set(target)
        read = time.perf_counter() - start
    print(
        f"write {written:.2f} s ({size / 1e6:,.0f} MB items.jsonl); read + re-validate {read:.2f} s"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3, help="generation runs (best is shown)")
    main(parser.parse_args().repeats)
