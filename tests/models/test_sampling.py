"""Sampled decoding (temperature, samples, seeds) and reruns of truncated outputs."""

from __future__ import annotations

import pytest

from tests.app.test_cli import run
from tests.models.conftest import score_argv
from tracktale.errors import TracktaleError
from tracktale.models.hf import HFScorer
from tracktale.models.sampling import sample_seed
from tracktale.models.store import read_results
from tracktale.models.tasks import TaskOptions, score_items
from tracktale.scorer import Generation, GenerationRequest, ModelInfo, Scorer


class ScriptedScorer(Scorer):
    """Generates from ``answer(request)``; ``finish(request)`` says why it stopped."""

    def __init__(self, answer, finish=lambda request: "stop", max_context=None):
        self.answer, self.finish = answer, finish
        self.requests = []
        details = {"has_chat_template": False}
        if max_context:
            details["max_context"] = max_context
        self.info = ModelInfo("scripted", None, None, "scripted", "none", "none", "none", details)

    def conditional_score(self, requests):
        raise NotImplementedError

    def sequence_score(self, requests):
        raise NotImplementedError

    def generate(self, requests):
        return [g.text for g in self.generate_detailed(requests)]

    def generate_detailed(self, requests):
        self.requests += requests
        return [Generation(self.answer(r), finish_reason=self.finish(r)) for r in requests]


def test_samples_have_their_own_seeds_and_every_output_is_kept(stimulus_set):
    items = stimulus_set.items[:3]
    answers = {item.prompt: item.answer for item in items}
    # Right when the seed is even: the row keeps every sample and scores each.
    scorer = ScriptedScorer(lambda r: answers[r.prompt] if r.seed % 2 == 0 else "the moon")
    options = TaskOptions(temperature=1.0, num_samples=4, sampling_seed=7)
    rows = score_items(scorer, items, "explicit", stimulus_sha256="x", options=options)
    assert len(scorer.requests) == 12 and {r.temperature for r in scorer.requests} == {1.0}
    for item, row in zip(items, rows, strict=True):
        seeds = [sample_seed(7, item.item_id, k) for k in range(4)]
        assert row.scores["sample_correct"] == [seed % 2 == 0 for seed in seeds]
        assert row.scores["output"] == row.scores["sample_outputs"][0]
        assert row.scores["correct"] is row.scores["sample_correct"][0]
        assert row.scores["sample_seed"] == seeds[0]
        assert (row.scores["temperature"], row.scores["num_samples"]) == (1.0, 4)
        assert row.scores["sampling_seed"] == 7
    assert len({r.seed for r in scorer.requests}) == 12
    # A seed depends on the run's seed, the item and the sample only.
    assert sample_seed(7, "abc", 0) == sample_seed(7, "abc", 0) != sample_seed(8, "abc", 0)


def test_greedy_rows_record_greedy_and_several_greedy_samples_are_refused(stimulus_set):
    scorer = ScriptedScorer(lambda r: "x")
    (row,) = score_items(scorer, stimulus_set.items[:1], "explicit", stimulus_sha256="x")
    assert row.scores["temperature"] == 0 and row.scores["sampling_seed"] is None
    assert scorer.requests[0].seed is None and "sample_outputs" not in row.scores
    with pytest.raises(TracktaleError, match="greedy decoding gives the same output"):
        TaskOptions(num_samples=3)
    with pytest.raises(TracktaleError, match="--temperature must be 0 or more"):
        TaskOptions(temperature=-1)


def test_a_truncated_wrong_output_is_generated_again_with_the_whole_context(stimulus_set):
    wrong, right, long_right = stimulus_set.items[:3]
    answers = {
        wrong.prompt: "the",
        right.prompt: right.answer,
        long_right.prompt: long_right.answer,
    }

    def answer(request):
        if request.max_new_tokens > 100 and request.prompt == wrong.prompt:
            return wrong.answer  # with room, it gets there
        return answers[request.prompt]

    def finish(request):
        return (
            "length" if request.prompt != right.prompt and request.max_new_tokens < 100 else "stop"
        )

    scorer = ScriptedScorer(answer, finish, max_context=2048)
    options = TaskOptions(rerun_truncated=True)
    rows = score_items(
        scorer, [wrong, right, long_right], "explicit", stimulus_sha256="x", options=options
    )
    reruns = scorer.requests[3:]
    assert [r.prompt for r in reruns] == [wrong.prompt] and reruns[0].max_new_tokens == 2048
    first, second, third = (row.scores for row in rows)
    assert first["rerun"] and first["truncated"] and first["correct"]
    assert first["output_first_pass"] == "the" and first["output"] == wrong.answer
    assert not second["rerun"] and not second["truncated"]
    assert third["truncated"] and not third["rerun"]  # right already: not run again
    assert first["rerun_truncated"] and first["max_new_tokens"] == 32  # the narrative budget

    budgeted = TaskOptions(rerun_truncated=True, rerun_max_new_tokens=500)
    scorer = ScriptedScorer(answer, finish)  # reports no context length
    score_items(scorer, [wrong], "explicit", stimulus_sha256="x", options=budgeted)
    assert scorer.requests[-1].max_new_tokens == 500
    with pytest.raises(TracktaleError, match="give --rerun-max-new-tokens"):
        score_items(
            ScriptedScorer(answer, finish),
            [wrong],
            "explicit",
            stimulus_sha256="x",
            options=TaskOptions(rerun_truncated=True),
        )


def test_hf_sampling_is_seeded_per_row_whatever_the_batch(model_dirs, stimulus_set):
    scorer = HFScorer(str(model_dirs["pythia"]), device="cpu", batch_size=4)
    prompts = [item.prompt for item in stimulus_set.items[:4]]

    def requests(seed_offset=0, temperature=1.0):
        return [
            GenerationRequest(p, max_new_tokens=6, temperature=temperature, seed=i + seed_offset)
            for i, p in enumerate(prompts)
        ]

    together = scorer.generate_detailed(requests())
    alone = [scorer.generate_detailed([request])[0] for request in requests()]
    assert [g.text for g in together] == [g.text for g in alone]
    again = scorer.generate_detailed(requests())
    assert [g.text for g in again] == [g.text for g in together]
    other = scorer.generate_detailed(requests(seed_offset=100))
    assert [g.text for g in other] != [g.text for g in together]
    greedy = scorer.generate_detailed(requests(temperature=0.0))
    assert [g.text for g in greedy] == scorer.generate(
        [GenerationRequest(p, max_new_tokens=6) for p in prompts]
    )
    assert {g.finish_reason for g in greedy} <= {"length", "stop"}
    assert scorer.info.details["max_context"] == scorer.model.config.max_position_embeddings


def test_the_sampling_options_on_the_command_line(model_dirs, stimulus_dir, tmp_path, capsys):
    out = tmp_path / "results"
    argv = score_argv(stimulus_dir, model_dirs["pythia"], out, "--task", "explicit")
    argv += ["--limit", "2", "--temperature", "0.7", "--num-samples", "2", "--sampling-seed", "3"]
    status, _, err = run([*argv, "--max-new-tokens", "4"], capsys)
    assert status == 0, err
    frame = read_results(out)
    assert list(frame["temperature"]) == [0.7, 0.7] and list(frame["num_samples"]) == [2, 2]
    assert all(len(outputs) == 2 for outputs in frame["sample_outputs"])
    status, _, err = run([*argv[:-6], "--max-new-tokens", "4"], capsys)
    assert status == 1 and "temperature=0.7; this run asks temperature=0.0" in err
    bad = score_argv(stimulus_dir, model_dirs["pythia"], out, "--num-samples", "2")
    status, _, err = run(bad, capsys)
    assert status == 1 and "greedy decoding gives the same output" in err


def test_the_openai_body_carries_the_temperature_and_each_samples_seed(tmp_path):
    from tracktale.models.openai import OpenAIScorer

    scorer = OpenAIScorer("m", base_url="http://127.0.0.1:9/v1", cache_dir=tmp_path, seed=11)
    sampled = scorer._body(GenerationRequest("hi", temperature=1.0, seed=5))
    assert sampled["temperature"] == 1.0 and sampled["seed"] == 5
    greedy = scorer._body(GenerationRequest("hi"))
    # Greedy bodies are what they were (an int 0), so earlier cached answers still match.
    assert greedy["temperature"] == 0 and type(greedy["temperature"]) is int
    assert greedy["seed"] == 11
