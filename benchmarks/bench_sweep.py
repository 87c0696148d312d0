"""Sweep planning on a big store, and the OpenAI-compatible client against a slow local server.

1. ``--status`` (and every sweep run, which plans first) of the users' largest sweep: 8 Pythia
   sizes x 154 checkpoints (1,232 jobs) x implicit + explicit on the 1,650-item narrative model
   protocol, half done: a store of 2.0 million rows in 616 shards (one per finished job, as a
   sweep leaves it). Target: well under a minute on 2 cores.
2. The chat client: requests/s against a local chat-completions server that takes 50 ms per
   answer, one at a time and with ``--concurrency 8``, then the same requests again from the
   cache (a re-run costs nothing).

Run: ``python benchmarks/bench_sweep.py``.
"""

from __future__ import annotations

import http.server
import json
import tempfile
import threading
import time
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import yaml

SIZES = ("14m", "31m", "70m", "160m", "410m", "1b", "1.4b", "2.8b")


def build_store(folder: Path, items: list[str], revisions: list[str]) -> int:
    rows = 0
    written_at = time.time_ns()
    for size in SIZES:
        for revision in revisions[: len(revisions) // 2]:
            frame = pd.DataFrame(
                {
                    "model_id": f"EleutherAI/pythia-{size}",
                    "revision": revision,
                    "item_id": items * 2,
                    "task": ["implicit"] * len(items) + ["explicit"] * len(items),
                    "dtype": "float32",
                    "bos_requested": "auto",
                    "prompt_format_requested": [None] * len(items) + ["auto"] * len(items),
                    "max_new_tokens": [None] * len(items) + [8] * len(items),
                    "calibrated": [False] * len(items) + [None] * len(items),
                    "correct": True,
                    "written_at": written_at,
                }
            )
            name = f"part-{size}-{revision}.parquet"
            pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), folder / name)
            rows += len(frame)
    return rows


def bench_status(root: Path) -> None:
    from tracktale.models.plan import load_plan
    from tracktale.models.revisions import PRESETS
    from tracktale.models.sweep import sweep_status
    from tracktale.stimuli.registry import get_paradigm
    from tracktale.stimulus_set import write_stimulus_set

    stimulus_set = get_paradigm("narrative").generate_set("model", 1, {})
    write_stimulus_set(stimulus_set, root / "set")
    items = [item.item_id for item in stimulus_set]
    (root / "results").mkdir()
    started = time.perf_counter()
    rows = build_store(root / "results", items, list(PRESETS["pythia"]))
    print(
        f"store: {rows:,} rows in {len(SIZES) * 77} shards, built in "
        f"{time.perf_counter() - started:.1f} s"
    )
    plan = {
        "store": "results",
        "stimuli": ["set"],
        "tasks": ["implicit", "explicit"],
        "models": [{"id": f"EleutherAI/pythia-{size}", "preset": "pythia"} for size in SIZES],
    }
    (root / "sweep.yaml").write_text(yaml.safe_dump(plan))
    for attempt in range(2):
        started = time.perf_counter()
        statuses = sweep_status(load_plan(root / "sweep.yaml"))
        elapsed = time.perf_counter() - started
        done = sum(status.state == "done" for status in statuses)
        print(f"status of {len(statuses):,} jobs ({done} done): {elapsed:.1f} s, run {attempt + 1}")


class SlowChat(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        time.sleep(0.05)
        answer = {
            "model": body["model"],
            "choices": [{"message": {"content": "box"}, "finish_reason": "stop", "logprobs": None}],
        }
        data = json.dumps(answer).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def bench_chat(root: Path) -> None:
    from tracktale.models.endpoint import EndpointClient

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), SlowChat)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    n = 160
    for concurrency in (1, 8):
        client = EndpointClient(url, cache_dir=root / f"cache-{concurrency}")
        bodies = [
            {"model": "m", "messages": [{"role": "user", "content": f"item {i}"}]} for i in range(n)
        ]
        started = time.perf_counter()
        client.complete_many(bodies, concurrency)
        sent = time.perf_counter() - started
        started = time.perf_counter()
        client.complete_many(bodies, concurrency)
        cached = time.perf_counter() - started
        print(
            f"chat client, concurrency {concurrency}: {n / sent:.0f} requests/s against a 50 ms "
            f"server; re-run from the cache: {n / cached:,.0f} requests/s, {client.sent} sent"
        )
    server.shutdown()


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        bench_status(root)
        bench_chat(root)


if __name__ == "__main__":
    main()
