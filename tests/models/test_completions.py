"""The completions backend against fake engines started here (no network, no model)."""

from __future__ import annotations

import json

import pytest
import yaml

from tests.models.conftest import score_argv
from tests.models.fake_completions import GENERATED, FakeEngine, expected_logprob, logprob
from tracktale.app.cli import main
from tracktale.errors import TracktaleError
from tracktale.models import store
from tracktale.models.completions import PROBE_PROMPT, CompletionsScorer
from tracktale.models.plan import load_plan
from tracktale.models.sweep import run_sweep
from tracktale.scorer import ChoiceRequest, GenerationRequest, SequenceRequest


def run(argv, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    out, err = capsys.readouterr()
    return exit_info.value.code, out, err


def scorer(engine, tmp_path, **options):
    return CompletionsScorer("m", base_url=engine.url, cache_dir=tmp_path / "cache", **options)


def completions_argv(stimulus_dir, engine, out, *extra):
    argv = score_argv(stimulus_dir, "m", out, "--backend", "completions")
    return [*argv, "--base-url", engine.url, *extra]


def test_the_implicit_task_through_a_completions_engine(
    stimulus_set, stimulus_dir, tmp_path, capsys
):
    results = tmp_path / "results"
    with FakeEngine().running() as engine:
        argv = completions_argv(stimulus_dir, engine, results, "--limit", "5")
        argv += ["--prompts-per-request", "4", "--concurrency", "2"]
        code, _, err = run(argv, capsys)
        assert code == 0, err
        # The check: a generation, an echo of the probe, then two prompts in one request.
        assert [r["body"]["prompt"] for r in engine.requests[:3]] == [
            PROBE_PROMPT,
            PROBE_PROMPT + GENERATED,
            [PROBE_PROMPT, PROBE_PROMPT + GENERATED],
        ]
        bodies = [r["body"] for r in engine.scoring_requests]
        assert all(r["path"] == "/v1/completions" for r in engine.requests)
        assert sorted(len(body["prompt"]) for body in bodies) == [2, 4, 4]  # 10 prompts
        assert all(body["echo"] is True and body["logprobs"] == 1 for body in bodies)
        assert all(body["max_tokens"] == 1 and body["temperature"] == 0 for body in bodies)

        frame = store.read_results(results)
        assert len(frame) == 5 and set(frame["backend"]) == {"completions"}
        by_id = {item.item_id: item for item in stimulus_set}
        for row in frame.itertuples():
            choice = by_id[row.item_id].choice
            assert row.logprob_good == pytest.approx(expected_logprob(choice.prefix, choice.good))
            assert row.logprob_bad == pytest.approx(expected_logprob(choice.prefix, choice.bad))
            assert row.correct == (row.logprob_good > row.logprob_bad)
            assert "".join(row.tokens_good) == choice.good and not row.boundary_merged
            assert row.n_tokens_good == len(row.logprobs_good) == len(choice.good.split())
        row = frame.iloc[0]
        assert row["dtype"] == "server" and row["device"] == "server"
        assert row["bos_policy"] == "add" and row["bos_token"] == "<s>"
        assert row["api_model"] == "m" and row["server_version"] == "0.0-fake"
        assert row["server_owned_by"] == "fake" and row["server_max_model_len"] == 2048
        assert bool(row["prompt_lists"]) and row["echo_alignment_delta"] == 0

        # Rescoring sends nothing: every answer, the check's too, is in the cache.
        sent = len(engine.requests)
        code, _, err = run([*argv, "--rescore"], capsys)
        assert code == 0, err
        assert len(engine.requests) == sent


def test_the_result_columns_are_those_of_the_hf_backend(model_dirs, stimulus_dir, tmp_path, capsys):
    hf_out, api_out = tmp_path / "hf", tmp_path / "api"
    argv = score_argv(stimulus_dir, model_dirs["pythia"], hf_out, "--limit", "2", "--calibrate")
    assert run(argv, capsys)[0] == 0
    with FakeEngine().running() as engine:
        argv = completions_argv(stimulus_dir, engine, api_out, "--limit", "2", "--calibrate")
        code, _, err = run(argv, capsys)
        assert code == 0, err
    hf, api = store.read_results(hf_out), store.read_results(api_out)
    scores = {"correct", "logprob_good", "logprob_bad", "mean_good", "n_tokens_bad", "prior_good"}
    scores |= {"correct_calibrated", "tokens_good", "logprobs_bad", "boundary_merged"}
    assert scores <= set(hf.columns) & set(api.columns)
    assert api["prior_good"].notna().all() and str(api["correct"].dtype) == "boolean"
    assert set(hf.columns) - set(api.columns) <= {
        "n_parameters", "model_class", "attn_implementation", "lm_head_shortcut", "device_map",
        "max_memory", "torch_version", "transformers_version", "tokenizers_version",
        "max_context", "tree_attention",
    }  # fmt: skip


def test_every_task_through_the_command_line(stimulus_dir, tmp_path, capsys):
    with FakeEngine().running() as engine:
        argv = completions_argv(stimulus_dir, engine, tmp_path / "r", "--limit", "3")
        code, _, err = run([*argv, "--task", "all"], capsys)
        assert code == 0, err
    frame = store.read_results(tmp_path / "r")
    assert frame.groupby("task").size().to_dict() == {"explicit": 3, "implicit": 3, "sequence": 3}
    explicit = frame[frame["task"] == "explicit"]
    assert set(explicit["prompt_format"]) == {"plain"} and explicit["output"].str.len().min() > 0
    assert not [column for column in frame.columns if column.startswith(("score_", "info_"))]
    assert set(frame["api_model"]) == {"m"}
    sequence = frame[frame["task"] == "sequence"]
    assert (sequence["n_tokens"] > 10).all() and sequence["word_surprisals"].notna().all()


def test_sequence_scores_with_offsets(tmp_path):
    text = "Ann has a key. She gives it to Bo, who puts it in the box."
    with FakeEngine("nobos").running() as engine:
        (scores,) = scorer(engine, tmp_path).sequence_score([SequenceRequest(text)])
    words = text.split()
    # Without a BOS the first token has no context and is not scored (as in the HF backend).
    assert scores.tokens == tuple(" " + word for word in words[1:])
    assert scores.logprobs == tuple(logprob(i, " " + w) for i, w in enumerate(words[1:], 1))
    assert [text[offset:].lstrip().split()[0] for offset in scores.offsets] == words[1:]


@pytest.mark.parametrize(("mode", "bos"), [("vllm", "add"), ("llamacpp", "add"), ("nobos", "none")])
def test_the_bos_policy_is_what_the_server_does(tmp_path, mode, bos):
    with FakeEngine(mode).running() as engine:
        model = scorer(engine, tmp_path)
        assert model.info.bos_policy == bos
        (scores,) = model.sequence_score([SequenceRequest("Ann has a key.")])
        # vLLM lists the BOS and scores the first token against it; llama-cpp-python nulls it.
        assert scores.n_tokens == (4 if mode == "vllm" else 3)
        other = "none" if bos == "add" else "add"
        with pytest.raises(TracktaleError, match=f"--bos {other}: the server at .* decide"):
            scorer(engine, tmp_path, bos=other)


def test_a_token_across_the_boundary_counts_with_the_continuation(tmp_path):
    with FakeEngine("nobos", chunks=True).running() as engine:
        model = scorer(engine, tmp_path)
        ((good, bad),) = model.conditional_score([ChoiceRequest("Ann has", (" a key", " a b"))])
    # "Ann has a key" in pieces of three: "Ann", " ha", "s a", " ke", "y"
    assert good.tokens == ("s a", " ke", "y") and good.boundary_merged
    assert good.logprobs == (logprob(2, "s a"), logprob(3, " ke"), logprob(4, "y"))
    assert bad.tokens == ("s a", " b") and bad.boundary_merged


@pytest.mark.parametrize(
    ("mode", "expected"),
    [
        ("ignore_echo", "does not start with the prompt: echo was ignored"),
        ("generated_only", "log-probabilities of generated tokens only"),
        ("shifted", "prompt log-probabilities are misaligned"),
    ],
)
def test_an_endpoint_that_cannot_score_given_text_is_refused_on_the_first_request(
    stimulus_dir, tmp_path, capsys, mode, expected
):
    with FakeEngine(mode).running() as engine:
        argv = completions_argv(stimulus_dir, engine, tmp_path / "r", "--limit", "3")
        code, _, err = run(argv, capsys)
        assert code == 1 and err.count("\n") == 1 and expected in err, err
        assert len(engine.requests) == 2  # the probe's generation and its echo
    assert not (tmp_path / "r").exists() or not store.shards(tmp_path / "r")


def test_an_endpoint_refusing_log_probabilities_is_one_line(tmp_path):
    with FakeEngine().running() as engine:
        engine.script = [(400, {}, {"object": "error", "message": "logprobs are not supported"})]
        with pytest.raises(TracktaleError, match="cannot score given text.*refuses logprobs"):
            scorer(engine, tmp_path)


def test_a_server_without_prompt_lists_gets_one_prompt_a_request(tmp_path):
    notices = []
    with FakeEngine("llamacpp", lists=False).running() as engine:
        model = scorer(engine, tmp_path, notify=notices.append)
        requests = [ChoiceRequest("Ann has", (" a key", " a bag")), ChoiceRequest("Bo", (" ran",))]
        scores = model.conditional_score(requests)
    assert len(engine.requests) == 3 + 3 and not model.shape.takes_lists
    assert len(notices) == 1 and "does not take a list of prompts" in notices[0]
    assert scores[1][0].logprobs == (logprob(2, " ran"),)  # BOS, "Bo", then " ran"


def test_requests_run_concurrently_and_are_retried(tmp_path):
    with FakeEngine().running() as engine:
        model = scorer(engine, tmp_path, concurrency=3, prompts_per_request=1)
        waits = []
        model.client.sleep = waits.append
        engine.hold_until = 3  # the first three scoring requests wait for each other
        engine.script = [(503, {"Retry-After": "2"}, {"error": {"message": "busy"}})]
        requests = [ChoiceRequest(f"Ann has {i}", (" a key",)) for i in range(6)]
        scores = model.conditional_score(requests)
    assert engine.max_in_flight == 3 and waits == [2.0]
    assert all(score[0].n_tokens == 2 for score in scores)


def test_explicit_generations_are_plain_prompts_cut_at_stop_strings(tmp_path):
    with FakeEngine().running() as engine:
        model = scorer(engine, tmp_path)
        stops = ("t m", "\n\n", "Q:", "A:", "x")  # five: one more than an endpoint takes
        requests = [GenerationRequest("Where is the key?", max_new_tokens=3, stop=stops)] * 2
        first, second = model.generate_detailed(requests)
        body = engine.scoring_requests[0]["body"]
        assert body["prompt"] == ["Where is the key?"] * 2 and body["echo"] is False
        # "\n\n" (whitespace alone) is never sent; every stop is applied here.
        assert body["max_tokens"] == 3 and body["stop"] == ["t m", "Q:", "A:", "x"]
        assert first.text == second.text == " ma" and first.tokens == (" mat",)
        with pytest.raises(TracktaleError, match="plain prompts"):
            model.generate([GenerationRequest("q", messages=({"role": "user", "content": "q"},))])


def test_what_the_backend_cannot_take_is_refused_before_any_request(tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(TracktaleError, match="--base-url: the completions backend needs"):
        CompletionsScorer("m")
    with pytest.raises(
        TracktaleError, match="--revision v1: a model behind an endpoint has no revisions"
    ):
        CompletionsScorer("m", revision="v1", base_url="http://127.0.0.1:9/v1")
    with pytest.raises(TracktaleError, match="--prompts-per-request must be at least 1"):
        CompletionsScorer("m", base_url="http://127.0.0.1:9/v1", prompts_per_request=0)


def test_a_plan_mixes_hf_and_completions_models(model_dirs, stimulus_dir, tmp_path):
    with FakeEngine().running() as first, FakeEngine("llamacpp").running() as second:
        plan = {
            "store": "results",
            "stimuli": [str(stimulus_dir)],
            "tasks": ["implicit", "sequence"],
            "scoring": {"device": "cpu", "limit": 3},
            "models": [
                str(model_dirs["pythia"]),
                {"id": "m", "backend": "completions", "base_url": first.url},
                {
                    "id": "served-elsewhere",
                    "backend": "completions",
                    "base_url": second.url,
                    "prompts_per_request": 2,
                    "concurrency": 2,
                },
            ],
        }
        path = tmp_path / "sweep.yaml"
        path.write_text(yaml.safe_dump(plan))
        statuses = run_sweep(load_plan(path))
        assert [status.state for status in statuses] == ["done"] * 3
        assert {r["body"]["model"] for r in second.requests} == {"served-elsewhere"}
        assert first.requests and all(r["body"]["model"] == "m" for r in first.requests)
    frame = store.read_results(tmp_path / "results")
    counts = frame.groupby(["model_id", "backend"]).size().to_dict()
    assert counts == {
        (str(model_dirs["pythia"]), "hf"): 6,
        ("m", "completions"): 6,
        ("served-elsewhere", "completions"): 6,
    }
    bos = frame.groupby("model_id")["bos_policy"].first().to_dict()
    assert bos["m"] == "add" and bos[str(model_dirs["pythia"])] == "none"


def test_a_plan_checks_completions_options(tmp_path, stimulus_dir):
    plan = {
        "store": "results",
        "stimuli": [str(stimulus_dir)],
        "models": [
            {"id": "m", "backend": "openai", "tasks": ["explicit"], "prompts_per_request": 4}
        ],
    }
    path = tmp_path / "sweep.yaml"
    path.write_text(yaml.safe_dump(plan))
    with pytest.raises(TracktaleError, match="not an option of the openai backend.*completions"):
        load_plan(path)
    plan["models"] = [{"id": "m", "backend": "completions", "prompts_per_request": 0}]
    path.write_text(json.dumps(plan))
    with pytest.raises(TracktaleError, match="prompts_per_request: must be at least 1"):
        load_plan(path)
