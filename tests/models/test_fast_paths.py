"""Every speed path gives the naive answer: token trees and their fallbacks, the eager mask,
static and growing caches, shared story openings, half precision; and the GPU path's pieces
(batch size from free memory, pinned memory only with CUDA) checked on the CPU."""

from __future__ import annotations

import pytest
import torch

from tests.models.test_equivalence import (
    TOLERANCE,
    choice_requests,
    naive_logprobs,
    unbatched_generate,
)
from tracktale.models import hf_forward, hf_generate, memory, packing
from tracktale.models.hf import HFScorer
from tracktale.scorer import GenerationRequest, SequenceRequest


def worst_difference(scorer, requests) -> float:
    worst = 0.0
    for request, scored in zip(requests, scorer.conditional_score(requests), strict=True):
        encoded = scorer.encoder.choice(request.prefix, request.continuations)
        for continuation, tokens in zip(encoded.continuations, scored, strict=True):
            reference = naive_logprobs(scorer.model, encoded.prefix, continuation)
            assert len(tokens.logprobs) == len(reference)
            worst = max(
                worst, *(abs(a - b) for a, b in zip(tokens.logprobs, reference, strict=True))
            )
    return worst


def generate_loop(scorer, prompts, budget):
    return [
        unbatched_generate(scorer, scorer.encoder.prompt(prompt, None, False), budget)
        for prompt in prompts
    ]


@pytest.fixture(scope="module")
def pythia(model_dirs):
    return HFScorer(str(model_dirs["pythia"]), batch_size=4, device="cpu")


def test_sdpa_is_chosen_and_takes_tree_masks(pythia):
    assert pythia.info.details["attn_implementation"] == "sdpa"
    assert pythia.forward.mask_format == "bool" and pythia.forward.tree_masks


def test_items_packed_many_to_a_row_score_as_alone(pythia, stimulus_set):
    requests = choice_requests(stimulus_set.items[:12])
    pythia.row_tokens = 4096  # every item in one tree: the openings they share run once
    try:
        assert worst_difference(pythia, requests) < TOLERANCE
    finally:
        pythia.row_tokens = 320


@pytest.mark.parametrize("fallback", ["no tree masks", "window"])
def test_without_tree_masks_each_sequence_runs_alone(fallback, model_dirs, stimulus_set):
    scorer = HFScorer(str(model_dirs["olmo2"]), batch_size=3, device="cpu")
    if fallback == "no tree masks":
        scorer.forward.tree_masks = False
    else:
        scorer.forward.sliding_window = 8  # sequences longer than a sliding window
    assert worst_difference(scorer, choice_requests(stimulus_set.items[:6])) < TOLERANCE
    texts = [SequenceRequest(item.context) for item in stimulus_set.items[:4]]
    for text, scored in zip(texts, scorer.sequence_score(texts), strict=True):
        ids = scorer.tokenizer(text.text, add_special_tokens=False)["input_ids"]
        assert scored.logprobs == pytest.approx(
            naive_logprobs(scorer.model, ids[:1], ids[1:]), abs=TOLERANCE
        )
    prompts = [item.prompt for item in stimulus_set.items[:5]]
    outputs = scorer.generate([GenerationRequest(p, max_new_tokens=4) for p in prompts])
    assert outputs == generate_loop(scorer, prompts, 4)


def test_the_eager_attention_takes_an_additive_tree_mask(model_dirs, stimulus_set):
    scorer = HFScorer(str(model_dirs["pythia"]), batch_size=3, device="cpu")
    scorer.model.set_attn_implementation("eager")
    scorer.forward = hf_forward.ForwardModel(scorer.model, scorer.forward.pad_id)
    assert scorer.forward.mask_format == "float" and scorer.forward.tree_masks
    assert worst_difference(scorer, choice_requests(stimulus_set.items[:6])) < TOLERANCE


def test_a_mask_the_model_ignores_fails_the_probe(pythia, monkeypatch):
    monkeypatch.setattr(hf_forward, "_mask_for", lambda forward, sees: torch.ones_like(sees))
    assert not hf_forward.tree_attention_works(pythia.forward)


def test_an_attention_without_custom_masks_is_not_probed(pythia, monkeypatch):
    monkeypatch.setattr(pythia.model.config, "_attn_implementation", "flash_attention_2")
    forward = hf_forward.ForwardModel(pythia.model, pythia.forward.pad_id)
    assert forward.mask_format is None and not forward.tree_masks


@pytest.mark.parametrize("static", [True, False])
def test_prompts_that_share_a_story_opening_decode_as_generate(static, pythia, monkeypatch):
    if not static:
        monkeypatch.setattr(type(pythia.model), "_can_compile_fullgraph", False)
    instruction = "Answer with one word.\n\n"
    opening = "Ann put the key in the box. Then she left the room. "
    prompts = [
        instruction + opening + "Bob moved the key to the bag.\nQ: The key is in the",
        instruction + opening + "Q: The key is in the",
        instruction + "Bob put the coin in the cup.\nQ: The coin is in the",
        instruction + opening + "Bob moved the key to the bag. He sat down.\nQ: The key is in the",
    ]
    requests = [GenerationRequest(p, max_new_tokens=6) for p in prompts]
    assert pythia.generate(requests) == generate_loop(pythia, prompts, 6)


def test_short_prompts_share_a_prefill_row_and_decode_as_generate(pythia, monkeypatch):
    # Rows as long as the longest prompt: the two short prompts fit in one row together.
    packed = []
    original = packing.pack
    monkeypatch.setattr(
        packing, "pack", lambda *a, **k: packed.append(original(*a, **k)) or packed[-1]
    )
    prompts = [
        "Ann put the key in the box. Then she left the room and Bob moved it to the bag, "
        "and then Carl took it to the drawer.\nQ: The key is in the",
        "Bob hid a coin.\nQ: The coin is in the",
        "Eve dropped a ring.\nQ: The ring is in the",
    ]
    outputs = pythia.generate([GenerationRequest(p, max_new_tokens=5) for p in prompts])
    assert sorted(len(row.paths) for row in packed[-1]) == [1, 2]
    assert outputs == generate_loop(pythia, prompts, 5)


def test_a_shared_start_is_run_once_per_call(pythia, monkeypatch, stimulus_set):
    calls = []
    original = hf_generate.run_shared_start
    monkeypatch.setattr(hf_generate, "run_shared_start", lambda *a: calls.append(1) or original(*a))
    prompts = [item.prompt for item in stimulus_set.items[:9]]  # three batches of four
    outputs = pythia.generate([GenerationRequest(p, max_new_tokens=3) for p in prompts])
    assert calls == [1] and outputs == generate_loop(pythia, prompts, 3)


def test_the_picker_chooses_each_token(pythia, monkeypatch, stimulus_set):
    # A sampling option replaces the picker; here one that always picks token 7.
    monkeypatch.setattr(
        pythia, "_picker", lambda requests: lambda logits: torch.full((len(logits),), 7)
    )
    (output,) = pythia.generate([GenerationRequest(stimulus_set.items[0].prompt, max_new_tokens=3)])
    assert output == pythia.tokenizer.decode([7, 7, 7], skip_special_tokens=True)


def test_half_precision_keeps_tree_masks_and_stays_close(model_dirs, stimulus_set):
    scorer = HFScorer(str(model_dirs["pythia"]), dtype="bfloat16", batch_size=4, device="cpu")
    assert scorer.model.dtype == torch.bfloat16 and scorer.forward.tree_masks
    reference = HFScorer(str(model_dirs["pythia"]), device="cpu")
    requests = choice_requests(stimulus_set.items[:4], with_neutral=False)
    for half, full in zip(
        scorer.conditional_score(requests), reference.conditional_score(requests), strict=True
    ):
        for a, b in zip(half, full, strict=True):
            assert a.reduce() == pytest.approx(b.reduce(), abs=0.1 * max(1.0, abs(b.reduce())))


def test_automatic_batches_follow_free_memory(pythia, monkeypatch):
    scorer = pythia
    monkeypatch.setattr(scorer, "batch_size", None)
    assert scorer._batch_for("scoring", 320) == memory.CPU_BATCH  # no GPU: the CPU default
    per_row = memory.row_bytes(scorer.model.config, 320, 4)
    monkeypatch.setattr(memory, "free_bytes", lambda device: 40 * per_row)
    assert scorer._batch_for("scoring", 320) == 20  # half of the free memory
    assert scorer._batch_for("scoring", 100) > 20  # shorter rows, more of them
    assert scorer._batch_for("generation", 320) < 20  # the cache needs room too
    monkeypatch.setattr(memory, "free_bytes", lambda device: 10**15)
    assert scorer._batch_for("scoring", 320) == memory.MAX_BATCH


def test_an_automatic_batch_that_runs_out_of_memory_halves(pythia, monkeypatch, stimulus_set):
    notices = []
    monkeypatch.setattr(pythia, "batch_size", None)
    monkeypatch.setattr(pythia, "notify", notices.append)
    monkeypatch.setattr(pythia, "row_tokens", 1)  # a row per item
    monkeypatch.setattr(memory, "free_bytes", lambda device: 10**15)
    original = hf_forward.score_rows

    def small_memory(forward, rows, paths):
        if len(rows) > 3:
            raise torch.OutOfMemoryError("CUDA out of memory")
        return original(forward, rows, paths)

    monkeypatch.setattr(hf_forward, "score_rows", small_memory)
    assert worst_difference(pythia, choice_requests(stimulus_set.items[:5], False)) < TOLERANCE
    assert notices[0] == (
        f"out of memory on cpu at batch size {memory.MAX_BATCH}; "
        f"continuing with batch size {memory.MAX_BATCH // 2}"
    )
    assert pythia.batch_size <= 3


def test_memory_estimates_grow_with_the_work():
    from transformers import GPTNeoXConfig

    config = GPTNeoXConfig(hidden_size=64, num_hidden_layers=2, num_attention_heads=4)
    assert memory.row_bytes(config, 200, 2) > memory.row_bytes(config, 100, 2)
    assert memory.row_bytes(config, 100, 4) > memory.row_bytes(config, 100, 2)
    assert memory.cache_bytes(config, 100, 2) == 2 * 2 * 64 * 100 * 2
    assert memory.fitting_batch(None, 10**9) == memory.CPU_BATCH
    assert memory.fitting_batch(1000, 10**9) == 1
    assert memory.free_bytes("cpu") is None


def test_pinned_memory_only_with_cuda(monkeypatch):
    def no_pinning(self):
        raise AssertionError("pinned without CUDA")

    monkeypatch.setattr(torch.Tensor, "pin_memory", no_pinning)
    assert hf_forward.to_device(torch.ones(2), torch.device("cpu")).device.type == "cpu"
    pinned = []
    monkeypatch.setattr(torch.Tensor, "pin_memory", lambda self: pinned.append(1) or self)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(
        torch.Tensor, "to", lambda self, device, non_blocking=False: (device, non_blocking)
    )
    assert hf_forward.to_device(torch.ones(2), torch.device("cuda", 0)) == (
        torch.device("cuda", 0),
        True,
    )
    assert pinned == [1]


def cache_kinds(monkeypatch) -> list[str]:
    """Records the class of every decoding cache ``hf_generate`` builds."""
    kinds: list[str] = []
    original = hf_generate._new_cache

    def recorded(forward, length):
        cache = original(forward, length)
        kinds.append(type(cache).__name__)
        return cache

    monkeypatch.setattr(hf_generate, "_new_cache", recorded)
    return kinds


@pytest.mark.parametrize("name", ["pythia", "olmo2", "llama"])
def test_token_trees_of_each_architecture_score_as_the_naive_forward(
    name, model_dirs, stimulus_set
):
    # Every item of the set in one call, so that items opening alike share a row, with the
    # neutral prefixes (the calibration requests) among them.
    scorer = HFScorer(str(model_dirs[name]), batch_size=4, device="cpu")
    assert scorer.forward.tree_masks and scorer.forward.plain_head
    requests = choice_requests(stimulus_set.items)
    scored = scorer.conditional_score(requests)
    rows = packing.pack(
        [
            tuple(e.prefix) + tuple(c[:-1])
            for e in (scorer.encoder.choice(r.prefix, r.continuations) for r in requests)
            for c in e.continuations
        ]
    )
    assert len(rows) < len(requests)  # several pairs to a row: trees were really shared
    for request, (good, bad) in zip(requests, scored, strict=True):
        encoded = scorer.encoder.choice(request.prefix, request.continuations)
        naive = [naive_logprobs(scorer.model, encoded.prefix, c) for c in encoded.continuations]
        for tokens, reference in zip((good, bad), naive, strict=True):
            assert tokens.logprobs == pytest.approx(reference, abs=TOLERANCE)
        assert (good.reduce() > bad.reduce()) == (sum(naive[0]) > sum(naive[1]))


@pytest.mark.parametrize(("name", "chat"), [("pythia", False), ("olmo2", False), ("llama", True)])
def test_static_cache_batches_decode_as_generate(name, chat, model_dirs, stimulus_set, monkeypatch):
    scorer = HFScorer(str(model_dirs[name]), batch_size=4, device="cpu")
    kinds = cache_kinds(monkeypatch)
    items = stimulus_set.items[::4]
    requests = [
        GenerationRequest(i.prompt, i.messages if chat else None, max_new_tokens=7) for i in items
    ]
    outputs = scorer.generate(requests)
    assert kinds and set(kinds) == {"StaticCache"}  # the static path was the one tested
    for request, output in zip(requests, outputs, strict=True):
        ids = scorer.encoder.prompt(request.prompt, request.messages, chat)
        assert output == unbatched_generate(scorer, ids, 7)


def test_free_memory_is_read_from_cuda_when_there_is_one(monkeypatch):
    asked = []
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(
        torch.cuda, "mem_get_info", lambda device: asked.append(device) or (7 * 2**30, 80 * 2**30)
    )
    assert memory.free_bytes("cuda:1") == 7 * 2**30
    assert asked == [torch.device("cuda", 1)]
    assert memory.free_bytes("cpu") is None
    per_row = 2**22  # 896 rows: below the cap of MAX_BATCH
    assert (
        memory.fitting_batch(memory.free_bytes("cuda:1"), per_row)
        == int(7 * 2**30 * memory.FREE_FRACTION) // per_row
    )


def test_an_automatic_batch_on_a_faked_gpu_is_sized_from_its_free_memory(
    pythia, monkeypatch, stimulus_set
):
    # The model stays on the CPU; only the device it reports and CUDA's answers are faked, so
    # the GPU's sizing code runs end to end and the scores must stay exact.
    sizes = []
    per_row = memory.row_bytes(pythia.model.config, pythia.row_tokens, 4)
    monkeypatch.setattr(pythia, "batch_size", None)
    monkeypatch.setattr(pythia.forward, "device", torch.device("cpu"))
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "mem_get_info", lambda device: (6 * per_row, 8 * per_row))
    monkeypatch.setattr(memory, "free_bytes", _faked_gpu_free_bytes(sizes))
    assert worst_difference(pythia, choice_requests(stimulus_set.items[:8])) < TOLERANCE
    assert sizes and all(size == 6 * per_row for size in sizes)
    assert pythia._batch_for("scoring", pythia.row_tokens) == 3  # half of six rows' worth


def _faked_gpu_free_bytes(sizes):
    real = memory.free_bytes

    def free_bytes(device):
        answer = real(torch.device("cuda", 0))  # the faked CUDA answers for the CPU device
        sizes.append(answer)
        return answer

    return free_bytes
