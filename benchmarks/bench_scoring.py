"""Time implicit scoring and generation against a naive loop, minicons and lm-eval-harness.

In one run, on one random-init model of Pythia-160M's shape (GPT-NeoX: hidden 768, 12 layers,
12 heads, intermediate 3072, vocabulary 50304; fp32 on CPU) and (prefix, good, bad) pairs
spread over the narrative model protocol, this prints:

1. implicit pairs/s on the same loaded model object: the naive loop (one full forward per
   prefix + continuation), minicons' ``conditional_score``, lm-eval's ``HFLM.loglikelihood``
   and tracktale (token trees: each shared beginning once, logits only where scored);
2. explicit prompts/s, greedy, 8 and 64 new tokens: a loop of ``model.generate()``,
   lm-eval's ``generate_until`` (batched ``generate()``) and tracktale's batched decoding;
3. end to end, each method in a fresh process that imports, loads the model from disk and
   scores the pairs: ``tracktale models score`` against lm-eval and minicons scripts.

Every method runs once per round, rounds interleaved, and each keeps its fastest round, so the
noise of a shared machine falls on all alike. Every score is checked against the naive loop's
(every output against the loop of ``generate()``'s), so a fast wrong answer shows. Peak memory
is printed per case: in this process, what the case needs above the process before the model
was loaded, against twice the model's weights plus the largest batch's activations.
Targets on a 2-core CPU: implicit >= 4x minicons and >= 2.5x lm-eval end to end, generation
>= 5x the loop. Nothing is asserted.

minicons and lm-eval are not tracktale dependencies: ``pip install -e ".[bench]"`` to
include them (each is skipped, saying so, when missing).

Run: .venv/bin/python benchmarks/bench_scoring.py [--pairs 96] [--end-to-end 198]
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import importlib.util
import os
import shutil
import tempfile
import time
from pathlib import Path

import scoring_baselines as base
import torch

from tracktale.models import memory, packing
from tracktale.models.hf import HFScorer
from tracktale.models.testing import make_model, make_tokenizer, save_model, train_bpe
from tracktale.scorer import ChoiceRequest, GenerationRequest
from tracktale.stimuli.registry import get_paradigm
from tracktale.stimulus_set import StimulusSet, items_jsonl, write_stimulus_set

ARGS: argparse.Namespace
BASE_RSS = 0
LM_EVAL = None

ANCHORS = {"minicons conditional_score": "minicons", "lm-eval HFLM.loglikelihood": "lm_eval"}


def spread(items, n: int):
    """``n`` items spread evenly over the protocol (every cell and template represented)."""
    if n <= 0:
        return []
    step = max(1, len(items) // n)
    return items[::step][:n]


def timed(function):
    """Wall-clock and CPU seconds (all threads) of one call, its result and its peak memory."""
    with base.PeakMemory(ARGS.device) as peak:
        wall, cpu = time.perf_counter(), time.process_time()
        result = function()
        seconds = (time.perf_counter() - wall, time.process_time() - cpu)
    return seconds, result, peak


def best_of(rounds: int, runners: dict) -> dict:
    """Run every method once per round, interleaved; keep each one's fastest round."""
    best: dict = {}
    for _ in range(rounds):
        for name, run in runners.items():
            seconds, result, peak = timed(run)
            if name not in best:
                best[name] = [seconds, result, peak]
            else:
                old = best[name]
                old[0] = (min(old[0][0], seconds[0]), min(old[0][1], seconds[1]))
                old[2] = max(old[2], peak, key=lambda p: p.peak)
    return best


def gib(n: float) -> str:
    return f"{n / 2**30:5.2f} GiB"


def memory_column(peak) -> str:
    need = peak.peak - BASE_RSS
    text = f"peak {gib(peak.peak)} RSS, needs {gib(need)}"
    if peak.cuda:
        text += f", CUDA {gib(peak.cuda_peak)}"
    return text


def table(title, best, reference_name, count, unit, compare) -> None:
    print(title)
    ours = best["tracktale"][0]
    for name, (seconds, result, peak) in best.items():
        wall, cpu = seconds
        ratio = (
            ""
            if name == "tracktale"
            else f"tracktale {wall / ours[0]:5.2f}x wall {cpu / ours[1]:5.2f}x cpu"
        )
        check = compare(result, best[reference_name][1])
        print(
            f"  {name:<30} {wall:7.2f} s {cpu:7.2f} cpu-s {count / wall:7.2f} {unit}/s"
            f"  {ratio:<34} {check}  {memory_column(peak)}"
        )


def sums_agree(sums, reference) -> str:
    worst = max(abs(a - b) for a, b in zip(sums, reference, strict=True))
    return f"max |diff| {worst:.1e} nats"


def bench_implicit(scorer, pairs) -> None:
    model, tokenizer = scorer.model, scorer.tokenizer
    requests = [ChoiceRequest(prefix, (good, bad)) for prefix, good, bad in pairs]
    runners = {
        "naive loop": lambda: base.naive(model, tokenizer, pairs, ARGS.device),
        "tracktale": lambda: [s.reduce() for p in scorer.conditional_score(requests) for s in p],
    }
    if importlib.util.find_spec("minicons"):
        minicons = base.minicons_runner(model, tokenizer, ARGS.device, scorer_batch(scorer))
        runners["minicons conditional_score"] = lambda: minicons(pairs)
    if LM_EVAL is not None:
        runners["lm-eval HFLM.loglikelihood"] = lambda: base.lm_eval_loglikelihood(LM_EVAL, pairs)
    skipped(ANCHORS.values())
    best = best_of(ARGS.rounds, runners)  # the first round also warms every method up
    table(
        f"implicit, same loaded model: {len(pairs)} pairs, best of {ARGS.rounds} rounds",
        best,
        "naive loop",
        len(pairs),
        "pairs",
        sums_agree,
    )
    print(f"  {activation_bound(scorer, pairs)}")


def scorer_batch(scorer) -> int:
    return scorer.batch_size or memory.CPU_BATCH


def activation_bound(scorer, pairs) -> str:
    """Twice the weights plus tracktale's largest batch's activations (the memory bound)."""
    weights = sum(p.numel() * p.element_size() for p in scorer.model.parameters())
    rows = packing.pack(
        [e.prefix + c[:-1] for e in _encoded(scorer, pairs) for c in e.continuations],
        budget=scorer.row_tokens,
    )
    batch = rows[: scorer_batch(scorer)]
    activations = len(batch) * memory.row_bytes(
        scorer.model.config, len(batch[0]), scorer.model.dtype.itemsize
    )
    return (
        f"bound: 2 x weights ({gib(weights)}) + largest batch's activations "
        f"({len(batch)} rows of {len(batch[0])} tokens, {gib(activations)}) = "
        f"{gib(2 * weights + activations)}"
    )


def _encoded(scorer, pairs):
    return [scorer.encoder.choice(prefix, (good, bad)) for prefix, good, bad in pairs]


def skipped(modules) -> None:
    for name, module in ANCHORS.items():
        if module in modules and importlib.util.find_spec(module) is None:
            print(f"  {name} skipped ({module} is not installed)")


def bench_generation(scorer, prompts, budget, rounds) -> None:
    model, tokenizer = scorer.model, scorer.tokenizer
    requests = [GenerationRequest(prompt, max_new_tokens=budget) for prompt in prompts]
    runners = {
        "loop of generate()": lambda: base.generate_loop(
            model, tokenizer, prompts, budget, ARGS.device
        ),
        "tracktale": lambda: scorer.generate(requests),
    }
    if LM_EVAL is not None:
        runners["lm-eval generate_until"] = lambda: base.lm_eval_generate(LM_EVAL, prompts, budget)
    best = best_of(rounds, runners)

    def identical(outputs, expected) -> str:
        same = sum(a == b for a, b in zip(outputs, expected, strict=True))
        return f"{same:>3}/{len(expected)} identical"

    table(
        f"explicit: {len(prompts)} prompts, greedy, {budget} new tokens, best of {rounds}",
        best,
        "loop of generate()",
        len(prompts),
        "prompts",
        identical,
    )


def bench_end_to_end(folder: Path, full: StimulusSet, items, rounds: int) -> None:
    """Fresh processes: import, load the model from disk, score every pair of ``items``."""
    with tempfile.TemporaryDirectory() as tmp:
        stimuli = write_stimulus_set(subset(full, items), Path(tmp) / "stimuli")
        item_ids = [item.item_id for item in items]
        runs = {"tracktale models score": None}
        for name, module in ANCHORS.items():
            if importlib.util.find_spec(module):
                runs[name] = base.end_to_end_script(
                    name, stimuli, folder, 2 * memory.CPU_BATCH, ARGS.device
                )
        best: dict = {}
        for round_number in range(rounds):
            for name, argv in runs.items():
                out = Path(tmp) / f"results-{round_number}"
                if argv is None:
                    argv = base.tracktale_end_to_end(stimuli, folder, out, ARGS.device)
                seconds, peak, stdout = base.run_process(argv)
                sums = (
                    base.stored_sums(out, item_ids)
                    if name.startswith("tracktale")
                    else (base.parse_sums(stdout))
                )
                shutil.rmtree(out, ignore_errors=True)
                old = best.get(name)
                if old is None or seconds[0] < old[0][0]:
                    best[name] = (seconds, sums, peak)
    print(
        f"end to end (fresh process: imports, load from disk, score): {len(items)} pairs, "
        f"best of {rounds}"
    )
    ours = best["tracktale models score"][0]
    reference = best["tracktale models score"][1]
    for name, ((wall, cpu), sums, peak) in best.items():
        ratio = (
            ""
            if name.startswith("tracktale")
            else (f"tracktale {wall / ours[0]:5.2f}x wall {cpu / ours[1]:5.2f}x cpu")
        )
        print(
            f"  {name:<30} {wall:7.2f} s {cpu:7.2f} cpu-s {len(items) / wall:7.2f} pairs/s"
            f"  {ratio:<34} {sums_agree(sums, reference)}  peak {gib(peak)} RSS"
        )
    skipped(ANCHORS.values())


def subset(full: StimulusSet, items) -> StimulusSet:
    """The items as a stimulus set of their own (the full set's manifest, recounted)."""
    sha = hashlib.sha256(items_jsonl(items)).hexdigest()
    manifest = dataclasses.replace(full.manifest, n_items=len(items), items_sha256=sha)
    return StimulusSet(manifest=manifest, items=tuple(items))


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--pairs", type=int, default=96, help="implicit pairs, same model (0 skips it)"
    )
    parser.add_argument(
        "--generations", type=int, default=32, help="prompts, 8 new tokens (0 skips it)"
    )
    parser.add_argument(
        "--long-budget",
        type=int,
        default=64,
        help="new tokens of the second generation run, on half as many prompts (0 skips it)",
    )
    parser.add_argument(
        "--end-to-end",
        type=int,
        default=198,
        help="pairs of the end-to-end comparison (0 skips it)",
    )
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds (best kept)")
    parser.add_argument("--e2e-rounds", type=int, default=2, help="end-to-end rounds")
    parser.add_argument("--threads", type=int, default=None, help="torch threads [all]")
    parser.add_argument("--batch-size", type=int, default=None, help="[auto]")
    parser.add_argument("--shape", default="pythia-160m", help="pythia-160m or pythia-1b")
    parser.add_argument("--vocab", type=int, default=600, help="trained tokenizer's vocabulary")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--dtype", default="float32")
    return parser.parse_args()


def main() -> None:
    global ARGS, BASE_RSS, LM_EVAL
    ARGS = parse_args()
    if ARGS.threads:
        torch.set_num_threads(ARGS.threads)
    print(
        f"load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())} "
        f"({os.cpu_count()} cores)"
    )
    full = get_paradigm("narrative").generate_set("model", 1)
    everything = [item for item in full if item.choice]
    # Trained on stories and prompts, the tokenizer cuts about 1.3 tokens per word (as GPT-NeoX's).
    corpus = [
        t for i in everything[::3] for t in (i.choice.prompt_good, i.choice.prompt_bad, i.prompt)
    ]
    with tempfile.TemporaryDirectory() as tmp:
        tokenizer = make_tokenizer(train_bpe(corpus, ARGS.vocab), kind="pythia")
        folder = save_model(
            Path(tmp) / "model", make_model("gpt_neox", tokenizer, shape=ARGS.shape), tokenizer
        )
        BASE_RSS = base.rss_bytes()
        scorer = HFScorer(
            str(folder), dtype=ARGS.dtype, device=ARGS.device, batch_size=ARGS.batch_size
        )
        LM_EVAL = None
        if importlib.util.find_spec("lm_eval"):
            LM_EVAL = base.lm_eval_model(
                scorer.model, scorer.tokenizer, ARGS.device, scorer_batch(scorer)
            )
        header(scorer, everything)
        if ARGS.pairs:
            picked = spread(everything, ARGS.pairs)
            bench_implicit(scorer, [(i.choice.prefix, i.choice.good, i.choice.bad) for i in picked])
        prompts = [i.prompt for i in spread(everything, ARGS.generations)]
        narrative_budget = get_paradigm("narrative").max_new_tokens
        if prompts:
            bench_generation(scorer, prompts, narrative_budget, ARGS.rounds)
        if ARGS.long_budget and len(prompts) > 1:
            half = prompts[: len(prompts) // 2]
            bench_generation(scorer, half, ARGS.long_budget, max(1, ARGS.rounds - 1))
        del scorer, LM_EVAL
        if ARGS.end_to_end:
            bench_end_to_end(folder, full, spread(everything, ARGS.end_to_end), ARGS.e2e_rounds)
    print(f"load average at end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


def header(scorer, everything) -> None:
    sample = spread(everything, ARGS.pairs or 96)
    words = sum(len(i.choice.prompt_good.split()) for i in sample)
    tokens = sum(len(scorer.tokenizer(i.choice.prompt_good)["input_ids"]) for i in sample)
    details = scorer.info.details
    print(
        f"model: random-init GPTNeoXForCausalLM, shape {ARGS.shape}, "
        f"{details['n_parameters'] / 1e6:.0f}M parameters, {ARGS.dtype} on {scorer.info.device}, "
        f"{torch.get_num_threads()} threads, attention {details['attn_implementation']}, "
        f"tree masks {details['tree_attention']}; {tokens / len(sample):.0f} tokens per "
        f"prefix+continuation ({tokens / words:.2f} per word)"
    )


if __name__ == "__main__":
    main()
