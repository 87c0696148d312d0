"""The OpenAI-compatible backend against a chat-completions server started here (no network).

The server follows the public schema: ``POST /v1/chat/completions`` with ``model``,
``messages``, ``temperature``, ``max_tokens``, ``stop``, ``logprobs``, ``top_logprobs``; the
answer has ``choices[0].message.content``, ``choices[0].logprobs.content[]`` (``token``,
``logprob``, ``bytes``, ``top_logprobs``), ``finish_reason``, ``usage``, ``model``.
"""

from __future__ import annotations

import http.server
import json
import threading
from contextlib import contextmanager

import pytest

from tests.models.conftest import score_argv
from tracktale.app.cli import main
from tracktale.errors import TracktaleError
from tracktale.models import store
from tracktale.models.endpoint import EndpointClient
from tracktale.models.openai import OpenAIScorer, _generation
from tracktale.scorer import GenerationRequest


class ChatServer:
    """A chat-completions endpoint: answers from ``answers`` (last user turn -> text), or the
    scripted failures queued in ``script`` first."""

    def __init__(self, answers=None, *, hold_until=None, delay_first=0.0):
        self.answers = answers or {}
        self.requests, self.script = [], []
        self.in_flight = self.max_in_flight = 0
        self.hold_until, self.delay_first = hold_until, delay_first
        self.condition = threading.Condition()
        self.refuse_logprobs = False
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                server.requests.append({"path": self.path, "body": body, "headers": self.headers})
                status, headers, answer = server.respond(body)
                data = json.dumps(answer).encode()
                self.send_response(status)
                for name, value in {**headers, "Content-Type": "application/json"}.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def respond(self, body):
        with self.condition:
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            self.condition.notify_all()
            if self.hold_until:  # hold the first requests until that many were in flight
                self.condition.wait_for(lambda: self.max_in_flight >= self.hold_until, timeout=5)
            first = len(self.requests) == 1
            scripted = self.script.pop(0) if self.script else None
        try:
            if first and self.delay_first:
                threading.Event().wait(self.delay_first)
            if scripted:
                return scripted
            if self.refuse_logprobs and body.get("logprobs"):
                return 400, {}, {"error": {"message": "logprobs are not supported by this model"}}
            return 200, {}, self.completion(body)
        finally:
            with self.condition:
                self.in_flight -= 1

    def completion(self, body):
        prompt = body["messages"][-1]["content"]
        text = self.answers.get(prompt, "box")
        words = text.split(" ")
        tokens = [word if i == 0 else " " + word for i, word in enumerate(words)]
        content = [
            {
                "token": token,
                "logprob": -0.25 * (i + 1),
                "bytes": list(token.encode()),
                "top_logprobs": [
                    {"token": token, "logprob": -0.25 * (i + 1), "bytes": None},
                    {"token": "bag", "logprob": -3.0, "bytes": None},
                ],
            }
            for i, token in enumerate(tokens)
        ]
        choice = {
            "index": 0,
            "message": {"role": "assistant", "content": text},
            "finish_reason": "stop",
            "logprobs": {"content": content} if body.get("logprobs") else None,
        }
        return {
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "model": body["model"] + "-served",
            "system_fingerprint": "fp_test",
            "choices": [choice],
            "usage": {"prompt_tokens": 50, "completion_tokens": len(tokens), "total_tokens": 60},
        }

    @contextmanager
    def running(self):
        thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        thread.start()
        try:
            yield self
        finally:
            self.httpd.shutdown()
            self.httpd.server_close()


def run(argv, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    out, err = capsys.readouterr()
    return exit_info.value.code, out, err


@pytest.fixture
def answers(stimulus_set):
    return {item.prompt: item.answer for item in stimulus_set if item.prompt}


def test_the_explicit_task_through_a_chat_endpoint(
    answers, stimulus_set, stimulus_dir, tmp_path, capsys, monkeypatch
):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    results = tmp_path / "results"
    argv = score_argv(stimulus_dir, "gpt-test", results, "--backend", "openai")
    argv += ["--task", "explicit", "--limit", "4", "--concurrency", "2"]
    with ChatServer(answers).running() as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        code, out, err = run(argv, capsys)
        assert code == 0, err
        assert len(server.requests) == 4
        first = server.requests[0]
        assert first["path"] == "/v1/chat/completions"
        assert first["headers"]["Authorization"] == "Bearer sk-test"
        body = first["body"]
        item = next(i for i in stimulus_set if i.prompt == body["messages"][-1]["content"])
        assert body["messages"] == [dict(m) for m in item.messages]
        assert body["model"] == "gpt-test" and body["temperature"] == 0 and body["n"] == 1
        assert body["max_tokens"] == 32 and body["logprobs"] is True and body["top_logprobs"] == 5
        assert body["stop"] == ["."]  # the narrative answer's end of line is applied here

        frame = store.read_results(results)
        assert len(frame) == 4 and frame["correct"].all()
        row = frame.iloc[0]
        assert row["backend"] == "openai" and row["dtype"] == "server"
        assert row["api_model"] == "gpt-test-served" and row["system_fingerprint"] == "fp_test"
        assert row["output_logprob"] == pytest.approx(sum(row["output_logprobs"]))
        assert row["output_n_tokens"] == len(row["output_tokens"]) == 1
        assert json.loads(row["first_token_top_logprobs"])["bag"] == -3.0
        assert row["finish_reason"] == "stop" and not row["from_cache"]

        # A rerun that rescores everything costs nothing: every answer is in the cache.
        code, _, err = run([*argv, "--rescore"], capsys)
        assert code == 0, err
        assert len(server.requests) == 4
        again = store.read_results(results)
        assert again["from_cache"].all() and list(again["output"]) == list(frame["output"])


def test_the_plain_prompt_is_one_user_turn(answers, stimulus_set, tmp_path):
    item = stimulus_set.items[0]
    with ChatServer(answers).running() as server:
        scorer = OpenAIScorer("m", base_url=server.url, cache_dir=tmp_path, top_logprobs=0)
        # Five stop strings, one more than the API takes, one of them whitespace alone (never
        # sent: a server would stop on a newline before the answer); all are applied here.
        stops = ("\nQ:", "\nA:", "\n\n", "Story:", item.answer[1])
        request = GenerationRequest(item.prompt, None, max_new_tokens=3, stop=stops)
        assert scorer.generate([request]) == [item.answer[: item.answer.index(item.answer[1])]]
        body = server.requests[0]["body"]
        assert body["messages"] == [{"role": "user", "content": item.prompt}]
        sent = ["\nQ:", "\nA:", "Story:", item.answer[1]]
        assert "top_logprobs" not in body and body["stop"] == sent
        assert "Authorization" not in server.requests[0]["headers"]  # no key, no header


def client(server, tmp_path, **options):
    chat = EndpointClient(server.url, cache_dir=tmp_path / "cache", **options)
    waits = []
    chat.sleep = waits.append
    return chat, waits


BODY = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "temperature": 0}


def test_429_waits_what_retry_after_says_then_succeeds(tmp_path):
    with ChatServer().running() as server:
        server.script = [
            (429, {"Retry-After": "3"}, {"error": {"message": "slow down"}}),
            (429, {"retry-after-ms": "250", "Retry-After": "1"}, {"error": {"message": "again"}}),
        ]
        chat, waits = client(server, tmp_path)
        answer, cached = chat.complete(BODY)
        assert answer["choices"][0]["message"]["content"] == "box" and not cached
        assert waits == [3.0, 0.25] and len(server.requests) == 3


def test_5xx_and_timeouts_are_retried_with_growing_back_off(tmp_path):
    with ChatServer(delay_first=1.0).running() as server:
        never_seen = (200, {}, {})  # the answer to the request that timed out
        server.script = [never_seen, (500, {}, {"error": {"message": "boom"}}), (503, {}, {})]
        chat, waits = client(server, tmp_path, backoff=0.5, timeout=0.3)
        answer, _ = chat.complete(BODY)
        assert answer["choices"][0]["finish_reason"] == "stop"
        # A timeout (the first request), then 500 and 503: three back-offs, doubling.
        assert len(waits) == 3 and len(server.requests) == 3 + 1
        for attempt, wait in enumerate(waits):
            assert 0.5 * 2**attempt * 0.5 <= wait <= 0.5 * 2**attempt


def test_errors_that_are_not_retried_and_retries_that_run_out_are_one_line(tmp_path):
    with ChatServer().running() as server:
        server.script = [(401, {}, {"error": {"message": "Incorrect API key provided"}})]
        chat, waits = client(server, tmp_path, max_retries=2)
        with pytest.raises(TracktaleError) as error:
            chat.complete(BODY)
        message = str(error.value)
        assert "answered 401 for model m: Incorrect API key provided" in message
        assert "--api-key-env" in message and "\n" not in message and waits == []
        server.script = [(503, {}, {"error": {"message": "overloaded"}})] * 3
        with pytest.raises(TracktaleError, match="answered 503 for model m after 3 tries"):
            chat.complete(BODY)
        assert len(waits) == 2


def test_at_most_concurrency_requests_are_in_flight(tmp_path):
    with ChatServer(hold_until=3).running() as server:
        chat, _ = client(server, tmp_path)
        bodies = [{**BODY, "messages": [{"role": "user", "content": f"q{i}"}]} for i in range(6)]
        answers = chat.complete_many(bodies, concurrency=3)
        assert len(answers) == 6 and server.max_in_flight == 3
        assert chat.sent == 6
        chat.complete_many(bodies, concurrency=3)
        assert chat.sent == 6  # all cached


def test_the_cache_key_covers_the_whole_request(tmp_path):
    with ChatServer().running() as server:
        chat, _ = client(server, tmp_path)
        chat.complete(BODY)
        chat.complete({**BODY, "max_tokens": 5})
        chat.complete({**BODY, "model": "other"})
        chat.complete(BODY)
        assert chat.sent == 3
        entries = [json.loads(p.read_text()) for p in (tmp_path / "cache").rglob("*.json")]
        assert sorted(entry["request"].get("max_tokens", 0) for entry in entries) == [0, 0, 5]


def test_an_endpoint_without_log_probabilities_is_asked_without_them(tmp_path):
    notices = []
    with ChatServer().running() as server:
        server.refuse_logprobs = True
        scorer = OpenAIScorer("m", base_url=server.url, cache_dir=tmp_path, notify=notices.append)
        (generation,) = scorer.generate_detailed([GenerationRequest("hi", max_new_tokens=4)])
        assert generation.text == "box" and generation.logprobs == ()
        assert len(notices) == 1 and "refuses log-probabilities" in notices[0]
        assert "logprobs" not in server.requests[-1]["body"]


def test_stop_strings_cut_the_answer_and_its_tokens():
    answer = {
        "choices": [
            {
                "message": {"content": "OPENED(BOX-1)=True\nStep-5: open"},
                "finish_reason": "length",
                "logprobs": {
                    "content": [
                        {"token": "OPENED(BOX-1)", "logprob": -1.0, "bytes": None},
                        {"token": "=True", "logprob": -0.5, "bytes": None},
                        {"token": "\nStep", "logprob": -2.0, "bytes": None},
                        {"token": "-5: open", "logprob": -2.0, "bytes": None},
                    ]
                },
            }
        ]
    }
    generation = _generation(answer, False, ("\nQuestion:", "\nStep-"))
    assert generation.text == "OPENED(BOX-1)=True"
    assert generation.tokens == ("OPENED(BOX-1)", "=True") and generation.logprobs == (-1.0, -0.5)
    # Cut here at a stop string: the answer ended there, not at its budget.
    assert generation.finish_reason == "stop" and generation.details["from_cache"] is False


@pytest.mark.parametrize(
    ("extra", "expected"),
    [
        (["--task", "implicit"], "--task implicit: the openai backend answers the explicit task"),
        (["--task", "both"], "the openai backend answers the explicit task only"),
        (["--task", "explicit", "--revision", "v1"], "has no revisions"),
        (["--task", "explicit", "--max-memory", "0=1GiB"], "--max-memory: not an option of the"),
        (["--task", "explicit", "--bos", "add"], "--bos add: the openai backend's server"),
    ],
)
def test_what_a_chat_endpoint_cannot_do_is_refused_before_any_request(
    stimulus_dir, tmp_path, capsys, monkeypatch, extra, expected
):
    with ChatServer().running() as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        argv = score_argv(stimulus_dir, "m", tmp_path / "r", "--backend", "openai", *extra)
        code, _, err = run(argv, capsys)
        assert code == 1 and err.count("\n") == 1 and expected in err, err
        assert server.requests == []
