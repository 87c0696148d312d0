"""HTTP client of the endpoint backends: concurrency, retries with back-off, an answer cache.

Shared by the chat backend (:mod:`tracktale.models.openai`, ``POST .../chat/completions``) and
the completions backend (:mod:`tracktale.models.completions`, ``POST .../completions``):

- **Politeness**: at most ``concurrency`` requests in flight (:meth:`EndpointClient.post_many`);
  429, 408, 409 and 5xx answers, timeouts and dropped connections are retried ``max_retries``
  times with exponential back-off (1, 2, 4, ... seconds, jittered, at most a minute), waiting
  what ``Retry-After`` (or ``retry-after-ms``) asks for where the server says. The retry loop
  is tenacity's.
- **A re-run costs nothing**: every answer is kept in an on-disk cache, one file per request,
  keyed on the endpoint's URL and the whole request body; a request seen before is not sent
  again. Files are written atomically.
"""

from __future__ import annotations

import concurrent.futures
import email.utils
import hashlib
import json
import os
import random
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import tenacity

from tracktale.atomic import atomic_write_text
from tracktale.errors import TracktaleError
from tracktale.item import canonical_json
from tracktale.schema.results import LogProb
from tracktale.scorer import GenerationDetails

_RETRY_STATUSES = frozenset({408, 409, 429})
_MAX_WAIT = 600.0
"""The longest ``Retry-After`` honoured (a server asking for an hour is asked again sooner)."""


class EndpointError(TracktaleError):
    """An endpoint's answer that is not retried, or retries that ran out.

    Attributes:
        status: The HTTP status (``None`` when the endpoint could not be reached).
    """

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class _Transient(Exception):
    """A failure worth another try: a retryable status, a timeout, a dropped connection."""

    def __init__(self, response: Any = None, error: BaseException | None = None) -> None:
        super().__init__()
        self.response, self.error = response, error


class EndpointClient:
    """POSTs JSON request bodies to one endpoint: concurrency, retries with back-off, a cache.

    Args:
        base_url: The API root (``https://api.openai.com/v1``, ``http://localhost:8000/v1``).
        path: The endpoint under it (``chat/completions``, ``completions``).
        api_key: Sent as a bearer token when given.
        timeout: Seconds to wait for one answer.
        max_retries: Retries of one request after a 429, a 5xx, a timeout or a dropped connection.
        cache_dir: Folder of cached answers; ``None``: no cache.
        backoff: First back-off in seconds (doubled on every retry, at most ``max_backoff``).
        max_backoff: Longest back-off without a ``Retry-After``.
        label: Names the backend in error messages (``openai backend``).
        accept: Checks a 2xx answer's JSON and raises :class:`TracktaleError` for a malformed one.
    """

    def __init__(
        self,
        base_url: str,
        path: str = "chat/completions",
        api_key: str | None = None,
        *,
        timeout: float = 120.0,
        max_retries: int = 6,
        cache_dir: str | os.PathLike[str] | None = None,
        backoff: float = 1.0,
        max_backoff: float = 60.0,
        label: str = "openai backend",
        accept: Callable[[Any, str], None] | None = None,
    ) -> None:
        import httpx

        self.base_url = base_url.rstrip("/")
        self.url = f"{self.base_url}/{path.strip('/')}"
        self.max_retries = max_retries
        self.cache_dir = None if cache_dir is None else Path(cache_dir)
        self.backoff, self.max_backoff = backoff, max_backoff
        self.label = label
        self.accept = accept or _has_choices
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

    def complete(
        self, body: Mapping[str, Any], *, retries: int | None = None
    ) -> tuple[dict[str, Any], bool]:
        """The answer to one request body, from the cache when it was asked before.

        Args:
            body: The request's JSON.
            retries: Retries for this request (``None``: ``max_retries``).

        Raises:
            TracktaleError: For an answer that is not retried (400, 401, 404, ...) or retries
                that ran out.
        """
        key = hashlib.sha256(canonical_json({"url": self.url, "body": body}).encode()).hexdigest()
        cached = self._cached(key)
        if cached is not None:
            return cached, True
        answer = self._post(body, self.max_retries if retries is None else retries)
        if self.cache_dir is not None:
            path = self.cache_dir / key[:2] / f"{key}.json"
            path.parent.mkdir(parents=True, exist_ok=True)
            record = {"url": self.url, "request": body, "response": answer}
            atomic_write_text(path, json.dumps(record, ensure_ascii=False, sort_keys=True))
        return answer, False

    def get_json(self, url: str) -> tuple[Any, Mapping[str, str]] | None:
        """One GET, not retried (``/models``, ``/version``): its JSON and headers, or ``None``."""
        import httpx

        try:
            response = self._http.get(url)
            return (response.json(), response.headers) if response.status_code < 300 else None
        except (httpx.HTTPError, ValueError):
            return None

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

    def _post(self, body: Mapping[str, Any], retries: int) -> dict[str, Any]:
        tries = 0

        def attempt() -> dict[str, Any]:
            nonlocal tries
            import httpx

            tries += 1
            with self._lock:
                self.sent += 1
            try:
                response = self._http.post(self.url, json=dict(body))
            except httpx.TransportError as error:
                raise _Transient(error=error) from None
            if response.status_code < 300:
                return _json_answer(response, self.url, self.label, self.accept)
            if _retryable(response.status_code):
                raise _Transient(response=response)
            raise EndpointError(
                _http_error(response, self.url, body.get("model"), tries, self.label),
                response.status_code,
            )

        retrying = tenacity.Retrying(
            stop=tenacity.stop_after_attempt(retries + 1),
            wait=self._wait,
            retry=tenacity.retry_if_exception_type(_Transient),
            sleep=lambda seconds: self.sleep(seconds),
            reraise=True,
        )
        try:
            return retrying(attempt)
        except _Transient as failure:
            raise self._gave_up(failure, body.get("model"), tries) from None

    def _wait(self, state: tenacity.RetryCallState) -> float:
        failure = state.outcome.exception() if state.outcome else None
        response = getattr(failure, "response", None)
        asked = _retry_after(response.headers) if response is not None else None
        if asked is not None:
            return min(asked, _MAX_WAIT)
        # Jitter spreads the retries of concurrent requests that failed together.
        delay = min(self.max_backoff, self.backoff * 2 ** (state.attempt_number - 1))
        return delay * random.uniform(0.5, 1.0)

    def _gave_up(self, failure: _Transient, model: Any, tries: int) -> EndpointError:
        if failure.response is not None:
            message = _http_error(failure.response, self.url, model, tries, self.label)
            return EndpointError(message, failure.response.status_code)
        error = failure.error
        return EndpointError(
            f"{self.label}: cannot reach {self.url} for model {model} after {tries} tries "
            f"({type(error).__name__}: {error})"
        )

    def close(self) -> None:
        """Close the connection pool."""
        self._http.close()


def check_client_settings(concurrency: int, timeout: float, retries: int) -> None:
    """Check the client's settings as given on a command line or in a plan.

    Raises:
        TracktaleError: Naming the option that is out of range.
    """
    if concurrency < 1:
        raise TracktaleError(f"--concurrency must be at least 1, got {concurrency}")
    if timeout <= 0:
        raise TracktaleError(f"--request-timeout must be positive, got {timeout}")
    if retries < 0:
        raise TracktaleError(f"--max-retries must be 0 or more, got {retries}")


@dataclass(frozen=True, kw_only=True)
class EndpointGenerationDetails(GenerationDetails):
    """What an endpoint's answer says about each generation (the completions backend's).

    Attributes:
        system_fingerprint: The server's configuration fingerprint, where it sends one.
        usage_prompt_tokens: The prompt's tokens as the server counted them.
        usage_completion_tokens: The answer's tokens as the server counted them.
        from_cache: The answer came from the response cache, not the server.
    """

    system_fingerprint: str | None
    usage_prompt_tokens: int | None
    usage_completion_tokens: int | None
    from_cache: bool


@dataclass(frozen=True, kw_only=True)
class ChatGenerationDetails(EndpointGenerationDetails):
    """What a chat endpoint's answer says about each generation (the openai backend's).

    Attributes:
        api_model: The model the server says answered.
        first_token_top_logprobs: The first token's alternatives and their log-probabilities
            (with ``--top-logprobs``).
    """

    api_model: str | None
    first_token_top_logprobs: dict[str, LogProb] | None = None


def answer_details(answer: Mapping[str, Any], cached: bool) -> dict[str, Any]:
    """What an answer says beyond its text, for a row: served model, fingerprint, token usage."""
    usage = answer.get("usage") or {}
    return {
        "api_model": answer.get("model"),
        "system_fingerprint": answer.get("system_fingerprint"),
        "usage_prompt_tokens": usage.get("prompt_tokens"),
        "usage_completion_tokens": usage.get("completion_tokens"),
        "from_cache": cached,
    }


def check_served_model(model_id: str, revision: str | None, backend: str, hint: str) -> None:
    """What can be checked without a request: a model name, and no revision.

    Args:
        model_id: The served model's name.
        revision: Must be ``None``.
        backend: The backend's name, for the messages.
        hint: How to choose a snapshot instead, for the revision's message.

    Raises:
        TracktaleError: For a revision, or an empty model name.
    """
    if not model_id.strip():
        raise TracktaleError(f"--model: the {backend} backend needs the served model's name")
    if revision is not None:
        raise TracktaleError(
            f"--revision {revision}: a model behind an endpoint has no revisions ({hint})"
        )


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


def _has_choices(answer: Any, url: str) -> None:
    if not isinstance(answer, dict) or not answer.get("choices"):
        raise TracktaleError(f"{url} answered without choices: {str(answer)[:200]}")


def _json_answer(response: Any, url: str, label: str, accept) -> dict[str, Any]:
    try:
        answer = response.json()
    except ValueError:
        raise TracktaleError(f"{label}: {url} answered with something not JSON") from None
    try:
        accept(answer, url)
    except TracktaleError as error:
        raise TracktaleError(f"{label}: {error}") from None
    return answer


def _error_detail(response: Any) -> str:
    """The server's words: OpenAI's ``error.message``, vLLM's ``message``, FastAPI's ``detail``."""
    try:
        answer = response.json()
    except ValueError:
        answer = None
    if isinstance(answer, dict):
        error = answer.get("error")
        if isinstance(error, dict) and error.get("message"):
            return str(error["message"])
        for key in ("message", "detail", "error"):
            if answer.get(key):
                return str(answer[key])[:300]
    return response.text.strip()[:200] or response.reason_phrase


def _http_error(response: Any, url: str, model: Any, tries: int, label: str) -> str:
    detail = _error_detail(response)
    detail = " ".join(str(detail).split())
    hint = {
        401: " (check the key in the variable --api-key-env names)",
        403: " (the key may lack access to this model)",
        404: " (check --model and --base-url)",
        429: " (rate limited every time: lower --concurrency or try later)",
    }.get(response.status_code, "")
    times = f" after {tries} tries" if tries > 1 else ""
    return (
        f"{label}: {url} answered {response.status_code} for model {model}{times}: {detail}{hint}"
    )
