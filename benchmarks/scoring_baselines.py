"""What ``bench_scoring.py`` measures tracktale against, and how it measures memory.

- the naive loop: one full forward per (prefix + continuation), batch size 1, log-softmax over
  every position;
- minicons' ``IncrementalLMScorer.conditional_score`` and lm-evaluation-harness's
  ``HFLM.loglikelihood`` (and ``HFLM.generate_until``), where installed: they are not
  tracktale dependencies (``pip install -e ".[bench]"``: minicons 0.3.39, lm-eval 0.4.13);
- a loop of unbatched ``model.generate()`` calls;
- the same methods end to end, each in a fresh Python process that imports, loads the model
  from disk and scores (the end-to-end scripts below).

Peak memory: in this process, a thread samples the resident set size while a case runs (and
CUDA's peak allocation on a GPU); a subprocess's peak RSS comes from ``os.wait4``, read by a
small launcher process: Linux carries a parent's high-water RSS into a child it forks and
``exec``s (measured: a 1.5 GB parent made ``python -c pass`` report 1,442 MiB), so the child
is started from a process that is small itself.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import torch

PAGE = os.sysconf("SC_PAGE_SIZE")


def rss_bytes() -> int:
    """This process's resident set size."""
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * PAGE


class PeakMemory:
    """Peak resident memory (and peak CUDA allocation) while the ``with`` block runs."""

    def __init__(self, device: str = "cpu") -> None:
        self.cuda = device.startswith("cuda") and torch.cuda.is_available()
        self.peak = self.before = 0
        self.cuda_peak = 0
        self._stop = threading.Event()

    def _sample(self) -> None:
        while not self._stop.wait(0.005):
            self.peak = max(self.peak, rss_bytes())

    def __enter__(self) -> PeakMemory:
        self.before = self.peak = rss_bytes()
        if self.cuda:
            torch.cuda.synchronize()
            torch.cuda.reset_peak_memory_stats()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        if self.cuda:
            torch.cuda.synchronize()
            self.cuda_peak = torch.cuda.max_memory_allocated()
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, rss_bytes())


def naive(model, tokenizer, pairs, device):
    """One full forward per (prefix + continuation); summed log-probabilities."""
    sums = []
    for prefix, good, bad in pairs:
        context = tokenizer(prefix)["input_ids"]
        for continuation in (good, bad):
            full = tokenizer(prefix + continuation)["input_ids"]
            with torch.inference_mode():
                logits = model(input_ids=torch.tensor([full], device=device)).logits[0].float()
            logprobs = logits.log_softmax(-1)
            sums.append(
                sum(logprobs[t - 1, full[t]].item() for t in range(len(context), len(full)))
            )
    return sums


def minicons_runner(model, tokenizer, device, batch_size):
    """minicons' conditional_score over the pairs, ``2 * batch_size`` sequences per call."""
    from minicons import scorer as minicons_scorer

    lm = minicons_scorer.IncrementalLMScorer(model, device=device, tokenizer=tokenizer)

    def run(pairs):
        prefixes = [prefix for prefix, _, _ in pairs for _ in range(2)]
        continuations = [c for _, good, bad in pairs for c in (good, bad)]
        sums = []
        for start in range(0, len(prefixes), 2 * batch_size):
            sums += lm.conditional_score(
                prefixes[start : start + 2 * batch_size],
                continuations[start : start + 2 * batch_size],
                separator="",  # our continuations carry their own leading space
                reduction=lambda x: x.sum(0).item(),
            )
        return sums

    return run


def lm_eval_model(model, tokenizer, device, batch_size):
    """An ``HFLM`` around an already loaded model (sequences per pass: ``2 * batch_size``)."""
    from lm_eval.models.huggingface import HFLM

    # lm-eval batches sequences, tracktale prefixes (two sequences each): same sequences per pass.
    return HFLM(pretrained=model, tokenizer=tokenizer, batch_size=2 * batch_size, device=device)


def lm_eval_loglikelihood(lm, pairs):
    """Summed log-probabilities of both continuations of every pair, through lm-eval."""
    from lm_eval.api.instance import Instance

    instances = [
        Instance("loglikelihood", {}, (prefix, continuation), index)
        for index, (prefix, continuation) in enumerate(
            (prefix, c) for prefix, good, bad in pairs for c in (good, bad)
        )
    ]
    return [logprob for logprob, _ in lm.loglikelihood(instances, disable_tqdm=True)]


def lm_eval_generate(lm, prompts, budget):
    """Greedy completions through lm-eval's ``generate_until`` (batched ``generate()``)."""
    from lm_eval.api.instance import Instance

    kwargs = {"until": [], "max_gen_toks": budget, "do_sample": False}
    instances = [
        Instance("generate_until", {}, (prompt, dict(kwargs)), index)
        for index, prompt in enumerate(prompts)
    ]
    return lm.generate_until(instances, disable_tqdm=True)


def generate_loop(model, tokenizer, prompts, budget, device):
    """A loop of unbatched greedy ``model.generate()`` calls."""
    outputs = []
    for prompt in prompts:
        ids = torch.tensor([tokenizer(prompt)["input_ids"]], device=device)
        generated = model.generate(
            ids,
            attention_mask=torch.ones_like(ids),
            max_new_tokens=budget,
            do_sample=False,
            pad_token_id=tokenizer.pad_token_id,
        )
        outputs.append(tokenizer.decode(generated[0, ids.shape[1] :], skip_special_tokens=True))
    return outputs


# End to end: each script reads the stimulus set, loads the model from disk and scores every
# implicit pair; it prints one JSON line of summed log-probabilities (good, bad per item).
_READ_PAIRS = """
import json, sys
items = [json.loads(line) for line in open(sys.argv[1] + "/items.jsonl")]
pairs = [(i["choice"]["prefix"], i["choice"]["good"], i["choice"]["bad"]) for i in items]
"""

END_TO_END = {
    "lm-eval HFLM.loglikelihood": _READ_PAIRS
    + """
from lm_eval.api.instance import Instance
from lm_eval.models.huggingface import HFLM
lm = HFLM(pretrained=sys.argv[2], batch_size=int(sys.argv[3]), device=sys.argv[4],
          dtype="float32")
requests = [Instance("loglikelihood", {}, (p, c), n)
            for n, (p, c) in enumerate((p, c) for p, g, b in pairs for c in (g, b))]
print(json.dumps([s for s, _ in lm.loglikelihood(requests, disable_tqdm=True)]))
""",
    "minicons conditional_score": _READ_PAIRS
    + """
from minicons import scorer
lm = scorer.IncrementalLMScorer(sys.argv[2], device=sys.argv[4])
prefixes = [p for p, g, b in pairs for _ in (g, b)]
continuations = [c for p, g, b in pairs for c in (g, b)]
size, sums = int(sys.argv[3]), []
for start in range(0, len(prefixes), size):
    sums += lm.conditional_score(prefixes[start:start + size], continuations[start:start + size],
                                 separator="", reduction=lambda x: x.sum(0).item())
print(json.dumps(sums))
""",
}


# Started by the benchmark, this small process starts the measured command and writes that
# command's own (peak RSS KiB, user + system CPU s) to the file named first.
_LAUNCHER = """
import json, os, subprocess, sys
child = subprocess.Popen(sys.argv[2:])
_, status, usage = os.wait4(child.pid, 0)
with open(sys.argv[1], "w") as report:
    json.dump([usage.ru_maxrss, usage.ru_utime + usage.ru_stime], report)
sys.exit(os.waitstatus_to_exitcode(status))
"""


def run_process(argv: list[str]) -> tuple[tuple[float, float], int, str]:
    """(wall, CPU) seconds, peak RSS bytes and stdout of one subprocess (which must succeed)."""
    with (
        tempfile.TemporaryFile("w+") as out,
        tempfile.TemporaryFile("w+") as err,
        tempfile.TemporaryDirectory() as tmp,
    ):
        report = Path(tmp) / "usage.json"
        start = time.perf_counter()
        process = subprocess.run(
            [sys.executable, "-c", _LAUNCHER, str(report), *argv], stdout=out, stderr=err
        )
        wall = time.perf_counter() - start
        out.seek(0)
        err.seek(0)
        if process.returncode:
            raise RuntimeError(f"{argv[:4]} failed ({process.returncode}): {err.read()[-500:]}")
        max_rss_kib, cpu = json.loads(report.read_text())
        return (wall, cpu), max_rss_kib * 1024, out.read()


def end_to_end_script(name: str, stimuli: Path, model: Path, batch: int, device: str):
    """argv of one end-to-end anchor run."""
    return [sys.executable, "-c", END_TO_END[name], str(stimuli), str(model), str(batch), device]


def tracktale_end_to_end(stimuli: Path, model: Path, out: Path, device: str) -> list[str]:
    """argv of ``tracktale models score`` on the set (a fresh store every time)."""
    tracktale = Path(sys.executable).with_name("tracktale")
    return [
        str(tracktale),
        "models",
        "score",
        "--stimuli",
        str(stimuli),
        "--model",
        str(model),
        "--out",
        str(out),
        "--device",
        device,
    ]


def stored_sums(out: Path, item_ids: list[str]) -> list[float]:
    """Good and bad log-probabilities of each item from a results store, in ``item_ids`` order."""
    from tracktale.models.store import read_results

    frame = read_results(out).set_index("item_id")
    return [
        float(frame.at[i, column]) for i in item_ids for column in ("logprob_good", "logprob_bad")
    ]


def parse_sums(stdout: str) -> list[float]:
    """The JSON line an end-to-end script printed last."""
    return json.loads(stdout.strip().splitlines()[-1])
