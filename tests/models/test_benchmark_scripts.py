"""The GPU benchmark script runs: on a tiny model on the CPU, so it is ready when a GPU is lent.

CI has no GPU, and a benchmark that is only ever run on one would rot unnoticed between loans.
Its figures are not checked here (speed is for ``benchmarks/``, not tests); that it runs every
case and prints each line is.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from tests.processes import run_checked

pytestmark = pytest.mark.slow

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


def test_the_protocol_benchmark_runs_every_case_on_a_tiny_model(tmp_path):
    environment = {**os.environ, "HF_HOME": str(tmp_path / "hf")}
    result = run_checked(
        [
            sys.executable,
            str(BENCHMARKS / "bench_protocol.py"),
            *("--shapes", "tiny", "--items", "6", "--device", "cpu", "--dtype", "float32"),
        ],
        cwd=BENCHMARKS,
        env=environment,
    )
    out = result.stdout
    assert "tiny:" in out and "tree masks True" in out
    assert "implicit  6 pairs" in out and "explicit  6 prompts" in out
    assert "sweep step (load step1000 from local disk, both tasks, write the store): 12 rows" in out
    assert "peak RSS" in out
