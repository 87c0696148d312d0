"""Fixtures of the models stage: a small stimulus set, tiny random-init models, a fake hub."""

from __future__ import annotations

import functools

import pytest

from tests.conftest import _generated, require
from tracktale.stimulus_set import write_stimulus_set

REVISION_SEEDS = {"main": 0, "step0": 1, "step1000": 2}
HUB_ID = "tracktale-test/tiny-pythia"


@pytest.fixture(scope="session")
def stimulus_set():
    """Every cell of every template once (33 items)."""
    return _generated("narrative", "model", 1, (("per_condition", 1),))


@pytest.fixture(scope="session")
def stimulus_dir(stimulus_set, tmp_path_factory):
    return write_stimulus_set(stimulus_set, tmp_path_factory.mktemp("stimuli") / "set")


@pytest.fixture(scope="session")
def corpus():
    training = _generated("narrative", "model", 7, (("per_condition", 2),))
    texts = []
    for item in training:
        texts += [item.choice.prompt_good, item.choice.prompt_bad, item.prompt]
    return texts


@functools.cache
def _trained(texts: tuple[str, ...], merge_across_words: bool):
    from tracktale.models.testing import train_bpe

    return train_bpe(texts, 600, merge_across_words=merge_across_words)


MODELS = {
    # name: (architecture, tokenizer kind, add_bos, merge_across_words)
    "pythia": ("gpt_neox", "pythia", False, False),
    "olmo2": ("olmo2", "pythia", False, False),
    "olmo2-instruct": ("olmo2", "olmo2-instruct", False, False),
    "bos": ("gpt_neox", "generic", True, False),
    "merging": ("gpt_neox", "generic", False, True),
    # The default model's architecture (SmolLM2): grouped-query attention, tied embeddings.
    "llama": ("llama", "olmo2-instruct", False, False),
}


@pytest.fixture(scope="session")
def model_dirs(corpus, tmp_path_factory):
    """Saved tiny models, name -> folder (see MODELS)."""
    from tracktale.models.testing import make_model, make_tokenizer, save_model

    root = tmp_path_factory.mktemp("models")
    folders = {}
    for name, (architecture, kind, add_bos, merging) in MODELS.items():
        tokenizer = make_tokenizer(_trained(tuple(corpus), merging), kind=kind, add_bos=add_bos)
        model = make_model(architecture, tokenizer)
        folders[name] = save_model(root / name, model, tokenizer)
    return folders


@pytest.fixture(scope="session")
def hub_cache(corpus, model_dirs, tmp_path_factory):
    """A Hugging Face cache holding HUB_ID at revisions main, step0 and step1000."""
    from tracktale.models.testing import add_to_hub_cache, make_model, make_tokenizer, save_model

    root = tmp_path_factory.mktemp("hub")
    tokenizer = make_tokenizer(_trained(tuple(corpus), False), kind="pythia")
    folders = {
        revision: save_model(
            root / "saved" / revision, make_model("gpt_neox", tokenizer, seed=seed), tokenizer
        )
        for revision, seed in REVISION_SEEDS.items()
    }
    cache = root / "cache"
    shas = add_to_hub_cache(cache, HUB_ID, folders)
    return cache, shas


@pytest.fixture
def offline_hub(hub_cache, monkeypatch):
    """The fake hub cache, offline, for this process and its subprocesses."""
    from huggingface_hub import constants

    cache, shas = hub_cache
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(cache))
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    monkeypatch.setenv("HF_HUB_CACHE", str(cache))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    return cache, shas


def shard_keys(folder):
    """Every key in every shard, duplicates included (what is physically stored)."""
    import pyarrow.parquet as pq

    keys = []
    for shard in sorted(folder.glob("part-*.parquet")):
        table = pq.read_table(shard, columns=["model_id", "revision", "item_id", "task"])
        keys += list(
            zip(*(table.column(name).to_pylist() for name in table.column_names), strict=True)
        )
    return keys


def score_argv(stimuli, model, out, *extra):
    """``tracktale models score`` arguments, on the CPU (later options override earlier ones)."""
    command = ["models", "score", "--stimuli", str(stimuli), "--model", str(model)]
    return [*command, "--out", str(out), "--device", "cpu", *extra]


@pytest.fixture(scope="session")
def converted_default_model(tmp_path_factory):
    """The default model's GGUF dequantized once per session by its own loader.

    Returns the data folder (its ``models/`` is the conversion cache, as under
    ``$TRACKTALE_DATA``) and the converted float32 safetensors folder. Three test modules use
    the real model; one conversion for all of them saves CI minutes.
    """
    from tracktale.errors import TracktaleError
    from tracktale.models import gguf

    try:
        path = gguf.default_gguf_path()
    except TracktaleError as error:
        require(False, str(error))
    data = tmp_path_factory.mktemp("real-model-data")
    source = gguf.GGUFSource(path, f"{gguf.DEFAULT_PACKAGE}=={gguf.DEFAULT_VERSION}")
    return data, gguf.converted_folder(source, root=data / "models").folder
