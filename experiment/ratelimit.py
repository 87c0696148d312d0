"""Token-bucket rate limits for the write endpoints (in memory, per server process).

With several gunicorn workers each keeps its own buckets, so the effective limit is the
configured one times the number of workers; the limits guard against floods and runaway
clients, not against a determined attacker (put the server behind a proxy for that).
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict


class RateLimiter:
    """Allow ``per_minute`` events per key, in bursts of up to ``per_minute``.

    Args:
        per_minute: Refill rate and bucket size.
        max_keys: Buckets kept (least recently used are forgotten, i.e. refilled).
        clock: Monotonic clock in seconds (tests pass a fake one).
    """

    def __init__(self, per_minute: int, max_keys: int = 100_000, clock=time.monotonic) -> None:
        self.capacity = float(per_minute)
        self.rate = per_minute / 60.0
        self.max_keys = max_keys
        self.clock = clock
        self._buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()
        self._lock = threading.Lock()

    def allow(self, key: str) -> float:
        """Take one token for ``key``.

        Returns:
            0 when allowed, else the seconds until a token is available.
        """
        with self._lock:
            moment = self.clock()
            tokens, last = self._buckets.pop(key, (self.capacity, moment))
            tokens = min(self.capacity, tokens + (moment - last) * self.rate)
            wait = 0.0
            if tokens >= 1:
                tokens -= 1
            else:
                wait = (1 - tokens) / self.rate
            self._buckets[key] = (tokens, moment)
            while len(self._buckets) > self.max_keys:
                self._buckets.popitem(last=False)
            return wait
