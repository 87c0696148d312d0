"""Time the boxes paradigm: generating its protocols, scoring outputs, and the analysis tables.

Targets: the model protocol (900 items, generated and verified) under 3 s on one core; scoring
at least 2,000 outputs per second; the tables of a probed set (2,504 items) under 2 s. Prints
the best of several runs; nothing is asserted.
Run: .venv/bin/python benchmarks/bench_boxes.py
"""

from __future__ import annotations

import dataclasses
import os
import random
import time

import pandas as pd

from tracktale.analysis.boxes import scores, transitions
from tracktale.stimuli.registry import get_paradigm


def best_of(repeats: int, action) -> tuple[float, object]:
    timings, result = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        result = action()
        timings.append(time.perf_counter() - start)
    return min(timings), result


def noisy_outputs(stimulus_set) -> pd.DataFrame:
    rng = random.Random(0)
    rows = []
    for item in stimulus_set:
        parts = [
            part.replace("=True", "=X").replace("=False", "=True").replace("=X", "=False")
            if rng.random() < 0.05
            else part
            for part in item.answer.split(", ")
        ]
        rows.append(
            {
                "model_id": "bench",
                "revision": None,
                "item_id": item.item_id,
                "task": "explicit",
                "output": "Answer: " + ", ".join(parts) + "\nStep-10: ...",
            }
        )
    return pd.DataFrame(rows)


def main(repeats: int = 3) -> None:
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    boxes = get_paradigm("boxes")
    boxes.generate_set("smoke", 0)  # warm imports and the sentence bank
    for protocol in ("model", "probing"):
        seconds, stimulus_set = best_of(repeats, lambda p=protocol: boxes.generate_set(p, 1))
        print(
            f"boxes {protocol} protocol: {len(stimulus_set)} items in {seconds:.2f} s "
            f"({len(stimulus_set) / seconds:,.0f} items/s, generate + verify + manifest)"
        )
    results = noisy_outputs(stimulus_set)
    items = list(stimulus_set)
    outputs = list(results["output"])
    seconds, _ = best_of(
        repeats, lambda: [boxes.score_response(i, o) for i, o in zip(items, outputs, strict=True)]
    )
    print(f"score_response: {len(items) / seconds:,.0f} outputs/s")

    def tables(rows):
        scored = scores.scored_items(rows, stimulus_set)
        scores.final_step_table(scored)
        scores.probing_table(scored)
        transitions.transition_counts(transitions.label_transitions(scored, stimulus_set))

    seconds, _ = best_of(repeats, lambda: tables(results))
    print(f"analysis tables of the probing set (no figures), outputs parsed: {seconds:.2f} s")
    judged = [
        dataclasses.asdict(boxes.score_response(i, o)) for i, o in zip(items, outputs, strict=True)
    ]
    stored = pd.concat([results, pd.DataFrame(judged)], axis=1)  # as the explicit task stores
    seconds, _ = best_of(repeats, lambda: tables(stored))
    print(f"analysis tables of the probing set (no figures), stored judgements: {seconds:.2f} s")


if __name__ == "__main__":
    main()
