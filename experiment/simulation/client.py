"""A small JSON client for the study API, with the browser's retry rules.

Simulated participants and the load benchmark talk to the server exactly as the page does:
the same endpoints and bodies, the session token in ``X-Session-Token``, and retries with
exponential back-off on network errors, 5xx and 429 (so a saved trial is never lost to a
transient failure). Connections are kept alive.
"""

from __future__ import annotations

import http.client
import json
import random
import time
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import tenacity

from tracktale.errors import TracktaleError


@dataclass(frozen=True)
class Reply:
    """A server answer: HTTP status, decoded JSON body and the time it took, retries included.

    ``server_seconds`` is the server's own handling time (its ``Server-Timing`` header), if
    it sent one.
    """

    status: int
    data: dict[str, Any]
    seconds: float
    server_seconds: float | None = None


class StudyClient:
    """Talks to one study server.

    Args:
        base_url: ``http://host:port`` of the server.
        timeout: Seconds to wait for one answer.
        max_attempts: Attempts per request before giving up.
        max_delay: Longest back-off between attempts, in seconds.
        sleep: Called to wait between attempts (tests pass a fake).
    """

    def __init__(
        self,
        base_url: str,
        *,
        timeout: float = 30.0,
        max_attempts: int = 12,
        max_delay: float = 10.0,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        parsed = urllib.parse.urlsplit(base_url)
        if parsed.scheme not in ("http", "https") or not parsed.hostname:
            raise TracktaleError(f"not a server URL: {base_url!r} (expected http://host:port)")
        self.base_url = base_url.rstrip("/")
        self._parsed = parsed
        self._host: str = parsed.hostname
        self.timeout = timeout
        self.max_attempts = max_attempts
        self.max_delay = max_delay
        self.sleep = sleep
        self.retries = 0
        self._connection: http.client.HTTPConnection | None = None

    def _connect(self) -> http.client.HTTPConnection:
        if self._connection is None:
            kind = (
                http.client.HTTPSConnection
                if self._parsed.scheme == "https"
                else http.client.HTTPConnection
            )
            self._connection = kind(self._host, self._parsed.port, timeout=self.timeout)
        return self._connection

    def close(self) -> None:
        """Close the kept-alive connection."""
        if self._connection is not None:
            self._connection.close()
            self._connection = None

    def post(
        self, path: str, body: dict[str, Any], *, token: str | None = None, admin: str | None = None
    ) -> Reply:
        """POST JSON, retrying what the browser retries.

        Returns:
            The first answer that is neither a 5xx nor a 429.

        Raises:
            TracktaleError: When every attempt failed.
        """
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if token:
            headers["X-Session-Token"] = token
        if admin:
            headers["Authorization"] = f"Bearer {admin}"
        payload = json.dumps(body).encode("utf-8")
        started = time.perf_counter()
        if self.max_attempts < 1:
            raise TracktaleError(f"{self.base_url}{path}: gave up after 0 tries (no attempt)")
        retrying = tenacity.Retrying(
            stop=tenacity.stop_after_attempt(self.max_attempts),
            wait=self._wait,
            retry=tenacity.retry_if_exception_type((OSError, http.client.HTTPException))
            | tenacity.retry_if_result(_worth_retrying),
            sleep=lambda seconds: self.sleep(seconds),
            before_sleep=self._count_retry,
        )
        try:
            status, timing, raw = retrying(self._exchange, path, payload, headers)
        except tenacity.RetryError as error:
            raise TracktaleError(
                f"{self.base_url}{path}: gave up after {self.max_attempts} tries "
                f"({_problem(error.last_attempt)})"
            ) from None
        elapsed = time.perf_counter() - started
        return Reply(status, _decode(raw), elapsed, _server_time(timing))

    def _wait(self, state: tenacity.RetryCallState) -> float:
        """Exponential back-off from 0.25 s, at most ``max_delay``, jittered by 0.5-1.5x."""
        delay = min(self.max_delay, 0.25 * 2 ** (state.attempt_number - 1))
        return delay * (0.5 + random.random())

    def _count_retry(self, state: tenacity.RetryCallState) -> None:
        self.retries += 1

    def _exchange(
        self, path: str, payload: bytes, headers: dict[str, str]
    ) -> tuple[int, str | None, bytes]:
        # A kept-alive connection the server closed while idle fails on reuse; like a browser,
        # reopen it at once rather than counting a retry.
        for fresh in (False, True):
            reused = self._connection is not None
            try:
                connection = self._connect()
                connection.request("POST", self._parsed.path.rstrip("/") + path, payload, headers)
                response = connection.getresponse()
                raw = response.read()
            except (OSError, http.client.HTTPException):
                self.close()
                if reused and not fresh:
                    continue
                raise
            if response.getheader("Connection", "").lower() == "close":
                self.close()
            return response.status, response.getheader("Server-Timing"), raw
        raise AssertionError("unreachable")


def _worth_retrying(answer: tuple[int, str | None, bytes]) -> bool:
    """Whether the browser would send again: a 5xx or a 429."""
    return answer[0] >= 500 or answer[0] == 429


def _problem(attempt: tenacity.Future) -> str:
    """The last attempt's failure, for the give-up message."""
    error = attempt.exception()
    if error is not None:
        return f"{type(error).__name__}: {error}"
    return f"HTTP {attempt.result()[0]}"


def _server_time(header: str | None) -> float | None:
    if not header or "dur=" not in header:
        return None
    try:
        return float(header.split("dur=")[1].split(";")[0].split(",")[0]) / 1000
    except ValueError:
        return None


def _decode(raw: bytes) -> dict[str, Any]:
    try:
        data = json.loads(raw.decode("utf-8")) if raw else {}
    except (UnicodeDecodeError, json.JSONDecodeError):
        return {"error": raw[:200].decode("utf-8", "replace")}
    return data if isinstance(data, dict) else {"value": data}
