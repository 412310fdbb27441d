"""Delivery ids: the ids of the messages a chat platform delivered lately, so that one delivered twice is answered once;
and the `Guard` each chat bot keeps between requests.

Feishu sends an event again when it did not get its answer in time, and a signed request
captured on the way could be sent again by someone else while its timestamp is still
fresh; either way the second has the id of the first (Feishu's `event_id`, DingTalk's
`msgId`). An id is remembered for `window` seconds (longer than the timestamps a request
may carry are accepted for), at most `MAX_IDS` of them, the oldest forgotten first; what is
kept of each is a fixed-size hash, whatever the length of the id a request names.
Each server process remembers its own: behind a load balancer, a retry that reaches
another replica is answered there too.

A channel's `install` keeps its `Guard` on the app (`keep_guard`, or `keep_bot` for a bot that holds one), where
the one error handler finds it (`guard_of`) to log a request the channel refused within that channel's budget; its
routes take what it kept through `kept(name)`, a dependency.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable, Protocol, TypeVar

from fastapi import Request

from ..ratelimit import CHAT_LIMIT, ClientLimit, LogBudget

__all__ = ["DeliveryIds", "Guard", "MAX_IDS", "keep_guard", "guard_of", "keep_bot", "kept"]

MAX_IDS = 100_000


class DeliveryIds:
    """The ids seen in the last `window` seconds."""

    def __init__(self, window: float, max_ids: int = MAX_IDS, clock: Callable[[], float] = time.monotonic):
        self.window = window
        self.max_ids = max_ids
        self.clock = clock
        self._seen: OrderedDict[bytes, float] = OrderedDict()  # hash of the id -> when, oldest first
        self._lock = threading.Lock()

    def first(self, message_id: str) -> bool:
        """Whether `message_id` is new (and remember it); False for one seen within the window."""
        now = self.clock()
        key = hashlib.blake2b(message_id.encode("utf-8", "surrogatepass"), digest_size=16).digest()
        with self._lock:
            while self._seen:
                oldest, at = next(iter(self._seen.items()))
                if now - at < self.window and len(self._seen) < self.max_ids:
                    break
                del self._seen[oldest]
            if key in self._seen:
                return False
            self._seen[key] = now
            return True

    def __len__(self) -> int:
        return len(self._seen)


@dataclass
class Guard:
    """What a chat bot (Slack, Feishu, DingTalk) keeps between requests: the message ids it was sent,
    each chat's limit (`CHAT_LIMIT`), and a budget of log lines about the requests it refused
    (its route is not rate-limited: the platform's servers send every asker's questions)."""

    delivered: DeliveryIds
    chats: ClientLimit = field(default_factory=lambda: ClientLimit(*CHAT_LIMIT))
    refused: LogBudget = field(default_factory=LogBudget)


def keep_guard(app: Any, channel: str, guard: Guard) -> Guard:
    """Keep `guard` on the app (a FastAPI app) as `channel`'s; `guard` back."""
    if not hasattr(app.state, "guards"):
        app.state.guards = {}
    app.state.guards[channel] = guard
    return guard


def guard_of(app: Any, channel: str) -> Guard | None:
    """The `Guard` `channel` keeps on the app, or None (the channel is off)."""
    guards: dict[str, Guard] = getattr(app.state, "guards", {})
    return guards.get(channel)


class _Guarded(Protocol):
    guard: Guard


B = TypeVar("B", bound=_Guarded)


def keep_bot(app: Any, channel: str, bot: B | None) -> B | None:
    """Keep `bot` on the app as `channel`'s (None: the channel is off), and its `Guard` with `keep_guard`; `bot` back."""
    setattr(app.state, channel, bot)
    if bot is not None:
        keep_guard(app, channel, bot.guard)
    return bot


def kept(name: str) -> Callable[[Request], Awaitable[Any]]:
    """A route's dependency: what `install` kept on the app as `name` (a bot, a `Guard`)."""

    async def get(request: Request) -> Any:
        return getattr(request.app.state, name)

    return get
