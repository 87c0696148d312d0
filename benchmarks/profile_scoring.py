"""Where the time of a scoring run goes: start-up, loading, tokenization, packing, forward, head.

Scores the implicit pairs (and, with ``--explicit``, generates the answers) of ``--items``
items spread over the narrative model protocol (1,650: all of it) with a random-init model of
Pythia-160M's shape, as ``tracktale models score`` would, and prints CPU seconds per phase
(CPU time is less disturbed by other jobs on a shared machine than wall time), with the token
counts that explain them: tokens run (real and padding), positions given to the LM head.
``--torch-profiler`` adds torch's own table of the heaviest operators.

Run: .venv/bin/python benchmarks/profile_scoring.py [--items 198] [--explicit] [--torch-profiler]
"""

from __future__ import annotations

import argparse
import collections
import os
import tempfile
import time
from pathlib import Path

START = (time.perf_counter(), time.process_time())

import torch  # noqa: E402

from tracktale.models import hf_forward, packing  # noqa: E402
from tracktale.models.hf import HFScorer  # noqa: E402
from tracktale.models.tasks import TaskOptions, score_items  # noqa: E402

IMPORTED = (time.perf_counter() - START[0], time.process_time() - START[1])

SECONDS: dict[str, float] = collections.defaultdict(float)
COUNTS: collections.Counter = collections.Counter()


def clocked(owner, name: str, label: str, count=None) -> None:
    """Replace ``owner.name`` by a wrapper adding its CPU seconds to ``label``."""
    function = getattr(owner, name)

    def wrapper(*args, **kwargs):
        start = time.process_time()
        result = function(*args, **kwargs)
        SECONDS[label] += time.process_time() - start
        if count is not None:
            count(args, result)
        return result

    setattr(owner, name, wrapper)


def instrument(scorer) -> None:
    # No phase runs inside another, so the shares add up.
    clocked(scorer.encoder, "choice", "tokenization")
    clocked(scorer.encoder, "prompt", "tokenization")
    clocked(packing, "pack", "packing (token trees)", _count_rows)
    clocked(hf_forward, "tree_inputs", "inputs and tree masks")
    clocked(hf_forward.ForwardModel, "run", "forward (transformer body)", _count_forward)
    clocked(hf_forward.ForwardModel, "logits", "LM head (and log-softmax)", _count_head)


def _count_rows(args, rows) -> None:
    COUNTS["packed rows"] += len(rows)
    COUNTS["tree tokens"] += sum(len(row) for row in rows)


def _count_forward(args, result) -> None:
    ids = args[1]
    COUNTS["tokens run (with padding)"] += ids.numel()
    COUNTS["forward passes"] += 1


def _count_head(args, result) -> None:
    COUNTS["LM-head positions"] += args[1].shape[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=198)
    parser.add_argument("--explicit", action="store_true", help="also the explicit task")
    parser.add_argument("--torch-profiler", action="store_true")
    parser.add_argument("--batch-size", type=int, default=None)
    args = parser.parse_args()
    from tracktale.models.testing import make_model, make_tokenizer, save_model, train_bpe
    from tracktale.stimuli.registry import get_paradigm

    full = get_paradigm("narrative").generate_set("model", 1)
    items = list(full)[:: max(1, len(full) // args.items)][: args.items]
    corpus = [
        t for i in list(full)[::3] for t in (i.choice.prompt_good, i.choice.prompt_bad, i.prompt)
    ]
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}; {len(items)} items")
    with tempfile.TemporaryDirectory() as tmp:
        tokenizer = make_tokenizer(train_bpe(corpus, 600), kind="pythia")
        folder = save_model(
            Path(tmp) / "m", make_model("gpt_neox", tokenizer, "pythia-160m"), tokenizer
        )
        wall, cpu = time.perf_counter(), time.process_time()
        scorer = HFScorer(str(folder), device="cpu", batch_size=args.batch_size)
        loaded = (time.perf_counter() - wall, time.process_time() - cpu)
        instrument(scorer)
        tasks = ["implicit"] + (["explicit"] if args.explicit else [])
        for task in tasks:
            profile_task(scorer, items, task, full.sha256, args.torch_profiler)
    print(
        f"start-up: imports {IMPORTED[1]:.2f} cpu-s ({IMPORTED[0]:.2f} s wall); loading and "
        f"probes {loaded[1]:.2f} cpu-s ({loaded[0]:.2f} s wall)"
    )


def profile_task(scorer, items, task, sha, with_profiler) -> None:
    # In text order, as the runner hands items over (items that open alike side by side).
    key = (lambda i: i.choice.prefix) if task == "implicit" else (lambda i: i.prompt)
    items = sorted(items, key=key)
    SECONDS.clear()
    COUNTS.clear()
    wall, cpu = time.perf_counter(), time.process_time()
    if with_profiler:
        from torch.profiler import ProfilerActivity, profile

        with profile(activities=[ProfilerActivity.CPU]) as profiler:
            rows = run_chunks(scorer, items, task, sha)
    else:
        rows = run_chunks(scorer, items, task, sha)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    print(f"{task}: {len(rows)} rows, {cpu:.1f} cpu-s ({wall:.1f} s wall)")
    for label, seconds in sorted(SECONDS.items(), key=lambda pair: -pair[1]):
        print(f"  {label:<30} {seconds:8.2f} cpu-s {100 * seconds / cpu:5.1f}%")
    rest = cpu - sum(SECONDS.values())
    print(f"  {'everything else (Python)':<30} {rest:8.2f} cpu-s {100 * rest / cpu:5.1f}%")
    for label, count in COUNTS.items():
        print(f"  {label}: {count}")
    if with_profiler:
        print(profiler.key_averages().table(sort_by="self_cpu_time_total", row_limit=15))


def run_chunks(scorer, items, task, sha):
    rows = []
    for start in range(0, len(items), 128):  # the runner's chunks
        chunk = items[start : start + 128]
        rows += score_items(scorer, chunk, task, stimulus_sha256=sha, options=TaskOptions())
    return rows


if __name__ == "__main__":
    torch.set_grad_enabled(False)
    main()
