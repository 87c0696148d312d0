"""OpenAI-compatible chat endpoints: hosted models, or a vLLM server you run, for generation.

``--backend openai --model gpt-4o-2024-08-06`` sends each explicit-task prompt to
``POST {base_url}/chat/completions`` (the public chat-completions schema): the item's chat turns
(``item.messages``), or its plain prompt as one user turn, at temperature 0 (or the run's
``--temperature``, each sample with its own ``seed``) with the item's generation budget and the
paradigm's stop strings. The answer is cut at the first stop string
here too (an endpoint takes at most four), and the paradigm scores it as for any backend.

- **Where**: ``base_url`` (else ``$OPENAI_BASE_URL``, else ``https://api.openai.com/v1``); the
  key from the environment variable ``api_key_env`` names (``OPENAI_API_KEY``), never from the
  command line; no key, no ``Authorization`` header (a local vLLM server).
- **Politeness and a cache** (:mod:`tracktale.models.endpoint`, shared with the completions
  backend): at most ``concurrency`` requests in flight; 429 and 5xx answers, timeouts and
  dropped connections retried ``max_retries`` times with back-off, honouring ``Retry-After``;
  every answer kept on disk (``$TRACKTALE_DATA/cache/openai`` by default), keyed on the endpoint
  and the whole request body (model, messages, budget, stop strings, temperature,
  log-probability settings), so a request seen before is not sent again.
- **Log-probabilities**: the request asks for ``logprobs`` (and ``top_logprobs`` alternatives);
  where the endpoint returns them, each generated token's log-probability is stored
  (``output_logprob``: the answer's log-probability) with the first token's alternatives. An
  endpoint that refuses log-probabilities is asked again without them, once, and the run says so.
- **Generation only**: the implicit and sequence tasks need the log-probability of given text,
  which a chat endpoint does not give; they are refused before anything is sent.

Rows record ``dtype``, ``device`` and ``bos_policy`` as ``server`` (the endpoint decides), the
served model name (``api_model``), its ``system_fingerprint`` and the token usage.
"""

from __future__ import annotations

import os
import platform
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import tracktale
from tracktale.errors import TracktaleError
from tracktale.models.endpoint import (
    ChatGenerationDetails,
    EndpointClient,
    EndpointError,
    answer_details,
    check_client_settings,
    check_served_model,
)
from tracktale.models.tokens import cut_at_stop, server_stops
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

DEFAULT_BASE_URL = "https://api.openai.com/v1"
MAX_STOP_STRINGS = 4
"""The chat-completions API takes at most four stop strings; the rest are cut here."""
MAX_TOKENS_FIELDS = ("max_tokens", "max_completion_tokens")


class OpenAIScorer(Scorer):
    """A model behind an OpenAI-compatible chat-completions endpoint (generation only).

    Args:
        model_id: The endpoint's model name (``gpt-4o-2024-08-06``, or what vLLM serves).
        revision: Must be ``None``: an endpoint's model has no revisions.
        dtype: Ignored (the server decides; rows record ``server``).
        device: Ignored (the server decides).
        batch_size: Sets the runner's chunk size only (requests are sent one by one).
        bos: Only ``auto``: the server applies its chat template.
        notify: Called with one line when the scorer changes something on its own.
        base_url: API root; ``None``: ``$OPENAI_BASE_URL``, else the OpenAI API.
        api_key_env: The environment variable holding the key.
        concurrency: Requests in flight at most.
        request_timeout: Seconds to wait for one answer.
        max_retries: Retries after 429, 5xx, timeouts and dropped connections.
        cache_dir: The answer cache; ``None``: ``$TRACKTALE_DATA/cache/openai``.
        logprobs: Ask for the generated tokens' log-probabilities.
        top_logprobs: Alternatives per token to ask for (0-20).
        max_tokens_field: ``max_tokens`` or ``max_completion_tokens`` (newer OpenAI models).
        seed: Sent as ``seed`` when given (some endpoints make greedy decoding reproducible).
    """

    generation_details = ChatGenerationDetails

    name = "openai"

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
        logprobs: bool = True,
        top_logprobs: int = 5,
        max_tokens_field: str = "max_tokens",
        seed: int | None = None,
    ) -> None:
        self.check(model_id, revision)
        _check_settings(bos, concurrency, request_timeout, max_retries, top_logprobs)
        if max_tokens_field not in MAX_TOKENS_FIELDS:
            raise TracktaleError(
                f"--max-tokens-field: {max_tokens_field!r} is not one of "
                f"{', '.join(MAX_TOKENS_FIELDS)}"
            )
        self.batch_size = batch_size
        self.notify = notify or (lambda message: None)
        self.base_url = base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL
        self.concurrency = concurrency
        self.logprobs, self.top_logprobs = logprobs, top_logprobs
        self.max_tokens_field, self.seed = max_tokens_field, seed
        self.client = EndpointClient(
            self.base_url,
            "chat/completions",
            os.environ.get(api_key_env) or None,
            timeout=request_timeout,
            max_retries=max_retries,
            cache_dir=Path(cache_dir) if cache_dir else data_dir() / "cache" / "openai",
        )
        self.info = ModelInfo(
            model_id=model_id,
            revision=None,
            resolved_sha=None,
            backend=self.name,
            dtype="server",
            device="server",
            bos_policy="server",
            details=self._details(bos),
        )

    @staticmethod
    def check(model_id: str, revision: str | None) -> None:
        """Check what can be checked without a request: an endpoint's model has no revisions.

        Raises:
            TracktaleError: For a revision, or an empty model name.
        """
        check_served_model(
            model_id, revision, "openai", "name the snapshot in --model, e.g. gpt-4o-2024-08-06"
        )

    def _details(self, bos: str) -> dict[str, Any]:
        import httpx

        return {
            "has_chat_template": True,  # the server applies the model's chat template
            "bos_requested": bos,
            "base_url": self.base_url,
            "api_logprobs_requested": self.logprobs,
            "httpx_version": httpx.__version__,
            "tracktale_version": tracktale.__version__,
            "python_version": platform.python_version(),
        }

    def conditional_score(self, requests: Sequence[ChoiceRequest]) -> list[list[TokenScores]]:
        """Refused: a chat endpoint cannot score given continuations."""
        raise TracktaleError(_NO_SCORING)

    def sequence_score(self, requests: Sequence[SequenceRequest]) -> list[TokenScores]:
        """Refused: a chat endpoint cannot score a given text."""
        raise TracktaleError(_NO_SCORING)

    def generate(self, requests: Sequence[GenerationRequest]) -> list[str]:
        """Greedy completions (the text only)."""
        return [generation.text for generation in self.generate_detailed(requests)]

    def generate_detailed(self, requests: Sequence[GenerationRequest]) -> list[Generation]:
        """Greedy completions with the tokens' log-probabilities where the endpoint gives them."""
        try:
            answers = self.client.complete_many([self._body(r) for r in requests], self.concurrency)
        except EndpointError as error:
            if not (self.logprobs and error.status == 400 and "logprob" in str(error).lower()):
                raise
            self.logprobs = False
            self.notify(
                f"{self.base_url} refuses log-probabilities for {self.info.model_id}; "
                "asking without them (no output_logprob column)"
            )
            answers = self.client.complete_many([self._body(r) for r in requests], self.concurrency)
        return [
            _generation(answer, cached, request.stop)
            for request, (answer, cached) in zip(requests, answers, strict=True)
        ]

    def _body(self, request: GenerationRequest) -> dict[str, Any]:
        messages = (
            [dict(message) for message in request.messages]
            if request.messages is not None
            else [{"role": "user", "content": request.prompt}]
        )
        body: dict[str, Any] = {
            "model": self.info.model_id,
            "messages": messages,
            # An int 0 for greedy requests, so bodies (and cache keys) stay what they were.
            "temperature": request.temperature or 0,
            "n": 1,
            self.max_tokens_field: request.max_new_tokens,
        }
        if server_stops(request.stop, MAX_STOP_STRINGS):
            body["stop"] = server_stops(request.stop, MAX_STOP_STRINGS)
        if self.logprobs:
            body["logprobs"] = True
            if self.top_logprobs:
                body["top_logprobs"] = self.top_logprobs
        seed = request.seed if request.seed is not None else self.seed
        if seed is not None:
            body["seed"] = seed
        return body

    def close(self) -> None:
        """Close the connection pool."""
        self.client.close()


_NO_SCORING = (
    "the openai backend answers the explicit task only: a chat endpoint generates text but "
    "cannot score given continuations or texts (use the hf or completions backend for "
    "log-probabilities)"
)


def _check_settings(
    bos: str, concurrency: int, timeout: float, retries: int, top_logprobs: int
) -> None:
    if bos != "auto":
        raise TracktaleError(
            f"--bos {bos}: the openai backend's server applies the chat template (use auto)"
        )
    check_client_settings(concurrency, timeout, retries)
    if not 0 <= top_logprobs <= 20:
        raise TracktaleError(f"--top-logprobs must be between 0 and 20, got {top_logprobs}")


def _generation(answer: Mapping[str, Any], cached: bool, stops: Sequence[str]) -> Generation:
    choice = answer["choices"][0]
    message = choice.get("message") or {}
    full = message.get("content") or ""
    text = cut_at_stop(full, stops)
    entries = (choice.get("logprobs") or {}).get("content") or []
    tokens, logprobs = _tokens_within(entries, text)
    details = answer_details(answer, cached)
    if entries and entries[0].get("top_logprobs"):
        details["first_token_top_logprobs"] = {
            alternative["token"]: alternative["logprob"]
            for alternative in entries[0]["top_logprobs"]
        }
    return Generation(
        text=text,
        tokens=tokens,
        logprobs=logprobs,
        # A stop string applied here (not sent to the server) ended the answer, not its budget.
        finish_reason="stop" if text != full else choice.get("finish_reason"),
        details=details,
    )


def _tokens_within(
    entries: Sequence[Mapping[str, Any]], text: str
) -> tuple[tuple[str, ...], tuple[float, ...]]:
    """The reported tokens that start within ``text`` (the answer after the stop-string cut)."""
    limit = len(text.encode("utf-8"))
    tokens, logprobs, consumed = [], [], 0
    for entry in entries:
        if consumed >= limit:
            break
        raw = entry.get("bytes")
        # ``bytes`` is exact where a character spans several tokens; ``token`` elsewhere.
        consumed += len(raw) if raw is not None else len(str(entry["token"]).encode("utf-8"))
        tokens.append(str(entry["token"]))
        logprobs.append(float(entry["logprob"]))
    return tuple(tokens), tuple(logprobs)
