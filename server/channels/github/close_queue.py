"""Closes acknowledged and not yet harvested, kept in the insights database until they are (kb/insights/deliveries.py).

The webhook queues an issue GitHub says closed before it answers 202 (`queue`): past `QUEUE_SIZE` closes waiting it
answers 503 instead, so GitHub shows the delivery failed and it can be delivered again. The delivery's own harvest
takes its row and, done, deletes it (`harvest_taken`); a harvest that failed (GitHub or the database out of reach) is
tried again `RETRY` seconds later, doubling each time, at most `TRIES` times, then dropped with a warning naming
the issue and the last error. What the process did not get to (its backlog full, the process killed) is taken by
`drain` once `GRACE` seconds have passed (at once when it was queued before this process started), looking every
`POLL` seconds, in this process or in any other sharing the database; a close held by a process that
died is taken again when its lease ends (`LEASE`), or at once when that process was of this machine.
"""

from __future__ import annotations

import asyncio
import json
import logging
import secrets
import time
from dataclasses import asdict
from typing import TYPE_CHECKING, Any, Awaitable, Callable

from kb.errors import KBError
from kb.insights.deliveries import QueuedClose, this_process
from kb.insights.offload import off_loop
from trackers.github.responses import GitHubUnavailable

from .events import Opened

if TYPE_CHECKING:
    from kb.insights.store import InsightsStore

__all__ = ["CloseQueue", "QUEUE_SIZE", "TRIES", "POLL", "LEASE", "RETRY"]

log = logging.getLogger("kb.server")

QUEUE_SIZE = 10_000  # closes waiting at most; past it a close is answered 503
TRIES = 5  # harvests of one close at most
RETRY = 60.0  # seconds before the first retry; doubled each time after
POLL = 2.0  # seconds between looks at the queue for closes no one is harvesting
GRACE = 30.0  # seconds a close is left to its delivery's own harvest before `drain` may take it
LEASE = 120.0  # seconds a close taken stays this process's unless renewed

Harvest = Callable[[Opened, QueuedClose], Awaitable[str]]


def issue_json(asked: Opened) -> str:
    """The issue a close delivery named, as its queue row keeps it."""
    return json.dumps(asdict(asked))  # ASCII: a lone surrogate in the delivery is kept as its escape


def issue_of_row(text: str) -> Opened:
    """The issue a queue row keeps."""
    fields: dict[str, Any] = json.loads(text)
    fields["labels"] = tuple(fields.get("labels") or ())
    return Opened(**fields)


class CloseQueue:
    """This process's side of the queue: its name as a holder, and the harvests it runs."""

    def __init__(self, store: InsightsStore | None, poll: float = POLL, grace: float = GRACE) -> None:
        self.store = store
        self.poll, self.grace = poll, grace
        self.size, self.tries, self.retry = QUEUE_SIZE, TRIES, RETRY
        self.holder = this_process(secrets.token_hex(4))
        self.dropped = 0  # closes dropped after their last try, since start-up
        self.started = time.time()  # a close queued before is no delivery's of this process: taken at once

    @property
    def on(self) -> bool:
        """Whether closes are queued: there is a database to queue them in."""
        return self.store is not None

    async def queue(self, asked: Opened) -> bool:
        """Queue the close of `asked`; False when `size` closes are waiting already."""
        assert self.store is not None
        store, now = self.store, time.time()
        issue = issue_json(asked)
        return await off_loop(store.closes.queue, asked.repo, asked.number, issue, now, self.size, now + self.grace)

    async def harvest_taken(self, asked: Opened, harvest: Harvest) -> str:
        """The close of `asked` harvested now, when no other process holds it; its row deleted when done."""
        assert self.store is not None
        store, now = self.store, time.time()
        taken = await off_loop(store.closes.take, self.holder, now, now + LEASE, (asked.repo, asked.number))
        if taken is None:
            return "harvested elsewhere: another process holds it"
        return await self._run(taken, harvest)

    async def drain(self, harvest: Harvest) -> None:
        """Harvest the closes due that no running process holds, one at a time, every `poll` seconds; until cancelled."""
        assert self.store is not None
        store = self.store
        while True:
            try:
                now = time.time()
                taken = await off_loop(store.closes.take, self.holder, now, now + LEASE, None, self.started)
            except store.database_errors as exc:
                log.warning("GitHub: the queue of closes cannot be read: %s", exc)
                taken = None
            if taken is None:
                await asyncio.sleep(self.poll)
                continue
            outcome = await self._run(taken, harvest)
            log.info("GitHub %s#%s (queued close): %s", taken.repo, taken.number, outcome)

    async def _run(self, taken: QueuedClose, harvest: Harvest) -> str:
        assert self.store is not None
        store = self.store
        renewing = asyncio.create_task(self._renew(taken))
        try:
            outcome = await harvest(issue_of_row(taken.issue), taken)
        except (GitHubUnavailable, KBError) as exc:
            return await self._failed(taken, f"{type(exc).__name__}: {exc}")
        except Exception as exc:  # a fault of its own: tried again as any failure, logged with its traceback
            log.exception("GitHub: harvesting %s#%s failed", taken.repo, taken.number)
            return await self._failed(taken, f"{type(exc).__name__}: {exc}")
        finally:
            renewing.cancel()
        await off_loop(store.closes.done, taken)
        return outcome

    async def _renew(self, taken: QueuedClose) -> None:
        assert self.store is not None
        while True:
            await asyncio.sleep(LEASE / 3)
            try:
                await off_loop(self.store.closes.renew, taken, time.time() + LEASE)
            except self.store.database_errors as exc:  # the lease may end: another process may take it then
                log.warning("GitHub: the lease on %s#%s was not renewed: %s", taken.repo, taken.number, exc)

    async def _failed(self, taken: QueuedClose, error: str) -> str:
        assert self.store is not None
        due = time.time() + self.retry * 2**taken.tries
        dropped = await off_loop(self.store.closes.failed, taken, error, due, self.tries)
        if dropped:
            self.dropped += 1
            log.warning(
                "GitHub: %s#%s was not harvested after %d tries and is dropped: %s",
                taken.repo,
                taken.number,
                self.tries,
                error,
            )
            return f"not harvested: dropped after {self.tries} tries ({error})"
        log.warning(
            "GitHub: %s#%s was not harvested (%s); tried again in %.0f s",
            taken.repo,
            taken.number,
            error,
            due - time.time(),
        )
        return f"not harvested yet: {error}"
