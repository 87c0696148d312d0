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
- **Politeness**: at most ``concurrency`` requests in flight; 429 and 5xx answers, timeouts and
  dropped connections are retried ``max_retries`` times with exponential back-off (1, 2, 4, ...
  seconds, jittered, at most a minute), waiting what ``Retry-After`` (or ``retry-after-ms``) asks
  for where the server says.
- **A re-run costs nothing**: every answer is kept in an on-disk cache
  (``$TRACKTALE_DATA/cache/openai`` by default), one file per request, keyed on the endpoint and
  the whole request body (model, messages, budget, stop strings, temperature, log-probability
  settings); a request seen before is not sent again. Files are written atomically.
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

import concurrent.futures
import email.utils
import hashlib
import json
import os
import platform
import random
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import tracktale
from tracktale.atomic import atomic_write_text
from tracktale.errors import TracktaleError
from tracktale.item import canonical_json
from tracktale.models.tokens import cut_at_stop
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
_RETRY_STATUSES = frozenset({408, 409, 429})
_MAX_WAIT = 600.0


class EndpointError(TracktaleError):
    """An endpoint's answer that is not retried, or retries that ran out.

    Attributes:
        status: The HTTP status (``None`` when the endpoint could not be reached).
    """

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class ChatClient:
    """POSTs chat-completion request bodies: concurrency, retries with back-off, a cache.

    Args:
        base_url: The API root (``https://api.openai.com/v1``, ``http://localhost:8000/v1``).
        api_key: Sent as a bearer token when given.
        timeout: Seconds to wait for one answer.
        max_retries: Retries of one request after a 429, a 5xx, a timeout or a dropped connection.
        cache_dir: Folder of cached answers; ``None``: no cache.
        backoff: First back-off in seconds (doubled on every retry, at most ``max_backoff``).
        max_backoff: Longest back-off without a ``Retry-After``.
    """

    def __init__(
        self,
        base_url: str,
        api_key: str | None = None,
        *,
        timeout: float = 120.0,
        max_retries: int = 6,
        cache_dir: str | os.PathLike[str] | None = None,
        backoff: float = 1.0,
        max_backoff: float = 60.0,
    ) -> None:
        import httpx

        self.url = base_url.rstrip("/") + "/chat/completions"
        self.max_retries = max_retries
        self.cache_dir = None if cache_dir is None else Path(cache_dir)
        self.backoff, self.max_backoff = backoff, max_backoff
        self.sleep: Callable[[float], None] = time.sleep
        """How the client waits between retries (tests replace it to record the waits)."""
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._http = httpx.Client(headers=headers, timeout=timeout)
        self.sent = 0
        """Requests sent over the network (cached answers are not sent)."""
        self._lock = threading.Lock()

    def complete_many(
        self, bodies: Sequence[Mapping[str, Any]], concurrency: int
    ) -> list[tuple[dict[str, Any], bool]]:
        """Answers to ``bodies`` in order, at most ``concurrency`` requests in flight.

        Returns:
            Each answer's JSON and whether it came from the cache.

        Raises:
            TracktaleError: For the first request that failed for good (the others finish).
        """
        if len(bodies) <= 1 or concurrency <= 1:
            return [self.complete(body) for body in bodies]
        with concurrent.futures.ThreadPoolExecutor(min(concurrency, len(bodies))) as pool:
            futures = [pool.submit(self.complete, body) for body in bodies]
            return [future.result() for future in futures]

    def complete(self, body: Mapping[str, Any]) -> tuple[dict[str, Any], bool]:
        """The answer to one request body, from the cache when it was asked before.

        Raises:
            TracktaleError: For an answer that is not retried (400, 401, 404, ...) or retries
                that ran out.
        """
        key = hashlib.sha256(canonical_json({"url": self.url, "body": body}).encode()).hexdigest()
        cached = self._cached(key)
        if cached is not None:
            return cached, True
        answer = self._post(body)
        if self.cache_dir is not None:
            path = self.cache_dir / key[:2] / f"{key}.json"
            path.parent.mkdir(parents=True, exist_ok=True)
            record = {"url": self.url, "request": body, "response": answer}
            atomic_write_text(path, json.dumps(record, ensure_ascii=False, sort_keys=True))
        return answer, False

    def _cached(self, key: str) -> dict[str, Any] | None:
        if self.cache_dir is None:
            return None
        path = self.cache_dir / key[:2] / f"{key}.json"
        try:
            return json.loads(path.read_text(encoding="utf-8"))["response"]
        except FileNotFoundError:
            return None
        except (OSError, ValueError, KeyError):
            return None  # a damaged entry is asked again and rewritten

    def _post(self, body: Mapping[str, Any]) -> dict[str, Any]:
        import httpx

        model = body.get("model")
        for attempt in range(self.max_retries + 1):
            last_try = attempt == self.max_retries
            with self._lock:
                self.sent += 1
            try:
                response = self._http.post(self.url, json=dict(body))
            except httpx.TransportError as error:
                if last_try:
                    raise EndpointError(
                        f"openai backend: cannot reach {self.url} for model {model} after "
                        f"{attempt + 1} tries ({type(error).__name__}: {error})"
                    ) from None
                self.sleep(self._delay(attempt, None))
                continue
            if response.status_code < 300:
                return _json_answer(response, self.url)
            if not _retryable(response.status_code) or last_try:
                raise EndpointError(
                    _http_error(response, self.url, model, attempt + 1), response.status_code
                )
            self.sleep(self._delay(attempt, response.headers))
        raise AssertionError("unreachable")  # the last try returns or raises

    def _delay(self, attempt: int, headers: Mapping[str, str] | None) -> float:
        asked = _retry_after(headers) if headers is not None else None
        if asked is not None:
            return min(asked, _MAX_WAIT)
        # Jitter spreads the retries of concurrent requests that failed together.
        return min(self.max_backoff, self.backoff * 2**attempt) * random.uniform(0.5, 1.0)

    def close(self) -> None:
        """Close the connection pool."""
        self._http.close()


def _retryable(status: int) -> bool:
    return status in _RETRY_STATUSES or status >= 500


def _retry_after(headers: Mapping[str, str]) -> float | None:
    """Seconds the server asks to wait: ``retry-after-ms``, or ``Retry-After`` (seconds or date)."""
    millis = headers.get("retry-after-ms")
    if millis is not None:
        try:
            return max(0.0, float(millis) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def _json_answer(response: Any, url: str) -> dict[str, Any]:
    try:
        answer = response.json()
    except ValueError:
        raise TracktaleError(f"openai backend: {url} answered with something not JSON") from None
    if not isinstance(answer, dict) or not answer.get("choices"):
        raise TracktaleError(f"openai backend: {url} answered without choices: {str(answer)[:200]}")
    return answer


def _http_error(response: Any, url: str, model: Any, tries: int) -> str:
    try:
        detail = response.json()["error"]["message"]
    except (ValueError, KeyError, TypeError):
        detail = response.text.strip()[:200] or response.reason_phrase
    detail = " ".join(str(detail).split())
    hint = {
        401: " (check the key in the variable --api-key-env names)",
        403: " (the key may lack access to this model)",
        404: " (check --model and --base-url)",
        429: " (rate limited every time: lower --concurrency or try later)",
    }.get(response.status_code, "")
    times = f" after {tries} tries" if tries > 1 else ""
    return (
        f"openai backend: {url} answered {response.status_code} for model {model}{times}: "
        f"{detail}{hint}"
    )


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
        self.client = ChatClient(
            self.base_url,
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
        if not model_id.strip():
            raise TracktaleError("--model: the openai backend needs the endpoint's model name")
        if revision is not None:
            raise TracktaleError(
                f"--revision {revision}: models behind an API endpoint have no revisions "
                "(name the snapshot in --model, e.g. gpt-4o-2024-08-06)"
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
        if request.stop:
            body["stop"] = list(request.stop[:MAX_STOP_STRINGS])
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
    "cannot score given continuations or texts (use the hf backend for log-probabilities)"
)


def _check_settings(
    bos: str, concurrency: int, timeout: float, retries: int, top_logprobs: int
) -> None:
    if bos != "auto":
        raise TracktaleError(
            f"--bos {bos}: the openai backend's server applies the chat template (use auto)"
        )
    if concurrency < 1:
        raise TracktaleError(f"--concurrency must be at least 1, got {concurrency}")
    if timeout <= 0:
        raise TracktaleError(f"--request-timeout must be positive, got {timeout}")
    if retries < 0:
        raise TracktaleError(f"--max-retries must be 0 or more, got {retries}")
    if not 0 <= top_logprobs <= 20:
        raise TracktaleError(f"--top-logprobs must be between 0 and 20, got {top_logprobs}")


def _generation(answer: Mapping[str, Any], cached: bool, stops: Sequence[str]) -> Generation:
    choice = answer["choices"][0]
    message = choice.get("message") or {}
    full = message.get("content") or ""
    text = cut_at_stop(full, stops)
    entries = (choice.get("logprobs") or {}).get("content") or []
    tokens, logprobs = _tokens_within(entries, text)
    usage = answer.get("usage") or {}
    details: dict[str, Any] = {
        "api_model": answer.get("model"),
        "system_fingerprint": answer.get("system_fingerprint"),
        "usage_prompt_tokens": usage.get("prompt_tokens"),
        "usage_completion_tokens": usage.get("completion_tokens"),
        "from_cache": cached,
    }
    if entries and entries[0].get("top_logprobs"):
        details["first_token_top_logprobs"] = {
            alternative["token"]: alternative["logprob"]
            for alternative in entries[0]["top_logprobs"]
        }
    return Generation(
        text=text,
        tokens=tokens,
        logprobs=logprobs,
        finish_reason=choice.get("finish_reason"),
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
