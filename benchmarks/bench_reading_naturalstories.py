"""``tracktale analysis reading`` on the Natural Stories corpus, end to end, timed.

Runs the commands of docs/tutorials/reading-times.md section 6 in a fresh OUT folder: convert a
local copy of the corpus (``scripts/naturalstories.py``), import the stories, score them with a
model (the sequence task's word surprisal), then the analysis with lme4 (where R has it) and
with statsmodels. Prints each step's wall time, the machine's load and each analysis's ΔLL line.
The corpus is CC BY-NC-SA 4.0: keep OUT outside the repository.

Run: .venv/bin/python benchmarks/bench_reading_naturalstories.py NATURALSTORIES OUT
[--by-word-means] [--model default] [--permutations 999]
(``--by-word-means``: one row per word, the geometric mean over readers, held out by items;
without it, every reader's RTs, held out by participants.) Asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.1f} / {five:.1f} / {fifteen:.1f} on {os.cpu_count()} cores"


def _step(label: str, command: list[str]) -> str:
    """Run one command, print its wall time, return its standard output."""
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - start
    if done.returncode:
        sys.exit(f"{label} failed ({done.returncode}): {done.stderr.strip()[-2000:]}")
    print(f"{label:<28}{seconds:8.1f} s   ({_load()})", flush=True)
    return done.stdout


def main() -> None:
    """Convert, import, score and analyse; print times and results."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpus", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--by-word-means", action="store_true")
    parser.add_argument("--model", default="default")
    parser.add_argument("--permutations", type=int, default=999)
    args = parser.parse_args()
    out = args.out.resolve()
    tracktale = [sys.executable, "-m", "tracktale"]
    convert = [sys.executable, str(REPO / "scripts" / "naturalstories.py"), str(args.corpus)]
    convert += [str(out / "ns")] + (["--by-word-means"] if args.by_word_means else [])
    print(_step("convert", convert).strip())
    stories = ["--stimuli", str(out / "stories")]
    _step("import", [*tracktale, "stimuli", "import", str(out / "ns" / "stories.csv"),
                     "--design", str(out / "ns" / "design.yaml"), "--out", str(out / "stories"),
                     "--overwrite"])  # fmt: skip
    _step("score", [*tracktale, "models", "score", *stories, "--model", args.model,
                    "--task", "sequence", "--out", str(out / "results")])  # fmt: skip
    fold_by = "items" if args.by_word_means else "participants"
    for engine in ("auto", "statsmodels"):
        result = _step(f"analysis ({engine})", [
            *tracktale, "analysis", "reading", "--times", str(out / "ns" / "reading_times.csv"),
            "--models", str(out / "results"), *stories,
            "--fold-by", fold_by, "--permutations", str(args.permutations), "--engine", engine,
            "--out", str(out / f"reading-{engine}"),
        ])  # fmt: skip
        print("  " + result.strip().splitlines()[0])


if __name__ == "__main__":
    main()
