"""OpenAI-compatible completions engines (vLLM, llama-cpp-python): log-probabilities of given text.

``--backend completions --base-url http://127.0.0.1:8000/v1 --model NAME`` scores the implicit,
sequence and explicit tasks through ``POST {base_url}/completions`` (the legacy completions
schema that serving engines keep), the way lm-evaluation-harness scores log-likelihoods against
vLLM:

- **Implicit**: prefix + continuation is sent as one prompt with ``echo: true``,
  ``logprobs: 1``, ``max_tokens: 1`` and temperature 0; the answer lists every prompt token
  with its log-probability and character offset, and the continuation's tokens are found by
  those offsets (:mod:`tracktale.models.echo`), never by tokenizing here.
- **Sequence**: the text alone, likewise; tokens without a log-probability at its start (no
  context) are not scored, as in the HF backend.
- **Explicit**: the plain prompt, greedy (temperature 0), the item's budget and the paradigm's
  stop strings (four are sent; all are applied here). The server has no chat template to offer
  through this endpoint, so prompts are plain text.

**The endpoint is checked before anything is scored** (three small requests, cached like every
other): that it echoes the prompt with the log-probability of every prompt token (llama.cpp's
``llama-server`` gives them for generated tokens only), that a token it generates gets the same
log-probability when it is echoed in a prompt (llama-cpp-python's echo is shifted by one token
for models without a BOS token), whether it adds a BOS token, and whether it takes a list of
prompts in one request. An endpoint that fails is refused with one line.

Prompts go ``prompts_per_request`` to a request where the server takes a list, at most
``concurrency`` requests in flight, with retries, back-off and the on-disk answer cache of
:mod:`tracktale.models.endpoint` (``$TRACKTALE_DATA/cache/completions`` by default). Rows record
``dtype`` and ``device`` as ``server``, ``bos_policy`` as the server applies it (``add`` or
``none``), the served model name (``api_model``), and what the server says of itself (its
version where it has a ``/version``, the model list's ``owned_by`` and ``max_model_len``).
"""

from __future__ import annotations

import os
import platform
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import tracktale
from tracktale.errors import TracktaleError
from tracktale.models.echo import EchoedPrompt, EchoError, echoed_prompt
from tracktale.models.endpoint import (
    EndpointClient,
    EndpointError,
    EndpointGenerationDetails,
    answer_details,
    check_client_settings,
    check_served_model,
)
from tracktale.models.tokens import BOS_POLICIES, cut_at_stop, server_stops
from tracktale.scorer import (
    ChoiceRequest,
    Generation,
    GenerationRequest,
    ModelInfo,
    Scorer,
    SequenceRequest,
    TokenScores,
)
from tracktale.settings import data_dir

MAX_STOP_STRINGS = 4
PROBE_PROMPT = "The cat sat on the mat. The dog sat on the"
"""The alignment check's prompt: ordinary text whose greedy next token is an ordinary word."""
ALIGNMENT_TOLERANCE = (0.2, 0.05)
"""Nats (absolute, relative) by which a generated token's log-probability may differ from the
same token's echoed one: kernels differ between a one-token step and a whole prompt (and in
half precision), but a shifted echo is off by nats."""


@dataclass(frozen=True)
class EndpointShape:
    """What the checks found out about the endpoint.

    Attributes:
        api_model: The model name the server answered with.
        bos: Whether the server puts a BOS token before a prompt.
        bos_token: The BOS token as listed (``None`` where the server does not list it).
        takes_lists: Whether one request may carry several prompts.
        alignment_delta: Generated minus echoed log-probability of the probe's token
            (``None`` where the probe could not be compared).
    """

    api_model: str | None
    bos: bool
    bos_token: str | None
    takes_lists: bool
    alignment_delta: float | None


class CompletionsScorer(Scorer):
    """A model behind an OpenAI-compatible completions endpoint (vLLM, llama-cpp-python).

    Args:
        model_id: The served model's name (what ``--served-model-name`` or the alias says).
        revision: Must be ``None``: a served model has no revisions.
        dtype: Ignored (the server decides; rows record ``server``).
        device: Ignored (the server decides).
        batch_size: Sets the runner's chunk size only.
        bos: ``auto`` takes what the server does; ``add`` and ``none`` refuse a server that
            does otherwise (the engine's tokenizer settings decide, not the request).
        notify: Called with one line when the scorer changes something on its own.
        base_url: API root (``http://127.0.0.1:8000/v1``); ``None``: ``$OPENAI_BASE_URL``.
        api_key_env: The environment variable holding the key, if the server wants one.
        concurrency: Requests in flight at most.
        request_timeout: Seconds to wait for one answer.
        max_retries: Retries after 429, 5xx, timeouts and dropped connections.
        cache_dir: The answer cache; ``None``: ``$TRACKTALE_DATA/cache/completions``.
        prompts_per_request: Prompts sent in one request where the server takes a list.
    """

    generation_details = EndpointGenerationDetails

    name = "completions"

    def __init__(
        self,
        model_id: str,
        *,
        revision: str | None = None,
        dtype: str = "float32",
        device: str = "auto",
        batch_size: int = 16,
        bos: str = "auto",
        notify: Callable[[str], None] | None = None,
        base_url: str | None = None,
        api_key_env: str = "OPENAI_API_KEY",
        concurrency: int = 8,
        request_timeout: float = 120.0,
        max_retries: int = 6,
        cache_dir: str | os.PathLike[str] | None = None,
        prompts_per_request: int = 16,
    ) -> None:
        self.check(model_id, revision)
        check_client_settings(concurrency, request_timeout, max_retries)
        if bos not in BOS_POLICIES:
            raise TracktaleError(f"--bos: {bos!r} is not one of {', '.join(BOS_POLICIES)}")
        if prompts_per_request < 1:
            raise TracktaleError(
                f"--prompts-per-request must be at least 1, got {prompts_per_request}"
            )
        self.base_url = base_url or os.environ.get("OPENAI_BASE_URL") or ""
        if not self.base_url:
            raise TracktaleError(
                "--base-url: the completions backend needs the server's API root "
                "(e.g. http://127.0.0.1:8000/v1)"
            )
        self.model_id, self.batch_size = model_id, batch_size
        self.notify = notify or (lambda message: None)
        self.concurrency, self.prompts_per_request = concurrency, prompts_per_request
        self.client = EndpointClient(
            self.base_url,
            "completions",
            os.environ.get(api_key_env) or None,
            timeout=request_timeout,
            max_retries=max_retries,
            cache_dir=Path(cache_dir) if cache_dir else data_dir() / "cache" / "completions",
            label="completions backend",
        )
        self.shape = self._check_endpoint()
        _check_bos(bos, self.shape, self.base_url, model_id)
        self.info = ModelInfo(
            model_id=model_id,
            revision=None,
            resolved_sha=None,
            backend=self.name,
            dtype="server",
            device="server",
            bos_policy="add" if self.shape.bos else "none",
            details=self._details(bos),
        )

    @staticmethod
    def check(model_id: str, revision: str | None) -> None:
        """Check what can be checked without a request: a served model has no revisions.

        Raises:
            TracktaleError: For a revision, or an empty model name.
        """
        check_served_model(
            model_id, revision, "completions", "serve the revision you want, name it in --model"
        )

    def _details(self, bos: str) -> dict[str, Any]:
        import httpx

        server = _server_facts(self.client, self.model_id)
        return {
            "has_chat_template": False,  # the completions endpoint takes text, not chat turns
            "bos_requested": bos,
            "bos_token": self.shape.bos_token,
            "base_url": self.base_url,
            "api_model": self.shape.api_model,
            "prompt_lists": self.shape.takes_lists,
            "echo_alignment_delta": self.shape.alignment_delta,
            **server,
            "httpx_version": httpx.__version__,
            "tracktale_version": tracktale.__version__,
            "python_version": platform.python_version(),
        }

    def conditional_score(self, requests: Sequence[ChoiceRequest]) -> list[list[TokenScores]]:
        """Per-token log-probabilities of each continuation, found by character offsets."""
        prompts, boundaries = [], []
        for request in requests:
            for continuation in request.continuations:
                if not continuation:
                    where = request.prefix[-40:]
                    raise TracktaleError(f"empty continuation after prefix {where!r}")
                prompts.append(request.prefix + continuation)
                boundaries.append(len(request.prefix))
        echoed = self._echo(prompts)
        spans = iter(
            _continuation(prompt, boundary, tokens)
            for prompt, boundary, tokens in zip(prompts, boundaries, echoed, strict=True)
        )
        return [[next(spans) for _ in request.continuations] for request in requests]

    def sequence_score(self, requests: Sequence[SequenceRequest]) -> list[TokenScores]:
        """Per-token log-probabilities of whole texts, with each token's character offset."""
        for request in requests:
            if not request.text:
                raise TracktaleError("cannot score the log-probability of an empty text")
        results = []
        for echoed in self._echo([request.text for request in requests]):
            tokens = list(echoed.tokens)
            # Tokens without context (no BOS before them) are not scored, as in the HF backend.
            while tokens and tokens[0].logprob is None:
                tokens.pop(0)
            results.append(_token_scores(tokens, offsets=True))
        return results

    def generate(self, requests: Sequence[GenerationRequest]) -> list[str]:
        """Greedy completions (the text only)."""
        return [generation.text for generation in self.generate_detailed(requests)]

    def generate_detailed(self, requests: Sequence[GenerationRequest]) -> list[Generation]:
        """Greedy completions of the plain prompts, with the generated tokens' log-probabilities."""
        for request in requests:
            if request.messages is not None:
                raise TracktaleError(
                    "the completions backend sends plain prompts: a completions endpoint has no "
                    "chat template to render chat turns with (use --prompt-format plain or auto)"
                )
        groups: dict[tuple, list[int]] = {}
        for index, request in enumerate(requests):
            groups.setdefault((request.max_new_tokens, request.stop), []).append(index)
        bodies, owners = [], []
        for (budget, stops), indices in groups.items():
            settings = {"max_tokens": budget, "logprobs": 1, "echo": False}
            if server_stops(stops, MAX_STOP_STRINGS):
                settings["stop"] = server_stops(stops, MAX_STOP_STRINGS)
            for chunk in self._chunks(indices):
                bodies.append(self._body([requests[i].prompt for i in chunk], **settings))
                owners.append(chunk)
        results: list[Generation | None] = [None] * len(requests)
        for chunk, (answer, cached) in zip(owners, self._send(bodies), strict=True):
            for index, choice in zip(chunk, _choices(answer, len(chunk)), strict=True):
                results[index] = _generation(choice, answer, cached, requests[index].stop)
        return [result for result in results if result is not None]

    def close(self) -> None:
        """Close the connection pool."""
        self.client.close()

    def _echo(self, prompts: Sequence[str]) -> list[EchoedPrompt]:
        """Each prompt's tokens as the server echoes them (one request per chunk of prompts)."""
        chunks = list(self._chunks(range(len(prompts))))
        bodies = [self._body([prompts[i] for i in chunk]) for chunk in chunks]
        echoed: list[EchoedPrompt | None] = [None] * len(prompts)
        for chunk, (answer, _) in zip(chunks, self._send(bodies), strict=True):
            for index, choice in zip(chunk, _choices(answer, len(chunk)), strict=True):
                echoed[index] = self._placed(choice, prompts[index])
        return [tokens for tokens in echoed if tokens is not None]

    def _chunks(self, indices: Sequence[int]):
        size = self.prompts_per_request if self.shape.takes_lists else 1
        indices = list(indices)
        for start in range(0, len(indices), size):
            yield indices[start : start + size]

    def _body(self, prompts: Sequence[str], **settings: Any) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self.model_id,
            "prompt": list(prompts) if len(prompts) > 1 else prompts[0],
            "max_tokens": 1,  # llama-cpp-python reads 0 as "up to the context length"
            "temperature": 0,
            "logprobs": 1,
            "echo": True,
        }
        body.update(settings)
        return body

    def _send(self, bodies: Sequence[Mapping[str, Any]]) -> list[tuple[dict[str, Any], bool]]:
        return self.client.complete_many(bodies, self.concurrency)

    def _placed(self, choice: Mapping[str, Any], prompt: str) -> EchoedPrompt:
        try:
            return echoed_prompt(choice, prompt)
        except EchoError as error:
            raise TracktaleError(_refusal(self.client.url, self.model_id, str(error))) from None

    def _check_endpoint(self) -> EndpointShape:
        """The first requests: echo, prompt log-probabilities, alignment, BOS, lists."""
        generated, answer = self._probe_generation()
        probe = PROBE_PROMPT + generated.text
        echo_answer, _ = self.client.complete(self._body([probe]))
        (choice,) = _choices(echo_answer, 1)
        echoed = self._placed(choice, probe)
        delta = _alignment_delta(generated, echoed, len(PROBE_PROMPT))
        if delta is not None and abs(delta) > _tolerance(generated.logprobs[0]):
            raise TracktaleError(
                f"completions backend: {self.client.url} gives the token "
                f"{generated.text!r} log-probability {generated.logprobs[0]:.3f} when it "
                f"generates it after {PROBE_PROMPT!r} and {generated.logprobs[0] - delta:.3f} "
                f"when it echoes it in the prompt, for model {self.model_id}: its prompt "
                "log-probabilities are misaligned (llama-cpp-python's are shifted by one token "
                "for a model without a BOS token: start its server with --kv_overrides "
                "tokenizer.ggml.add_bos_token=bool:true)"
            )
        if delta is None:
            self.notify(
                f"{self.client.url}: the alignment of echoed log-probabilities could not be "
                f"checked (the probe's next token {generated.text!r} is not one echoed token)"
            )
        hidden = _hidden_tokens(echo_answer, echoed)
        bos_token = echoed.leading[0].text if echoed.leading else None
        return EndpointShape(
            api_model=answer.get("model"),
            bos=bool(echoed.leading) or hidden > 0,
            bos_token=bos_token,
            takes_lists=self._takes_lists(probe) if self.prompts_per_request > 1 else False,
            alignment_delta=delta,
        )

    def _probe_generation(self) -> tuple[Generation, dict[str, Any]]:
        body = self._body([PROBE_PROMPT], echo=False)
        try:
            answer, cached = self.client.complete(body)
        except EndpointError as error:
            if error.status in (400, 422) and "logprob" in str(error).lower():
                raise TracktaleError(
                    _refusal(self.client.url, self.model_id, "it refuses logprobs")
                ) from None
            raise
        (choice,) = _choices(answer, 1)
        generated = _generation(choice, answer, cached, ())
        if not generated.logprobs or not generated.text:
            raise TracktaleError(
                _refusal(self.client.url, self.model_id, "it returns no token log-probabilities")
            )
        return generated, answer

    def _takes_lists(self, probe: str) -> bool:
        """Whether two prompts in one request come back as two echoed choices (no retries)."""
        body = self._body([PROBE_PROMPT, probe])
        try:
            answer, _ = self.client.complete(body, retries=0)
            first, second = _choices(answer, 2)
            echoed_prompt(first, PROBE_PROMPT), echoed_prompt(second, probe)
            return True
        except TracktaleError:
            self.notify(
                f"{self.client.url} does not take a list of prompts in one request; sending "
                "one prompt per request"
            )
            return False


def _refusal(url: str, model: str, reason: str) -> str:
    return (
        f"completions backend: {url} cannot score given text for model {model}: {reason} (it "
        "must echo the prompt with every prompt token's log-probability, as vLLM and "
        "llama-cpp-python's server with logits_all do; llama.cpp's llama-server does not)"
    )


def _tolerance(logprob: float) -> float:
    absolute, relative = ALIGNMENT_TOLERANCE
    return absolute + relative * abs(logprob)


def _alignment_delta(generated: Generation, echoed: EchoedPrompt, start: int) -> float | None:
    """Generated minus echoed log-probability of the probe's token (``None``: not comparable)."""
    tokens, merged = echoed.span(start)
    if merged or len(tokens) != 1 or tokens[0].text != generated.tokens[0]:
        return None
    if tokens[0].logprob is None:
        return None
    return generated.logprobs[0] - tokens[0].logprob


def _hidden_tokens(answer: Mapping[str, Any], echoed: EchoedPrompt) -> int:
    """Prompt tokens the server counted but did not list (llama-cpp-python's BOS)."""
    usage = answer.get("usage") or {}
    prompt_tokens = usage.get("prompt_tokens")
    if not isinstance(prompt_tokens, int):
        return 0
    return max(0, prompt_tokens - len(echoed.tokens) - len(echoed.leading))


def _check_bos(policy: str, shape: EndpointShape, url: str, model: str) -> None:
    if policy == "auto" or (policy == "add") == shape.bos:
        return
    does = "puts a BOS token before every prompt" if shape.bos else "adds no BOS token"
    raise TracktaleError(
        f"--bos {policy}: the server at {url} {does} for model {model}, and the engine's "
        "tokenizer settings decide that, not the request (use --bos auto, or restart the "
        "server with the BOS setting you want)"
    )


def _choices(answer: Mapping[str, Any], expected: int) -> list[Mapping[str, Any]]:
    choices = answer.get("choices") or []
    if len(choices) != expected:
        raise TracktaleError(
            f"completions backend: asked for {expected} completions, the server answered with "
            f"{len(choices)}"
        )
    return sorted(choices, key=lambda choice: choice.get("index", 0))


def _continuation(prompt: str, boundary: int, echoed: EchoedPrompt) -> TokenScores:
    tokens, merged = echoed.span(boundary)
    if not tokens:
        raise TracktaleError(f"the server listed no token of the continuation of {prompt!r}")
    if any(token.logprob is None for token in tokens):
        raise TracktaleError(
            f"the first token of {prompt!r} has no context to be scored against (an empty "
            "prefix on a server that adds no BOS token)"
        )
    return _token_scores(tokens, merged=merged)


def _token_scores(tokens, *, merged: bool = False, offsets: bool = False) -> TokenScores:
    return TokenScores(
        tokens=tuple(token.text for token in tokens),
        logprobs=tuple(float(token.logprob) for token in tokens),
        offsets=tuple(token.start for token in tokens) if offsets else (),
        boundary_merged=merged,
    )


def _generation(
    choice: Mapping[str, Any], answer: Mapping[str, Any], cached: bool, stops: Sequence[str]
) -> Generation:
    full = choice.get("text") or ""
    text = cut_at_stop(full, stops)
    logprobs = choice.get("logprobs") or {}
    strings = logprobs.get("tokens") or []
    values = logprobs.get("token_logprobs") or []
    tokens, scores, consumed = [], [], 0
    for string, value in zip(strings, values, strict=False):
        if consumed >= len(text) or value is None:
            break
        consumed += len(string)
        tokens.append(str(string))
        scores.append(float(value))
    details = answer_details(answer, cached)
    del details["api_model"]  # the same for every row: the scorer's info holds it
    return Generation(
        text=text,
        tokens=tuple(tokens),
        logprobs=tuple(scores),
        # A stop string applied here (not sent to the server) ended the answer, not its budget.
        finish_reason="stop" if text != full else choice.get("finish_reason"),
        details=details,
    )


def _server_facts(client: EndpointClient, model_id: str) -> dict[str, Any]:
    """What the server says of itself: ``/models`` (owner, context length), ``/version``."""
    facts: dict[str, Any] = {"server_version": None, "server_owned_by": None}
    models = client.get_json(f"{client.base_url}/models")
    if models is not None:
        answer, headers = models
        facts["server_software"] = headers.get("server")
        entries = answer.get("data") if isinstance(answer, dict) else None
        for entry in entries or []:
            if isinstance(entry, dict) and entry.get("id") == model_id:
                facts["server_owned_by"] = entry.get("owned_by")
                facts["server_max_model_len"] = entry.get("max_model_len")
    # vLLM answers GET /version beside /v1, not under it.
    root = client.base_url.removesuffix("/v1")
    version = client.get_json(f"{root}/version")
    if version is not None and isinstance(version[0], dict):
        facts["server_version"] = version[0].get("version")
    return facts
