"""The whole narrative model protocol on one device, and one step of a checkpoint sweep.

For each ``--shapes`` (random-init GPT-NeoX models of Pythia-160M's and Pythia-1B's shapes),
on the 1,650-item model protocol (or ``--items``), prints:

- implicit pairs/s and explicit prompts/s with the model loaded (``score_items`` on the items
  in chunks, as the runner does), with peak memory;
- a sweep step: ``run_scoring`` of both tasks for one revision held in a local Hugging Face
  cache (``HF_HUB_OFFLINE``), so loading from local disk is counted, as a sweep job does it.
  Loading should dominate.

Meant for a GPU (``--device cuda --dtype bfloat16``; target: 1,650 implicit pairs of the 1B
shape in under 3 s on one H200); on a CPU it runs too, slowly (use ``--items``).

Run: .venv/bin/python benchmarks/bench_protocol.py --device cuda --dtype bfloat16
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

import scoring_baselines as base
import torch

from tracktale.models.hf import HFScorer
from tracktale.models.runner import ScoringJob, run_scoring
from tracktale.models.tasks import TaskOptions, score_items
from tracktale.models.testing import (
    add_to_hub_cache,
    make_model,
    make_tokenizer,
    save_model,
    train_bpe,
)
from tracktale.stimuli.registry import get_paradigm
from tracktale.stimulus_set import write_stimulus_set


def synchronize(device: str) -> None:
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def timed_task(scorer, items, task, sha, device) -> tuple[float, int, base.PeakMemory]:
    """Seconds to score ``items`` on ``task`` (in the runner's chunks), rows and peak memory."""
    ordered = sorted(
        items, key=(lambda i: i.choice.prefix) if task == "implicit" else (lambda i: i.prompt)
    )
    with base.PeakMemory(device) as peak:
        synchronize(device)
        start = time.perf_counter()
        rows = 0
        for first in range(0, len(ordered), CHUNK):
            chunk = ordered[first : first + CHUNK]
            rows += len(
                score_items(scorer, chunk, task, stimulus_sha256=sha, options=TaskOptions())
            )
        synchronize(device)
        seconds = time.perf_counter() - start
    return seconds, rows, peak


def memory_text(peak: base.PeakMemory) -> str:
    text = f"peak RSS {peak.peak / 2**30:.2f} GiB"
    if peak.cuda:
        text += f", peak CUDA {peak.cuda_peak / 2**30:.2f} GiB"
    return text


def bench_shape(args, shape, tokenizer, full, items, tmp: Path) -> None:
    # Saved in the compute dtype, as real checkpoints are (loading moves those bytes).
    model = make_model("gpt_neox", tokenizer, shape=shape).to(getattr(torch, args.dtype))
    folder = save_model(tmp / shape, model, tokenizer)
    del model
    start = time.perf_counter()
    scorer = HFScorer(str(folder), dtype=args.dtype, device=args.device, batch_size=args.batch_size)
    load = time.perf_counter() - start
    weights = sum(p.numel() * p.element_size() for p in scorer.model.parameters())
    print(
        f"{shape}: {scorer.info.details['n_parameters'] / 1e6:.0f}M parameters "
        f"({weights / 2**30:.2f} GiB), {args.dtype} on {scorer.info.device}, loaded in "
        f"{load:.2f} s; attention {scorer.info.details['attn_implementation']}, tree masks "
        f"{scorer.info.details['tree_attention']}"
    )
    for task in ("implicit", "explicit"):
        timed_task(scorer, items[: min(len(items), 64)], task, full.sha256, args.device)  # warm-up
        seconds, rows, peak = timed_task(scorer, items, task, full.sha256, args.device)
        unit = "pairs" if task == "implicit" else "prompts"
        print(
            f"  {task:<9} {rows} {unit} in {seconds:7.2f} s  {rows / seconds:9.1f} {unit}/s  "
            f"{memory_text(peak)}"
        )
    scorer.close()
    del scorer
    sweep_step(args, shape, folder, full, items, tmp)


def sweep_step(args, shape, folder, full, items, tmp: Path) -> None:
    """One sweep job: a revision from the local hub cache, both tasks, written to a store."""
    cache = tmp / f"hub-{shape}"
    add_to_hub_cache(cache, f"bench/{shape}", {"step1000": folder})
    os.environ["HF_HUB_CACHE"], os.environ["HF_HUB_OFFLINE"] = str(cache), "1"
    from huggingface_hub import constants

    constants.HF_HUB_CACHE, constants.HF_HUB_OFFLINE = str(cache), True
    stimuli = tmp / "stimuli"
    if not stimuli.exists():
        write_stimulus_set(full, stimuli)
    job = ScoringJob(
        stimuli,
        f"bench/{shape}",
        tmp / f"store-{shape}",
        revisions=["step1000"],
        tasks=("implicit", "explicit"),
        dtype=args.dtype,
        device=args.device,
        batch_size=args.batch_size,
        limit=len(items),
    )
    with base.PeakMemory(args.device) as peak:
        start = time.perf_counter()
        summary = run_scoring(job)
        synchronize(args.device)
        seconds = time.perf_counter() - start
    rows = sum(summary.scored.values())
    print(
        "  sweep step (load step1000 from local disk, both tasks, write the store): "
        f"{rows} rows in {seconds:.2f} s  {memory_text(peak)}"
    )


CHUNK = 128


def main() -> None:
    global CHUNK
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shapes", default="pythia-160m,pythia-1b")
    parser.add_argument("--items", type=int, default=1650)
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--dtype", default="bfloat16" if torch.cuda.is_available() else "float32")
    parser.add_argument("--batch-size", type=int, default=None, help="[auto]")
    parser.add_argument("--chunk", type=int, default=None, help="items per call [runner's]")
    args = parser.parse_args()
    CHUNK = args.chunk or 8 * (args.batch_size or 16)
    gpu = torch.cuda.get_device_name() if torch.cuda.is_available() else "no GPU"
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"load average {load}; torch {torch.__version__}; {gpu}")
    full = get_paradigm("narrative").generate_set("model", 1)
    items = list(full)[: args.items]
    corpus = [
        t for i in list(full)[::3] for t in (i.choice.prompt_good, i.choice.prompt_bad, i.prompt)
    ]
    tokenizer = make_tokenizer(train_bpe(corpus, 600), kind="pythia")
    with tempfile.TemporaryDirectory() as tmp:
        for shape in args.shapes.split(","):
            bench_shape(args, shape, tokenizer, full, items, Path(tmp))


if __name__ == "__main__":
    main()
