"""Batched, prefix-shared scores equal a naive one-sequence-at-a-time full forward (fp32)."""

from __future__ import annotations

import pytest
import torch

from tracktale.models.hf import HFScorer
from tracktale.models.tasks import TaskOptions, score_items
from tracktale.scorer import ChoiceRequest, GenerationRequest, SequenceRequest

TOLERANCE = 1e-4  # nats


def naive_logprobs(model, context: list[int], target: list[int]) -> list[float]:
    """log P(target tokens | context), from one unpadded forward of the whole sequence."""
    ids = torch.tensor([context + target])
    with torch.no_grad():
        logprobs = model(input_ids=ids).logits[0].float().log_softmax(-1)
    return [logprobs[len(context) - 1 + t, token].item() for t, token in enumerate(target)]


def unbatched_generate(scorer, ids: list[int], budget: int) -> str:
    """The text ``model.generate()`` gives one prompt alone, greedily (the reference)."""
    prompt = torch.tensor([ids])
    generated = scorer.model.generate(
        prompt,
        attention_mask=torch.ones_like(prompt),
        max_new_tokens=budget,
        do_sample=False,
        pad_token_id=scorer.forward.pad_id,
    )[0, len(ids) :]
    return scorer.tokenizer.decode(generated, skip_special_tokens=True)


def choice_requests(items, with_neutral=True):
    requests = [ChoiceRequest(i.choice.prefix, (i.choice.good, i.choice.bad)) for i in items]
    if with_neutral:
        requests += [
            ChoiceRequest(i.choice.neutral_prefix, (i.choice.good, i.choice.bad)) for i in items
        ]
    return requests


@pytest.mark.parametrize("name", ["pythia", "olmo2"])
@pytest.mark.parametrize("bos", ["none", "add"])
def test_prefix_shared_batches_equal_the_naive_forward(name, bos, model_dirs, stimulus_set):
    scorer = HFScorer(str(model_dirs[name]), batch_size=5, bos=bos, device="cpu")
    assert scorer.info.bos_policy == bos
    requests = choice_requests(stimulus_set.items)
    conditions = {(i.condition["template"], i.condition["cell"]) for i in stimulus_set}
    assert len(conditions) == 33  # every cell of every template
    worst = 0.0
    for request, scored in zip(requests, scorer.conditional_score(requests), strict=True):
        encoded = scorer.encoder.choice(request.prefix, request.continuations)
        assert encoded.prefix[:1] == (
            [scorer.tokenizer.bos_token_id] if bos == "add" else encoded.prefix[:1]
        )
        for continuation, tokens in zip(encoded.continuations, scored, strict=True):
            reference = naive_logprobs(scorer.model, encoded.prefix, continuation)
            assert tokens.n_tokens == len(reference) == len(continuation)
            worst = max(
                worst, *(abs(a - b) for a, b in zip(tokens.logprobs, reference, strict=True))
            )
    assert worst < TOLERANCE


@pytest.mark.parametrize("name", ["pythia", "olmo2"])
def test_continuation_tokens_are_the_full_texts_tokens_after_the_prefix(
    name, model_dirs, stimulus_set
):
    scorer = HFScorer(str(model_dirs[name]), device="cpu")
    for item in stimulus_set:
        scored = scorer.conditional_score([ChoiceRequest(item.choice.prefix, (item.choice.good,))])[
            0
        ][0]
        full = scorer.tokenizer(item.choice.prompt_good, add_special_tokens=False)["input_ids"]
        prefix = scorer.tokenizer(item.choice.prefix, add_special_tokens=False)["input_ids"]
        assert list(scored.ids) == full[len(prefix) :]
        assert not scored.boundary_merged
        assert "".join(scored.tokens) == item.choice.good


@pytest.mark.parametrize("name", ["pythia", "olmo2"])
def test_implicit_rows_hold_the_naive_sums(name, model_dirs, stimulus_set):
    scorer = HFScorer(str(model_dirs[name]), batch_size=7, device="cpu")
    rows = score_items(
        scorer,
        stimulus_set.items,
        "implicit",
        stimulus_sha256=stimulus_set.sha256,
        options=TaskOptions(calibrate=True),
    )
    for item, row in zip(stimulus_set.items, rows, strict=True):
        prefix = scorer.encoder.choice(item.choice.prefix, [item.choice.good]).prefix
        good = scorer.encoder.choice(item.choice.prefix, [item.choice.good]).continuations[0]
        bad = scorer.encoder.choice(item.choice.prefix, [item.choice.bad]).continuations[0]
        neutral = scorer.encoder.choice(item.choice.neutral_prefix, [item.choice.good])
        s = row.scores
        assert s["logprob_good"] == pytest.approx(
            sum(naive_logprobs(scorer.model, prefix, good)), abs=1e-3
        )
        assert s["logprob_bad"] == pytest.approx(
            sum(naive_logprobs(scorer.model, prefix, bad)), abs=1e-3
        )
        assert s["prior_good"] == pytest.approx(
            sum(naive_logprobs(scorer.model, neutral.prefix, neutral.continuations[0])), abs=1e-3
        )
        assert s["correct"] == (s["logprob_good"] > s["logprob_bad"])
        assert s["correct_calibrated"] == (
            s["logprob_good"] - s["prior_good"] > s["logprob_bad"] - s["prior_bad"]
        )
        assert s["mean_good"] == pytest.approx(s["logprob_good"] / s["n_tokens_good"])
        assert row.item_id == item.item_id and row.info.details["n_parameters"] > 0


@pytest.mark.parametrize("name", ["pythia", "olmo2"])
def test_sequence_scores_equal_the_naive_forward(name, model_dirs, stimulus_set):
    scorer = HFScorer(str(model_dirs[name]), batch_size=6, device="cpu")
    texts = [item.context for item in stimulus_set]
    for text, scored in zip(
        texts, scorer.sequence_score([SequenceRequest(t) for t in texts]), strict=True
    ):
        ids = scorer.tokenizer(text, add_special_tokens=False)["input_ids"]
        reference = naive_logprobs(scorer.model, ids[:1], ids[1:])
        assert scored.n_tokens == len(ids) - 1  # no BOS: the first token has no context
        assert max(abs(a - b) for a, b in zip(scored.logprobs, reference, strict=True)) < TOLERANCE
        assert len(scored.offsets) == scored.n_tokens


@pytest.mark.parametrize(("name", "chat"), [("pythia", False), ("olmo2-instruct", True)])
def test_batched_greedy_decoding_equals_unbatched_generate(name, chat, model_dirs, stimulus_set):
    scorer = HFScorer(str(model_dirs[name]), batch_size=4, device="cpu")
    items = stimulus_set.items[::3]
    requests = [
        GenerationRequest(i.prompt, i.messages if chat else None, max_new_tokens=6) for i in items
    ]
    outputs = scorer.generate(requests)
    for request, output in zip(requests, outputs, strict=True):
        ids = scorer.encoder.prompt(request.prompt, request.messages, chat)
        assert output == unbatched_generate(scorer, ids, 6)


@pytest.mark.parametrize(
    "prompts",
    [["Ann went", "Bob put the key"], ["The key is in the", "The key is in the box. The key is"]],
)
def test_greedy_decoding_with_and_without_a_shared_start(prompts, model_dirs):
    scorer = HFScorer(str(model_dirs["pythia"]), device="cpu")
    outputs = scorer.generate([GenerationRequest(p, max_new_tokens=5) for p in prompts])
    for prompt, output in zip(prompts, outputs, strict=True):
        assert output == unbatched_generate(scorer, scorer.encoder.prompt(prompt, None, False), 5)


def test_generation_stops_at_a_stop_string(model_dirs, stimulus_set):
    scorer = HFScorer(str(model_dirs["pythia"]), device="cpu")
    prompt = stimulus_set.items[0].prompt
    full = scorer.generate([GenerationRequest(prompt, max_new_tokens=8)])[0]
    stop = full[len(full) // 2 :][:2]
    assert stop
    cut = scorer.generate([GenerationRequest(prompt, max_new_tokens=8, stop=(stop,))])[0]
    assert cut == full[: full.find(stop)]


def test_models_whose_head_is_not_plain_are_scored_through_the_full_model(
    model_dirs, stimulus_set, monkeypatch
):
    from tracktale.models import hf_forward

    monkeypatch.setattr(hf_forward, "head_is_plain", lambda model: False)
    scorer = HFScorer(str(model_dirs["olmo2"]), batch_size=3, device="cpu")
    assert not scorer.info.details["lm_head_shortcut"]
    items = stimulus_set.items[:5]
    for request, scored in zip(
        choice_requests(items), scorer.conditional_score(choice_requests(items)), strict=True
    ):
        encoded = scorer.encoder.choice(request.prefix, request.continuations)
        for continuation, tokens in zip(encoded.continuations, scored, strict=True):
            reference = naive_logprobs(scorer.model, encoded.prefix, continuation)
            assert tokens.logprobs == pytest.approx(reference, abs=TOLERANCE)
    texts = [SequenceRequest(item.context) for item in items]
    for text, scored in zip(texts, scorer.sequence_score(texts), strict=True):
        ids = scorer.tokenizer(text.text, add_special_tokens=False)["input_ids"]
        assert scored.logprobs == pytest.approx(
            naive_logprobs(scorer.model, ids[:1], ids[1:]), abs=TOLERANCE
        )
