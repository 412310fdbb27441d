"""The answers written on the insights page, as a server keeps them: each change saved to their
file, then a new build with them written and swapped in, one change at a time, off the event loop.

A change is saved (`kb.written.WrittenFile`), then `kb.written_build.write_written` writes a build
that is the served one with the written answers as the file now holds them (only their passages
are embedded; the embedding cache gives the rest), and the reloader swaps it in, as after
`kb ingest`: requests already running finish on the old build, and the other replicas pick the
build up at their next check. A build that fails leaves the old one serving and the file saved,
and the page says why; the next change, or `kb ingest`, builds it.
"""

from __future__ import annotations

import asyncio
import logging
import time

from kb.written import WrittenAnswer, WrittenFile
from kb.written_build import WrittenBuild, write_written

from .reload import Reloader

__all__ = ["Written"]

log = logging.getLogger("kb.server")


class Written:
    """The written answers of a server: their file, and the build that serves them."""

    def __init__(self, reloader: Reloader):
        self.reloader = reloader
        self.file = WrittenFile(reloader.settings.written_path)
        self._lock = asyncio.Lock()
        self.failed = ""  # why the last build failed ("" if it did not)

    async def answers(self) -> list[WrittenAnswer]:
        return await asyncio.to_thread(self.file.read)

    async def get(self, answer_id: str) -> WrittenAnswer | None:
        return await asyncio.to_thread(self.file.get, answer_id)

    async def save(self, answer: WrittenAnswer, version: str = "") -> None:
        """Save `answer` (new, or in place of the one with its id; with `version`, only over that version, else
        kb.written.AnswerChanged) and serve a build with it."""
        async with self._lock:
            await asyncio.to_thread(self.file.save, answer, version)
            await self._build()

    async def remove(self, answer_id: str) -> WrittenAnswer | None:
        """Remove the answer with `answer_id` and serve a build without it; None (nothing changed) when there is none."""
        async with self._lock:
            gone = await asyncio.to_thread(self.file.remove, answer_id)
            if gone is not None:
                await self._build()
            return gone

    async def _build(self) -> None:
        started = time.perf_counter()
        try:
            embedder = self.reloader.served.kb.searcher.embedder
            built: WrittenBuild = await asyncio.to_thread(write_written, self.reloader.settings, embedder)
            await self.reloader.reload()
        except Exception as exc:  # the old build keeps serving; the page says why
            self.failed = f"{type(exc).__name__}: {exc}"
            log.warning("building the index with the written answers failed: %s", self.failed)
            return
        self.failed = ""
        log.info(
            "built and swapped in the index with %d written answers in %.2f s (%d passages embedded)",
            built.written,
            time.perf_counter() - started,
            built.embedded,
        )
