"""Models larger than one device: --max-memory, the arguments accelerate gets, and the same scores
from a model whose layers accelerate placed on several devices (here: the CPU and the disk)."""

from __future__ import annotations

import pytest
import torch

from tests.models.conftest import score_argv
from tracktale.app.cli import main
from tracktale.errors import TracktaleError
from tracktale.models import hf
from tracktale.models.devices import format_max_memory, parse_max_memory
from tracktale.models.hf import HFScorer
from tracktale.models.tasks import score_items


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("0=70GiB,1=70GiB", {0: "70GiB", 1: "70GiB"}),
        (" 0 = 70GiB , cpu=200GB", {0: "70GiB", "cpu": "200GB"}),
        ({0: "70GiB", "cpu": "1.5 GiB"}, {0: "70GiB", "cpu": "1.5GiB"}),
        (None, None),
    ],
)
def test_max_memory_budgets(spec, expected):
    assert parse_max_memory(spec) == expected


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("70GiB", "'70GiB' is not DEVICE=SIZE"),
        ("gpu0=70GiB", "device 'gpu0' is not a GPU index"),
        ("0=70", "size '70' for device 0 is not a size"),
        ("0=70gb", "size '70gb' for device 0 is not a size"),
        ("0=1TB", "size '1TB' for device 0 is not a size"),
        ({}, "no device budgets given"),
        (7, "expected DEVICE=SIZE pairs, got int"),
    ],
)
def test_bad_max_memory_is_one_line(spec, message):
    with pytest.raises(TracktaleError, match=message):
        parse_max_memory(spec)


def test_format_round_trips():
    budgets = parse_max_memory("0=70GiB,1=70GiB,cpu=100GiB")
    assert parse_max_memory(format_max_memory(budgets)) == budgets


class Stop(Exception):
    pass


@pytest.fixture
def loading_arguments(monkeypatch):
    """What from_pretrained is called with (the call stops there)."""
    from transformers import AutoModelForCausalLM

    seen = {}

    def capture(model_id, **kwargs):
        seen.update(kwargs)
        raise Stop

    monkeypatch.setattr(AutoModelForCausalLM, "from_pretrained", capture)
    return seen


def test_two_gpus_with_budgets_load_with_device_map_auto(
    model_dirs, monkeypatch, loading_arguments
):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 2)
    with pytest.raises(TracktaleError, match="cannot load"):
        HFScorer(str(model_dirs["pythia"]), max_memory="0=70GiB,1=70GiB", dtype="bfloat16")
    assert loading_arguments["device_map"] == "auto"
    assert loading_arguments["max_memory"] == {0: "70GiB", 1: "70GiB"}
    assert loading_arguments["dtype"] == torch.bfloat16
    assert "offload_folder" not in loading_arguments


def test_several_gpus_without_budgets_spread_the_model(model_dirs, monkeypatch, loading_arguments):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 4)
    with pytest.raises(TracktaleError):
        HFScorer(str(model_dirs["pythia"]))
    assert loading_arguments["device_map"] == "auto" and "max_memory" not in loading_arguments


def test_one_gpu_loads_onto_it(model_dirs, monkeypatch, loading_arguments):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
    with pytest.raises(TracktaleError):
        HFScorer(str(model_dirs["pythia"]))
    assert loading_arguments["device_map"] == "cuda:0"


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--max-memory", "0=70GiB"], "--max-memory: there is no GPU 0 here (0 CUDA devices)"),
        (["--max-memory", "cpu=1GiB", "--device", "cpu"], "use it with --device auto"),
        (["--max-memory", "0=lots"], "--max-memory: size 'lots' for device 0"),
    ],
)
def test_max_memory_errors_from_the_command_line(
    model_dirs, stimulus_dir, tmp_path, capsys, extra, message
):
    argv = score_argv(stimulus_dir, model_dirs["pythia"], tmp_path / "r", "--limit", "1")
    argv = [*argv[: argv.index("--device")], *extra]  # without --device cpu
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    _, err = capsys.readouterr()
    assert exit_info.value.code == 1 and err.count("\n") == 1 and message in err, err


def model_bytes(folder):
    return sum(path.stat().st_size for path in folder.glob("*.safetensors"))


@pytest.mark.parametrize(
    ("name", "share", "placement"),
    [
        # The first layers stay on the CPU, the rest is offloaded to disk: accelerate's hooks on
        # each layer move its weights in when it runs (as they move activations across GPUs).
        ("pythia", 0.8, {"cpu", "disk"}),
        ("olmo2", 0.8, {"cpu", "disk"}),
        # Nothing fits: the whole model is offloaded behind one hook on the top module.
        ("pythia", 0.3, {"disk"}),
    ],
)
def test_a_model_placed_by_accelerate_scores_the_same(
    name, share, placement, model_dirs, stimulus_set, tmp_path
):
    folder = model_dirs[name]
    plain = HFScorer(str(folder), device="cpu", batch_size=4)
    budget = {"cpu": f"{model_bytes(folder) * share / 1000:.0f}KB"}
    split = HFScorer(
        str(folder), max_memory=budget, offload_folder=str(tmp_path / "offload"), batch_size=4
    )
    assert set(split.model.hf_device_map.values()) == placement, split.model.hf_device_map
    assert split.info.device == ("auto:cpu,disk" if len(placement) == 2 else "disk")
    assert split.info.details["device_map"] == "auto"
    assert split.info.details["max_memory"] == f"cpu={budget['cpu']}"
    items = stimulus_set.items[:6]
    for task in ("implicit", "sequence", "explicit"):
        expected = score_items(plain, items, task, stimulus_sha256="s")
        actual = score_items(split, items, task, stimulus_sha256="s")
        for want, got in zip(expected, actual, strict=True):
            for key, value in want.scores.items():
                if isinstance(value, float):
                    assert got.scores[key] == pytest.approx(value, abs=1e-4), (task, key)
                elif key != "lm_head_shortcut":
                    assert got.scores[key] == value, (task, key)


def test_inputs_go_to_the_input_embedding_device(model_dirs):
    scorer = HFScorer(str(model_dirs["pythia"]), device="cpu")
    assert scorer.forward.device == scorer.model.get_input_embeddings().weight.device
    assert hf._device_map("auto") == "cpu"  # no GPU here


def test_an_offloaded_embedding_takes_its_inputs_where_accelerate_runs_it(model_dirs):
    from types import SimpleNamespace

    from tracktale.models.hf_forward import input_device

    scorer = HFScorer(str(model_dirs["pythia"]), device="cpu")
    embedding = scorer.model.get_input_embeddings()
    embedding.to("meta")
    embedding._hf_hook = SimpleNamespace(execution_device=1)  # as accelerate marks GPU 1
    assert input_device(scorer.model) == torch.device("cuda", 1)
    del embedding._hf_hook
    scorer.model._hf_hook = SimpleNamespace(execution_device="cpu")
    assert input_device(scorer.model) == torch.device("cpu")
