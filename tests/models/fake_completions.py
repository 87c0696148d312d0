"""A completions engine started here (no network), in the ways real engines answer.

It follows the legacy completions schema: ``POST /v1/completions`` with ``model``, ``prompt``
(a string or a list), ``max_tokens``, ``temperature``, ``logprobs``, ``echo``, ``stop``; each
choice has ``text``, ``index``, ``finish_reason`` and ``logprobs`` (``tokens``,
``token_logprobs``, ``text_offset``, ``top_logprobs``); ``usage`` counts the prompt's tokens.

Its "model" tokenizes into words with their leading space (or, ``chunks``, into three-character
pieces that cross word boundaries) and gives token ``t`` after ``n`` earlier tokens the
log-probability :func:`logprob`; it always generates " mat". Modes, as real engines do:

- ``vllm``: lists a BOS token ``<s>`` first (logprob ``None``), counting ``text_offset`` over
  the token strings, so every offset is three characters past the echoed text's.
- ``llamacpp``: adds a BOS it does not list (``usage`` counts it), the first listed token's
  logprob ``None``.
- ``nobos``: no BOS; the first token has no logprob.
- ``shifted``: like llama-cpp-python for a model without BOS: each echoed token gets the
  log-probability of the position after it.
- ``ignore_echo``: answers as if ``echo`` were false.
- ``generated_only``: echoes the text but gives log-probabilities for generated tokens only
  (llama.cpp's llama-server).
"""

from __future__ import annotations

import http.server
import json
import re
import threading
from contextlib import contextmanager

GENERATED = " mat"
BOS = "<s>"


def logprob(n_before: int, token: str) -> float:
    """The fake model: depends on the token and on how many tokens come before it."""
    return -0.5 * (1 + (len(token) + 3 * n_before) % 7)


def tokenize(text: str, chunks: bool = False) -> list[str]:
    if chunks:
        return [text[i : i + 3] for i in range(0, len(text), 3)]
    return re.findall(r"\s*\S+|\s+$", text)


class FakeEngine:
    def __init__(self, mode="vllm", *, chunks=False, lists=True, hold_until=None):
        self.mode, self.chunks, self.lists = mode, chunks, lists
        self.requests, self.script, self.gets = [], [], []
        self.in_flight = self.max_in_flight = 0
        self.hold_until = hold_until
        self.condition = threading.Condition()
        engine = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                engine.gets.append(self.path)
                if self.path == "/v1/models":
                    answer = {"data": [{"id": "m", "owned_by": "fake", "max_model_len": 2048}]}
                    self._send(200, {}, answer)
                elif self.path == "/version" and engine.mode == "vllm":
                    self._send(200, {}, {"version": "0.0-fake"})
                else:
                    self._send(404, {}, {"detail": "Not Found"})

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                engine.requests.append({"path": self.path, "body": body})
                self._send(*engine.respond(body))

            def _send(self, status, headers, answer):
                data = json.dumps(answer).encode()
                self.send_response(status)
                for name, value in {**headers, "Content-Type": "application/json"}.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    @property
    def scoring_requests(self):
        """Requests after the endpoint check (its three requests)."""
        return self.requests[3:]

    def respond(self, body):
        with self.condition:
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            self.condition.notify_all()
            if self.hold_until:
                self.condition.wait_for(lambda: self.max_in_flight >= self.hold_until, timeout=5)
            scripted = self.script.pop(0) if self.script else None
        try:
            if scripted:
                return scripted
            prompts = body["prompt"] if isinstance(body["prompt"], list) else [body["prompt"]]
            if len(prompts) > 1 and not self.lists:
                return 500, {}, {"error": {"message": "AssertionError", "type": "internal"}}
            choices = [self.choice(prompt, body, index) for index, prompt in enumerate(prompts)]
            n_prompt = sum(len(self.prompt_ids(prompt)) for prompt in prompts)
            usage = {"prompt_tokens": n_prompt, "completion_tokens": len(prompts)}
            answer = {"model": body["model"], "choices": choices, "usage": usage}
            return 200, {}, answer
        finally:
            with self.condition:
                self.in_flight -= 1

    def prompt_ids(self, prompt):
        """The prompt's tokens as the engine runs them (with its BOS)."""
        bos = [BOS] if self.mode in ("vllm", "llamacpp") else []
        return bos + tokenize(prompt, self.chunks)

    def choice(self, prompt, body, index):
        run = self.prompt_ids(prompt)
        budget = max(1, body.get("max_tokens") or 1)
        generated = [GENERATED] * budget
        text = "".join(generated)
        stops = [s for s in body.get("stop") or [] if s in text]
        if stops:
            text = text[: min(text.find(s) for s in stops)]
        echo = body.get("echo") and self.mode != "ignore_echo"
        gen_values = [logprob(len(run) + i, token) for i, token in enumerate(generated)]
        if echo:
            listed, values = self.echoed(run)
            if self.mode == "generated_only":
                listed, values = [], []
            listed, values = listed + generated, values + gen_values
            start = 0
            text = prompt + text
        else:
            listed, values, start = generated, gen_values, len(prompt)
        offsets = []
        for token in listed:
            offsets.append(start)
            start += len(token)
        logprobs = {
            "tokens": listed,
            "token_logprobs": values,
            "text_offset": offsets,
            "top_logprobs": [
                None if v is None else {t: v} for t, v in zip(listed, values, strict=True)
            ],
        }
        if body.get("logprobs") is None:
            logprobs = None
        return {"index": index, "text": text, "logprobs": logprobs, "finish_reason": "length"}

    def echoed(self, run):
        values = [None] + [logprob(i, token) for i, token in enumerate(run) if i > 0]
        if self.mode == "shifted":
            values = [None] + [logprob(i + 1, token) for i, token in enumerate(run) if i > 0]
        if self.mode == "llamacpp":  # its BOS is not listed, and the first token is nulled
            return run[1:], [None] + values[2:]
        return run, values

    @contextmanager
    def running(self):
        thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        thread.start()
        try:
            yield self
        finally:
            self.httpd.shutdown()
            self.httpd.server_close()


def expected_logprob(prefix, continuation, mode="vllm"):
    """What a correct engine gives a continuation (the fake model's sum over its tokens)."""
    bos = 1 if mode in ("vllm", "llamacpp") else 0
    before = bos + len(tokenize(prefix))
    tokens = tokenize(prefix + continuation)[len(tokenize(prefix)) :]
    return sum(logprob(before + i, token) for i, token in enumerate(tokens))
