"""The bot's background work on GitHub: a bound on how much is in flight, and one writer at a time per issue.

`Backlog` runs at most `running` answers at once (each a search and its API calls, which may wait out a rate
limit) and keeps at most `waiting` more; a delivery beyond that is acknowledged and dropped, with a log line,
so that a slow or rate-limiting GitHub never piles up work without end. `IssueLocks` makes the calls that write
an issue's one bot comment (find it, then update or create it) take turns within this process, so that two
deliveries, or two clicks of Post, on one issue at once write one comment."""

from __future__ import annotations

import asyncio
from contextlib import asynccontextmanager
from typing import AsyncIterator, Awaitable, Callable

__all__ = ["Backlog", "IssueLocks", "RUNNING", "WAITING"]

RUNNING = 4  # answers worked on at once
WAITING = 64  # answers kept waiting for a turn; a delivery beyond them is dropped


class Backlog:
    """At most `running` pieces of work at once, and `waiting` more waiting their turn."""

    def __init__(self, running: int = RUNNING, waiting: int = WAITING) -> None:
        self.limit = running + waiting
        self.taken = 0
        self._turns = asyncio.Semaphore(running)

    def take(self) -> bool:
        """Whether there is room for one more piece of work (it is then counted until `run` ends it)."""
        if self.taken >= self.limit:
            return False
        self.taken += 1
        return True

    async def run(self, work: Callable[[], Awaitable[None]]) -> None:
        """`work` done in its turn (after `take` said yes)."""
        try:
            async with self._turns:
                await work()
        finally:
            self.taken -= 1


class IssueLocks:
    """A lock per issue, held while its bot comment is written; forgotten when no one holds or waits for it."""

    def __init__(self) -> None:
        self._locks: dict[str, tuple[asyncio.Lock, int]] = {}

    @asynccontextmanager
    async def held(self, repo: str, number: int) -> AsyncIterator[None]:
        key = f"{repo.lower()}#{number}"
        lock, users = self._locks.get(key) or (asyncio.Lock(), 0)
        self._locks[key] = (lock, users + 1)
        try:
            async with lock:
                yield
        finally:
            lock, users = self._locks[key]
            if users == 1:
                del self._locks[key]
            else:
                self._locks[key] = (lock, users - 1)
