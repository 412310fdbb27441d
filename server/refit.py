"""Refitting the query adapter from the insights page: one at a time, off the event loop.

A refit learns what `kb tune` learns (`kb.tuning.tune`) from the build this replica serves,
taught the links as they are now, keeping the query files the build's adapter was fitted
on. It writes a new build carrying the new adapter and swaps it in (`kb.index.write_adapted`);
the old adapter serves until then, and the other replicas pick the build up at their next
check, as after `kb ingest`.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass

from kb.index import read_adapter, write_adapted
from kb.tuning import tune

from .reload import Reloader

__all__ = ["Refit", "RefitState"]

log = logging.getLogger("kb.server")


@dataclass(frozen=True)
class RefitState:
    running: bool
    started_at: float | None  # Unix seconds, of the refit running or the last one
    failed: str  # why the last refit failed ("" if it did not)


class Refit:
    """The one refit of a server: started from the insights page, watched by it."""

    def __init__(self, reloader: Reloader):
        self.reloader = reloader
        self._task: asyncio.Task[None] | None = None
        self._started_at: float | None = None
        self._failed = ""

    @property
    def state(self) -> RefitState:
        running = self._task is not None and not self._task.done()
        return RefitState(running, self._started_at, self._failed)

    def start(self) -> bool:
        """Start a refit; False (nothing started) while one runs."""
        if self.state.running:
            return False
        self._started_at, self._failed = time.time(), ""
        self._task = asyncio.create_task(self._run())
        return True

    async def wait(self) -> None:
        """Until the refit running, if any, has finished."""
        if self._task is not None:
            await asyncio.shield(self._task)

    async def _run(self) -> None:
        kb = self.reloader.served.kb
        try:
            previous = await asyncio.to_thread(read_adapter, kb.path)
            adapter = await asyncio.to_thread(tune, kb.searcher, (), previous)
            await asyncio.to_thread(write_adapted, self.reloader.settings.index_dir, adapter)
            await self.reloader.reload()
            log.info("refitted the query adapter on %s questions", adapter.about.get("questions"))
        except Exception as exc:  # the old adapter keeps serving; the page says why
            self._failed = f"{type(exc).__name__}: {exc}"
            log.warning("refitting the query adapter failed: %s", self._failed)
