"""Rate limits: token buckets per client, the limits of one kind of request, and a budget of log lines.

`TokenBuckets` holds a bucket for each client address; `RateLimit` (server/middleware.py)
counts every request against `KB_RATE_LIMIT` with them, answering 429 with `Retry-After`.
Some requests have a tighter limit of their own on top, whatever KB_RATE_LIMIT says
(`ClientLimit`): sign-in attempts (`SIGN_IN_LIMIT`), votes (`VOTE_LIMIT`), votes on one
answer (`ANSWER_VOTE_LIMIT`, counted per client and entry) and the voting sessions a client
is given (`SESSION_LIMIT`; beyond it, server/sessions.py gives a shared one). The chat bots'
questions come from the platform's servers, not their askers, and are counted per chat
instead (`CHAT_LIMIT`, `ClientLimit.wait` with the chat's id). `LogBudget`
is a bucket for log lines, so that a flood of bad requests cannot flood the log.

The client is the address in the ASGI scope. Behind a reverse proxy that is the proxy's
address, so every reader would share one bucket, unless uvicorn puts the address from the
proxy's `X-Forwarded-For` there instead: `kb serve` has it do so for requests from the
addresses in `KB_TRUSTED_PROXIES` only (default: none). See docs/security.md.

Memory stays bounded: a bucket left alone long enough to be full again is the same as no
bucket and is dropped, and at most `MAX_CLIENTS` buckets are kept (the least recently
used go first).
"""

from __future__ import annotations

import logging
import math
import time
from collections import OrderedDict
from typing import Any, Callable

from starlette.exceptions import HTTPException
from starlette.types import Scope

__all__ = [
    "TokenBuckets",
    "ClientLimit",
    "LogBudget",
    "client_address",
    "MAX_CLIENTS",
    "SIGN_IN_LIMIT",
    "VOTE_LIMIT",
    "ANSWER_VOTE_LIMIT",
    "SESSION_LIMIT",
    "CHAT_LIMIT",
]

MAX_CLIENTS = 100_000
SIGN_IN_LIMIT = ("sign-in attempts", 5, 60.0)  # what, how many, in how many seconds
VOTE_LIMIT = ("votes", 60, 60.0)
ANSWER_VOTE_LIMIT = ("votes on one answer", 10, 86400.0)  # per client and entry, whatever the sessions
SESSION_LIMIT = ("voting sessions", 20, 3600.0)  # new ones a client is given
CHAT_LIMIT = ("questions from one chat", 20, 60.0)  # a Feishu chat's, a DingTalk conversation's
_PERIOD_NAMES = {1.0: "second", 60.0: "minute", 3600.0: "hour", 86400.0: "day"}


def client_address(scope: Scope) -> str:
    """The client's address as the server sees it (a trusted proxy's `X-Forwarded-For`, else the peer)."""
    client = scope.get("client")
    return client[0] if client else "-"


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


class ClientLimit:
    """A limit of its own on one kind of request, per client: `capacity` of them a `period` (see `SIGN_IN_LIMIT`)."""

    def __init__(self, what: str, capacity: int, period: float):
        self.what = what
        self.period = period
        self.limit = f"{capacity} a {_PERIOD_NAMES.get(period, f'{period:g} s')}"
        self._buckets = TokenBuckets(capacity, period)

    def take(self, scope: Scope, about: str = "") -> float:
        """Count one request (of the client, about one thing when given): 0.0 within the limit, else the seconds to wait."""
        client = client_address(scope)
        return self._buckets.take(f"{client} {about}" if about else client)

    def wait(self, key: str) -> int:
        """Count one request of `key` (a chat, not a client): 0 within the limit, else the whole seconds to wait."""
        waiting = self._buckets.take(key)
        return max(1, math.ceil(waiting)) if waiting else 0

    def check(self, scope: Scope, about: str = "") -> None:
        """Count one request; raise a 429 with `Retry-After` if the client is over the limit."""
        waiting = self.take(scope, about)
        if waiting:
            retry = max(1, math.ceil(waiting))
            raise HTTPException(
                429,
                f"too many {self.what} from this client: the limit is {self.limit}; try again in {retry} s",
                {"Retry-After": str(retry)},
            )


class LogBudget:
    """At most `lines` log lines each `period` seconds for each cause (a burst of `lines`, then one every
    `period / lines` s), so a flood of one kind of bad request cannot fill the disk, nor hide another kind.

    A cause is what the caller names (a route and the kind of refusal: a string from a fixed
    set, never from the request); without one, every line shares one budget. A line over its
    cause's budget is held back and counted; the next line of that cause that fits says how
    many were held back before it ("... (37 more like this not logged)").
    """

    def __init__(
        self, lines: int = 60, period: float = 60.0, clock: Callable[[], float] = time.monotonic, causes: int = 64
    ):
        self._bucket = TokenBuckets(lines, period, clock, max_clients=causes)
        self._held: OrderedDict[str, int] = OrderedDict()  # lines not logged since the cause's last one that was
        self._causes = causes

    def warning(self, log: logging.Logger, message: str, *args: Any, cause: str = "") -> bool:
        """Log `message % args` as a warning if `cause`'s budget allows; whether it was logged."""
        if self._bucket.take(cause):
            self._held[cause] = self._held.pop(cause, 0) + 1
            if len(self._held) > self._causes:
                self._held.popitem(last=False)
            return False
        held = self._held.pop(cause, 0)
        if held:
            message += f" ({held} more like this not logged)"
        log.warning(message, *args)
        return True
