"""Rate limiting per client: a token bucket for each client address, answering 429 with `Retry-After`.

`KB_RATE_LIMIT=N/minute` gives each client a bucket of N tokens that refills at N a minute:
a burst of N requests is served at once, then one every 60/N seconds. A request that finds
the bucket empty gets 429 (JSON on the API, the error page on pages) with `Retry-After` in
whole seconds. Slack, `/healthz`, static files and `/widget.js` are not counted (`RATE_EXEMPT`).

The client is the address in the ASGI scope. Behind a reverse proxy that is the proxy's
address, so every reader would share one bucket, unless uvicorn puts the address from the
proxy's `X-Forwarded-For` there instead: it does with `--proxy-headers` (on in `kb serve`)
for requests from the addresses in `--forwarded-allow-ips` / `FORWARDED_ALLOW_IPS`
(default: this machine). See README, Security.

Memory stays bounded: a bucket left alone long enough to be full again is the same as no
bucket and is dropped, and at most `MAX_CLIENTS` buckets are kept (the least recently
used go first).
"""

from __future__ import annotations

import math
import time
from collections import OrderedDict
from typing import Callable

from starlette.types import ASGIApp, Receive, Scope, Send

from kb.settings import Settings

from .errors import RATE_EXEMPT, send_error

__all__ = ["RateLimit", "TokenBuckets", "MAX_CLIENTS"]

MAX_CLIENTS = 100_000


class TokenBuckets:
    """One token bucket per client key: `capacity` tokens, refilled at `capacity / period` a second."""

    def __init__(
        self, capacity: int, period: float, clock: Callable[[], float] = time.monotonic, max_clients: int = MAX_CLIENTS
    ):
        self.capacity = float(capacity)
        self.rate = capacity / period  # tokens a second
        self.refill_time = period  # an empty bucket is full again after this long
        self.clock = clock
        self.max_clients = max_clients
        self._buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()  # key -> (tokens, at), oldest first

    def __len__(self) -> int:
        return len(self._buckets)

    def take(self, key: str) -> float:
        """Take a token for `key`: 0.0 when there was one, else the seconds until there is one."""
        now = self.clock()
        self._drop_idle(now)
        tokens, at = self._buckets.pop(key, (self.capacity, now))
        tokens = min(self.capacity, tokens + (now - at) * self.rate)
        waiting = 0.0
        if tokens >= 1.0:
            tokens -= 1.0
        else:
            waiting = (1.0 - tokens) / self.rate
        self._buckets[key] = (tokens, now)  # now the most recently used
        if len(self._buckets) > self.max_clients:
            self._buckets.popitem(last=False)
        return waiting

    def _drop_idle(self, now: float) -> None:
        """Drop the buckets untouched for `refill_time`: they are full, as a new one would be."""
        while self._buckets:
            key, (_, at) = next(iter(self._buckets.items()))
            if now - at < self.refill_time:
                return
            del self._buckets[key]


class RateLimit:
    """ASGI middleware: count each client's requests against KB_RATE_LIMIT, answer 429 beyond it.

    The limit is read from `app.state.settings` at the first request, because
    `create_app(None)` reads the settings only when the app starts.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self._buckets: TokenBuckets | None = None
        self._for: Settings | None = None  # the settings `_buckets` was made for

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"].startswith(RATE_EXEMPT):
            await self.app(scope, receive, send)
            return
        buckets = self._buckets_for(scope)
        if buckets is None:
            await self.app(scope, receive, send)
            return
        client = scope.get("client")
        waiting = buckets.take(client[0] if client else "-")
        if not waiting:
            await self.app(scope, receive, send)
            return
        retry = max(1, math.ceil(waiting))
        limit = scope["app"].state.settings.rate_limit
        await send_error(
            scope, receive, send, 429,
            f"too many requests from this client: the limit is {limit} (KB_RATE_LIMIT); try again in {retry} s",
            {"Retry-After": str(retry)},
        )

    def _buckets_for(self, scope: Scope) -> TokenBuckets | None:
        settings: Settings | None = getattr(getattr(scope.get("app"), "state", None), "settings", None)
        if settings is None or settings.rate is None:
            return None
        if settings is not self._for:
            self._buckets, self._for = TokenBuckets(*settings.rate), settings
        return self._buckets
