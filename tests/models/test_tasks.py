"""The task layer works with any Scorer; chat-template prompts for an instruct-style tokenizer."""

from __future__ import annotations

import pytest

from tracktale.models.hf import HFScorer
from tracktale.models.tasks import TaskOptions, applies, score_items
from tracktale.scorer import ModelInfo, Scorer, TokenScores


class CannedScorer(Scorer):
    """A backend that answers from a script: shows the task layer needs nothing from HF."""

    def __init__(self, answers, has_chat_template=False):
        self.answers = answers
        self.requests = []
        self.info = ModelInfo(
            "canned",
            None,
            None,
            "canned",
            "none",
            "none",
            "none",
            {"has_chat_template": has_chat_template, "n_parameters": 0},
        )

    def conditional_score(self, requests):
        self.requests += requests
        # The good continuation is the first; make it likelier only for even-length prefixes.
        return [
            [
                TokenScores(("a",), (-1.0,)),
                TokenScores(("b",), (-1.5 if len(r.prefix) % 2 == 0 else -0.5,)),
            ]
            for r in requests
        ]

    def sequence_score(self, requests):
        return [TokenScores(("x", "y"), (-1.0, -2.0), (0, 1)) for _ in requests]

    def generate(self, requests):
        self.requests += requests
        return [self.answers.pop(0) for _ in requests]


def test_explicit_rows_merge_the_paradigms_judgement(stimulus_set):
    items = stimulus_set.items[:3]
    outputs = [f" {items[0].answer.upper()}.", "the floor", f"\n{items[2].answer}"]
    scorer = CannedScorer(list(outputs))
    rows = score_items(scorer, items, "explicit", stimulus_sha256=stimulus_set.sha256)
    assert [row.scores["correct"] for row in rows] == [True, False, True]
    assert [row.scores["output"] for row in rows] == outputs
    assert rows[0].scores["matched"] == items[0].answer.upper()  # the paradigm's own key
    assert {row.scores["prompt_format"] for row in rows} == {"plain"}
    # The narrative budget lets a one-sentence answer finish; it ends at a full stop or line end.
    assert all(r.max_new_tokens == 32 and r.messages is None for r in scorer.requests)
    assert {r.stop for r in scorer.requests} == {("\n", ".")}
    assert scorer.requests[0].prompt == items[0].prompt  # rendered by the stimulus generator


def test_the_budget_can_be_overridden_and_chat_is_used_when_available(stimulus_set):
    scorer = CannedScorer(["x"], has_chat_template=True)
    rows = score_items(
        scorer,
        stimulus_set.items[:1],
        "explicit",
        stimulus_sha256="s",
        options=TaskOptions(max_new_tokens=3),
    )
    assert scorer.requests[0].max_new_tokens == 3 and rows[0].scores["max_new_tokens"] == 3
    assert scorer.requests[0].messages == stimulus_set.items[0].messages
    assert rows[0].scores["prompt_format"] == "chat" and rows[0].scores["chat_template_used"]


def test_identical_calibration_requests_are_scored_once(stimulus_set):
    scorer = CannedScorer([])
    items = stimulus_set.items
    rows = score_items(
        scorer, items, "implicit", stimulus_sha256="s", options=TaskOptions(calibrate=True)
    )
    unique = {(i.choice.prefix, i.choice.good, i.choice.bad) for i in items}
    unique |= {(i.choice.neutral_prefix, i.choice.good, i.choice.bad) for i in items}
    assert len(scorer.requests) == len(unique)
    assert all(row.scores["calibrated"] for row in rows)
    for item, row in zip(items, rows, strict=True):
        assert row.scores["correct"] == (len(item.choice.prefix) % 2 == 0)


def test_tasks_apply_to_items_that_have_what_they_need(human_set):
    fillers = [item for item in human_set if item.role == "filler"]
    assert fillers and not any(applies("implicit", item) for item in fillers)
    assert all(applies("explicit", item) for item in fillers)


def test_an_instruct_tokenizer_renders_the_items_messages_with_its_template(
    model_dirs, stimulus_set
):
    scorer = HFScorer(str(model_dirs["olmo2-instruct"]), device="cpu", batch_size=4)
    assert scorer.info.details["has_chat_template"]
    item = stimulus_set.items[0]
    ids = scorer.encoder.prompt(item.prompt, item.messages, use_chat=True)
    text = scorer.tokenizer.decode(ids)
    assert text == f"<|endoftext|><|user|>\n{item.prompt}\n<|assistant|>\n"
    assert ids.count(scorer.tokenizer.bos_token_id) == 1  # the template's BOS, not a second one

    rounds = (
        {"role": "system", "content": "Answer with one word."},
        *item.messages,
        {"role": "assistant", "content": "box"},
        {"role": "user", "content": "Sure?"},
    )
    text = scorer.tokenizer.decode(scorer.encoder.prompt(item.prompt, rounds, use_chat=True))
    assert text.startswith("<|endoftext|><|system|>\nAnswer with one word.\n<|user|>\n")
    assert text.endswith("<|assistant|>\nbox<|endoftext|>\n<|user|>\nSure?\n<|assistant|>\n")

    rows = score_items(scorer, stimulus_set.items[:4], "explicit", stimulus_sha256="s")
    assert {row.scores["prompt_format"] for row in rows} == {"chat"}
    plain = score_items(
        scorer,
        stimulus_set.items[:4],
        "explicit",
        stimulus_sha256="s",
        options=TaskOptions(prompt_format="plain"),
    )
    assert {row.scores["prompt_format"] for row in plain} == {"plain"}


def test_a_base_tokenizer_gets_plain_prompts(model_dirs, stimulus_set):
    scorer = HFScorer(str(model_dirs["pythia"]), device="cpu")
    rows = score_items(scorer, stimulus_set.items[:2], "explicit", stimulus_sha256="s")
    assert {row.scores["prompt_format"] for row in rows} == {"plain"}
    assert not any(row.scores["chat_template_used"] for row in rows)


@pytest.mark.parametrize("task", ["implicit", "explicit", "sequence"])
def test_rows_carry_the_model_identity(task, model_dirs, stimulus_set):
    scorer = HFScorer(str(model_dirs["olmo2"]), device="cpu")
    row = score_items(scorer, stimulus_set.items[:1], task, stimulus_sha256=stimulus_set.sha256)[0]
    assert row.key == (str(model_dirs["olmo2"]), "", stimulus_set.items[0].item_id, task)
    assert row.info.dtype == "float32" and row.info.device == "cpu"
    assert row.info.details["model_class"] == "Olmo2ForCausalLM"
    assert row.info.details["lm_head_shortcut"]  # OLMo 2's logits are the plain output embedding
    assert row.info.details["n_parameters"] == sum(p.numel() for p in scorer.model.parameters())
