"""Offline stand-ins for hub models: random-init models of the real architectures.

For tests, benchmarks and trying the pipeline without network. A byte-level BPE tokenizer (as
GPT-NeoX's and OLMo 2's) is trained with the ``tokenizers`` library on stimulus text; a model of
the real class (``GPTNeoXForCausalLM`` for Pythia, ``Olmo2ForCausalLM`` for OLMo 2) is built
with random weights; both are saved with ``save_pretrained`` and load through
``from_pretrained`` exactly as a hub download does. :func:`add_to_hub_cache` places saved models
into a Hugging Face cache folder as revisions (``refs/<revision>`` -> ``snapshots/<sha>``), so
``from_pretrained("org/name", revision="step1000")`` with ``HF_HUB_OFFLINE=1`` takes the real hub
resolution path. Random weights make accuracy meaningless but equality checks and timings exact.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

SPECIAL_TOKENS = ("<|endoftext|>", "<|padding|>")

OLMO2_CHAT_TEMPLATE = (
    "{{ bos_token }}{% for message in messages %}"
    "{% if message['role'] == 'system' %}{{ '<|system|>\\n' + message['content'] + '\\n' }}"
    "{% elif message['role'] == 'user' %}{{ '<|user|>\\n' + message['content'] + '\\n' }}"
    "{% elif message['role'] == 'assistant' %}"
    "{{ '<|assistant|>\\n' + message['content'] + eos_token + '\\n' }}{% endif %}"
    "{% if loop.last and add_generation_prompt %}{{ '<|assistant|>\\n' }}{% endif %}"
    "{% endfor %}"
)
"""The chat template of OLMo 2 Instruct (user/assistant/system turns, BOS first)."""

SHAPES: dict[str, dict[str, int]] = {
    "tiny": {"hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 4,
             "intermediate_size": 64},
    "pythia-160m": {"hidden_size": 768, "num_hidden_layers": 12, "num_attention_heads": 12,
                    "intermediate_size": 3072, "vocab_size": 50304},
    "pythia-1b": {"hidden_size": 2048, "num_hidden_layers": 16, "num_attention_heads": 8,
                  "intermediate_size": 8192, "vocab_size": 50304},
}  # fmt: skip
"""Model shapes: ``tiny`` for tests, and the shapes of real Pythia sizes for benchmarks."""


def train_bpe(texts: Iterable[str], vocab_size: int = 600, *, merge_across_words: bool = False):
    """Train a byte-level BPE on ``texts`` (GPT-NeoX style: ``<|endoftext|>`` is id 0).

    Args:
        texts: Training text.
        vocab_size: Target vocabulary size.
        merge_across_words: Train without splitting text into words first, so merges such as
            ``".Ġ"`` cross word boundaries (a tokenizer that merges across a prefix/continuation
            boundary, for tests).

    Returns:
        The trained ``tokenizers.Tokenizer``.
    """
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers

    tokenizer = Tokenizer(models.BPE())
    tokenizer.normalizer = normalizers.NFC()
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(
        add_prefix_space=False, use_regex=not merge_across_words
    )
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=list(SPECIAL_TOKENS),
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tokenizer.train_from_iterator(list(texts), trainer)
    return tokenizer


def make_tokenizer(trained: Any, *, kind: str = "pythia", add_bos: bool = False) -> Any:
    """A transformers tokenizer over a BPE from :func:`train_bpe`.

    Args:
        trained: The trained ``tokenizers.Tokenizer``.
        kind: ``pythia`` (``GPTNeoXTokenizer``, as Pythia's), ``olmo2-instruct``
            (``GPT2Tokenizer`` with OLMo 2 Instruct's chat template and a ``<|pad|>`` token) or
            ``generic`` (the trained pipeline as is, e.g. one trained with
            ``merge_across_words``).
        add_bos: Make a ``generic`` tokenizer add its BOS token by itself (as Llama's does).
            Only ``generic`` keeps this through ``save_pretrained``: transformers 5 rebuilds
            ``GPTNeoXTokenizer``'s pipeline on loading and drops the setting.
    """
    from tokenizers import processors
    from transformers import GPT2Tokenizer, GPTNeoXTokenizer, PreTrainedTokenizerFast

    if add_bos and kind != "generic":
        raise ValueError("add_bos survives save_pretrained only for kind='generic'")
    model = json.loads(trained.to_str())["model"]
    vocab, merges = dict(model["vocab"]), [tuple(pair) for pair in model["merges"]]
    if kind == "pythia":
        # The tokenizers' stubs say list[str]; they take (left, right) pairs as trained.
        return GPTNeoXTokenizer(vocab=vocab, merges=merges)  # type: ignore[arg-type]
    if kind == "olmo2-instruct":
        vocab.setdefault("<|pad|>", len(vocab))
        tokenizer = GPT2Tokenizer(
            vocab=vocab,
            merges=merges,  # type: ignore[arg-type]
            bos_token="<|endoftext|>",
            eos_token="<|endoftext|>",
            unk_token="<|endoftext|>",
            pad_token="<|pad|>",
            add_bos_token=add_bos,
        )
        tokenizer.chat_template = OLMO2_CHAT_TEMPLATE
        return tokenizer
    if kind == "generic":
        if add_bos:
            trained = trained.from_str(trained.to_str())
            trained.post_processor = processors.TemplateProcessing(
                single="<|endoftext|> $A", special_tokens=[("<|endoftext|>", 0)]
            )
        return PreTrainedTokenizerFast(
            tokenizer_object=trained,
            bos_token="<|endoftext|>",
            eos_token="<|endoftext|>",
            pad_token="<|padding|>",
        )
    raise ValueError(f"unknown tokenizer kind {kind!r}")


def make_model(architecture: str, tokenizer: Any, shape: str = "tiny", seed: int = 0) -> Any:
    """A random-init causal LM of a real architecture, sized for ``tokenizer``.

    Args:
        architecture: ``gpt_neox`` (Pythia), ``olmo2`` (OLMo 2) or ``llama`` (Llama, as the
            default model SmolLM2: grouped-query attention, tied input and output embeddings).
        tokenizer: Its tokenizer (the vocabulary is padded up to a multiple of 64, as Pythia's).
        shape: A name from :data:`SHAPES`.
        seed: Seed of the random weights.
    """
    import torch
    from transformers import (
        GPTNeoXConfig,
        GPTNeoXForCausalLM,
        LlamaConfig,
        LlamaForCausalLM,
        Olmo2Config,
        Olmo2ForCausalLM,
    )

    dims: dict[str, Any] = dict(SHAPES[shape])
    vocab_size = dims.pop("vocab_size", None) or -(-len(tokenizer) // 64) * 64
    special: dict[str, Any] = {
        "vocab_size": vocab_size,
        "bos_token_id": tokenizer.bos_token_id,
        "eos_token_id": tokenizer.eos_token_id,
        "pad_token_id": tokenizer.pad_token_id,
        "max_position_embeddings": 2048,
    }
    torch.manual_seed(seed)
    if architecture == "gpt_neox":
        # Pythia rotates a quarter of each head (transformers 5 spells it in rope_parameters).
        rope = {"rope_theta": 10000.0, "partial_rotary_factor": 0.25, "rope_type": "default"}
        neox = GPTNeoXConfig(**dims, **special, rope_parameters=rope, use_parallel_residual=True)
        return GPTNeoXForCausalLM(neox).eval()
    if architecture == "olmo2":
        olmo = Olmo2Config(**dims, **special, num_key_value_heads=dims["num_attention_heads"])
        return Olmo2ForCausalLM(olmo).eval()
    if architecture == "llama":
        heads = dims["num_attention_heads"]
        llama = LlamaConfig(
            **dims, **special, num_key_value_heads=max(1, heads // 2), tie_word_embeddings=True
        )
        return LlamaForCausalLM(llama).eval()
    raise ValueError(f"unknown architecture {architecture!r}")


def save_model(folder: str | os.PathLike[str], model: Any, tokenizer: Any) -> Path:
    """Save a model and its tokenizer as a hub snapshot would hold them."""
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()
    target = Path(folder)
    model.save_pretrained(target)
    tokenizer.save_pretrained(target)
    return target


def add_to_hub_cache(
    cache: str | os.PathLike[str], repo_id: str, revisions: Mapping[str, str | os.PathLike[str]]
) -> dict[str, str]:
    """Place saved model folders into a Hugging Face hub cache as revisions of ``repo_id``.

    Args:
        cache: The cache folder (what ``HF_HUB_CACHE`` points to).
        repo_id: ``org/name``.
        revisions: Revision name (``main``, ``step1000``) -> a folder from :func:`save_model`.

    Returns:
        Revision name -> the commit sha it was given.
    """
    repo = Path(cache) / ("models--" + repo_id.replace("/", "--"))
    (repo / "refs").mkdir(parents=True, exist_ok=True)
    shas = {}
    for revision, folder in revisions.items():
        sha = hashlib.sha1(f"{repo_id}@{revision}".encode()).hexdigest()
        snapshot = repo / "snapshots" / sha
        if not snapshot.exists():
            shutil.copytree(folder, snapshot)
        (repo / "refs" / revision).write_text(sha)
        shas[revision] = sha
    return shas
