"""The bot's background work on GitHub: a bound on how much is in flight, and one writer at a time per issue.

`Backlog` runs at most `running` answers at once (each a search and its API calls, which may wait out a rate
limit) and keeps at most `waiting` more; a delivery beyond that is acknowledged and dropped, with a log line,
so that a slow or rate-limiting GitHub never piles up work without end. `IssueLocks` makes the calls that write
an issue's one bot comment (find it, then update or create it) take turns, so that two deliveries, or two clicks
of Post, on one issue at once write one comment: within this process by a lock per issue, and across the processes
sharing the insights database (replicas on one PostgreSQL, workers on one SQLite file) by a claim on the issue in
that database (kb/insights/claims.py: the issue as this channel's thread `owner/name#number`, the name
lower-cased since GitHub's ignore case), held with a short lease renewed while the comment is written. Without a
database, or while it cannot be reached, the lock alone holds (with a log line)."""

from __future__ import annotations

import asyncio
import logging
import secrets
import time
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, AsyncIterator, Awaitable, Callable

from kb.insights.offload import off_loop
from trackers.github.responses import GitHubUnavailable

from .suggestions import CHANNEL, thread_of

if TYPE_CHECKING:
    from kb.insights.store import InsightsStore

__all__ = ["Backlog", "IssueLocks", "RUNNING", "WAITING", "LEASE", "CLAIM_WAIT"]

log = logging.getLogger("kb.server")

RUNNING = 4  # answers worked on at once
WAITING = 64  # answers kept waiting for a turn; a delivery beyond them is dropped
LEASE = 30.0  # seconds a claim on an issue lasts unless renewed (a process that died frees the issue after this)
RENEW = LEASE / 3  # seconds between renewals while the comment is written
CLAIM_WAIT = 300.0  # seconds to wait for another process's claim on an issue (4 API calls at their deadline)
POLL = 0.2  # seconds between tries of a claim another process holds


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
    """A lock per issue, held while its bot comment is written, and a claim on the issue in `store` (the insights
    database the processes share, None for none) while the lock is held; a lock is forgotten when no one holds or
    waits for it."""

    def __init__(self, store: InsightsStore | None = None, wait: float = CLAIM_WAIT) -> None:
        self.store = store
        self.wait = wait
        self._locks: dict[str, tuple[asyncio.Lock, int]] = {}

    @asynccontextmanager
    async def held(self, repo: str, number: int) -> AsyncIterator[None]:
        key = thread_of(repo.lower(), number)
        lock, users = self._locks.get(key) or (asyncio.Lock(), 0)
        self._locks[key] = (lock, users + 1)
        try:
            async with lock, self._claimed(repo, number, key):
                yield
        finally:
            lock, users = self._locks[key]
            if users == 1:
                del self._locks[key]
            else:
                self._locks[key] = (lock, users - 1)

    @asynccontextmanager
    async def _claimed(self, repo: str, number: int, thread: str) -> AsyncIterator[None]:
        """The issue claimed in the shared database for as long as the block runs (renewed meanwhile), then freed;
        GitHubUnavailable when another process has held it for `wait` seconds."""
        store = self.store
        if store is None:
            yield
            return
        holder = secrets.token_hex(8)
        try:
            await self._claim(store, repo, number, thread, holder)
        except store.database_errors as exc:
            log.warning(
                "GitHub %s#%s: the issue was not claimed in %s (%s); writing its comment all the same",
                repo,
                number,
                store.location,
                exc,
            )
            yield
            return
        renewing = asyncio.create_task(self._renew(store, repo, number, thread, holder))
        try:
            yield
        finally:
            renewing.cancel()
            try:
                await off_loop(store.claims.release, CHANNEL, thread, holder)
            except store.database_errors as exc:  # the lease ends by itself
                log.warning("GitHub %s#%s: the claim on the issue was not released (%s)", repo, number, exc)

    async def _claim(self, store: InsightsStore, repo: str, number: int, thread: str, holder: str) -> None:
        gives_up = time.monotonic() + self.wait
        while True:
            now = time.time()
            if await off_loop(store.claims.claim, CHANNEL, thread, holder, now + LEASE, now):
                return
            if time.monotonic() > gives_up:
                raise GitHubUnavailable(
                    f"{repo}#{number}: another server process has been writing the bot's comment for over "
                    f"{self.wait:g} s; not written here"
                )
            await asyncio.sleep(POLL)

    async def _renew(self, store: InsightsStore, repo: str, number: int, thread: str, holder: str) -> None:
        while True:
            await asyncio.sleep(RENEW)
            try:
                await off_loop(store.claims.renew, CHANNEL, thread, holder, time.time() + LEASE)
            except store.database_errors as exc:
                log.warning("GitHub %s#%s: the claim on the issue was not renewed (%s)", repo, number, exc)
