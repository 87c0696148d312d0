"""Every error the issue lists is one clear line: unknown model or revision, no network, out of
memory (with a back-off first), a tokenizer without the chat template an instruct run needs."""

from __future__ import annotations

import http.server
import socket
import threading

import pytest
import torch

from tests.models.conftest import HUB_ID
from tests.models.conftest import score_argv as shared_score_argv
from tracktale.app.cli import main
from tracktale.errors import TracktaleError
from tracktale.models import hf_forward
from tracktale.models.hf import HFScorer
from tracktale.models.hub import resolve_model
from tracktale.models.tasks import TaskOptions, score_items
from tracktale.scorer import ChoiceRequest


def one_line(argv, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    _, err = capsys.readouterr()
    assert exit_info.value.code == 1
    assert err.count("\n") == 1 and err.startswith("tracktale: error: "), err
    return err


def score_argv(stimulus_dir, tmp_path, model, *extra):
    return shared_score_argv(stimulus_dir, model, tmp_path / "results", "--limit", "2", *extra)


def test_unknown_model_offline(offline_hub, stimulus_dir, tmp_path, capsys):
    err = one_line(score_argv(stimulus_dir, tmp_path, "nobody/no-such-model"), capsys)
    assert "unknown model 'nobody/no-such-model'" in err and "HF_HUB_OFFLINE" in err
    err = one_line(score_argv(stimulus_dir, tmp_path, "./no/such/folder"), capsys)
    assert "unknown model './no/such/folder': no such folder" in err


def test_unknown_revision_offline(offline_hub, stimulus_dir, tmp_path, capsys):
    err = one_line(score_argv(stimulus_dir, tmp_path, HUB_ID, "--revisions", "step0,step7"), capsys)
    assert f"model '{HUB_ID}' has no revision 'step7' in the local cache" in err
    assert "list-revisions" in err


def test_a_revision_of_a_local_folder_is_refused(model_dirs, stimulus_dir, tmp_path, capsys):
    err = one_line(
        score_argv(stimulus_dir, tmp_path, str(model_dirs["pythia"]), "--revision", "step1"), capsys
    )
    assert "is a local folder; it has no revision 'step1'" in err


def closed_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_no_network_to_the_hub(hub_cache, monkeypatch, stimulus_dir, tmp_path, capsys):
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(hub_cache[0]))
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setattr(constants, "ENDPOINT", f"http://127.0.0.1:{closed_port()}")
    err = one_line(
        score_argv(stimulus_dir, tmp_path, "EleutherAI/pythia-70m", "--revision", "step1000"),
        capsys,
    )
    assert (
        "no network: cannot reach the Hugging Face hub" in err and "not in the local cache" in err
    )
    # A revision that is cached still loads without the hub.
    assert resolve_model(HUB_ID, "step1000").resolved_sha == hub_cache[1]["step1000"]


class FakeHub(http.server.BaseHTTPRequestHandler):
    """Answers like the hub: 404 with X-Error-Code for unknown repositories and revisions."""

    def do_GET(self):  # noqa: N802
        code = (
            "RevisionNotFound" if self.path.startswith(f"/api/models/{HUB_ID}/") else "RepoNotFound"
        )
        self.send_response(404)
        self.send_header("X-Error-Code", code)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(b'{"error": "not found"}')

    def log_message(self, *args):
        pass


@pytest.fixture
def fake_hub(monkeypatch, tmp_path):
    from huggingface_hub import constants

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), FakeHub)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    monkeypatch.setattr(constants, "ENDPOINT", f"http://127.0.0.1:{server.server_address[1]}")
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "empty-cache"))
    yield
    server.shutdown()


def test_the_hub_says_unknown_model_or_revision(fake_hub):
    with pytest.raises(TracktaleError, match="the Hugging Face hub has no such model"):
        resolve_model("nobody/nothing")
    with pytest.raises(
        TracktaleError, match=f"'{HUB_ID}' has no revision 'step7' on the Hugging Face hub"
    ):
        resolve_model(HUB_ID, "step7")


def test_out_of_memory_backs_off_the_batch_size_and_says_so(model_dirs, stimulus_set, monkeypatch):
    original = hf_forward.score_rows

    def small_memory(forward, rows, paths):
        if len(rows) > 2:
            raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")
        return original(forward, rows, paths)

    notices = []
    scorer = HFScorer(str(model_dirs["pythia"]), batch_size=8, device="cpu", notify=notices.append)
    scorer.row_tokens = 1  # a row per item: nine rows
    requests = [
        ChoiceRequest(i.choice.prefix, (i.choice.good, i.choice.bad))
        for i in stimulus_set.items[:9]
    ]
    expected = scorer.conditional_score(requests)
    monkeypatch.setattr(hf_forward, "score_rows", small_memory)
    backed_off = scorer.conditional_score(requests)
    for got, want in zip(backed_off, expected, strict=True):
        for a, b in zip(got, want, strict=True):
            assert a.ids == b.ids and a.logprobs == pytest.approx(b.logprobs, abs=1e-5)
    assert scorer.batch_size == 2
    assert notices == [
        "out of memory on cpu at batch size 8; continuing with batch size 4",
        "out of memory on cpu at batch size 4; continuing with batch size 2",
    ]


def test_out_of_memory_at_batch_size_one_is_one_line(
    model_dirs, stimulus_dir, tmp_path, monkeypatch, capsys
):
    def no_memory(*args, **kwargs):
        raise RuntimeError(
            "[enforce fail at alloc_cpu.cpp:117] DefaultCPUAllocator: can't allocate memory"
        )

    monkeypatch.setattr(hf_forward, "score_rows", no_memory)
    err = one_line(
        score_argv(stimulus_dir, tmp_path, str(model_dirs["pythia"]), "--batch-size", "1"), capsys
    )
    assert "out of memory on cpu at batch size 1" in err


def test_other_runtime_errors_are_not_taken_for_out_of_memory(
    model_dirs, stimulus_set, monkeypatch
):
    def broken(*args, **kwargs):
        raise RuntimeError("shape mismatch")

    monkeypatch.setattr(hf_forward, "score_rows", broken)
    scorer = HFScorer(str(model_dirs["pythia"]), batch_size=4, device="cpu")
    with pytest.raises(RuntimeError, match="shape mismatch"):
        scorer.conditional_score([ChoiceRequest("A.", (" B",))])
    assert scorer.batch_size == 4


def test_an_instruct_run_needs_a_chat_template(model_dirs, stimulus_dir, tmp_path, capsys):
    err = one_line(
        score_argv(
            stimulus_dir,
            tmp_path,
            str(model_dirs["pythia"]),
            "--task",
            "explicit",
            "--prompt-format",
            "chat",
        ),
        capsys,
    )
    assert "has no chat template" in err and "--prompt-format plain" in err


def test_bad_settings_are_one_line(model_dirs, stimulus_dir, tmp_path, capsys):
    err = one_line(
        score_argv(stimulus_dir, tmp_path, str(model_dirs["pythia"]), "--roles", "mains"), capsys
    )
    assert "--roles: 'mains'" in err
    (tmp_path / "file").write_text("x")
    err = one_line(score_argv(stimulus_dir, tmp_path, "m", "--out", tmp_path / "file"), capsys)
    assert "is a file" in err
    if not torch.cuda.is_available():
        pythia = str(model_dirs["pythia"])
        err = one_line(score_argv(stimulus_dir, tmp_path, pythia, "--device", "cuda"), capsys)
        assert "no CUDA device" in err


def test_chat_prompts_need_messages(model_dirs, stimulus_set):
    from dataclasses import replace

    scorer = HFScorer(str(model_dirs["olmo2-instruct"]), device="cpu")
    item = replace(stimulus_set.items[0], messages=None)
    with pytest.raises(TracktaleError, match=f"item {item.item_id} has no chat messages"):
        score_items(
            scorer,
            [item],
            "explicit",
            stimulus_sha256="x",
            options=TaskOptions(prompt_format="chat"),
        )
