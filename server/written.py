"""The answers written on the insights page, as a server keeps them: each change saved to their
file, then a new build with them written and swapped in, one change at a time, off the event loop.

A change is saved (`kb.written.WrittenFile`), then `kb.written_build.write_written` writes a build
that is the served one with the written answers as the file now holds them (only their passages
are embedded; the embedding cache gives the rest), and the reloader swaps it in, as after
`kb ingest`: requests already running finish on the old build, and the other replicas pick the
build up at their next check. A build that fails leaves the old one serving and the file saved,
and the page says why; the next change, or `kb ingest`, builds it.

The file is the record: a change is saved before anything that depends on it is decided (an accepted draft from
the tracker, `server/routes/harvested.py`), and its build follows. Builds queued behind one another are made once
(a build started after a change holds it). A server killed between a save and its build builds it at its next
start-up (`reconcile`, which names the answers it found missing from the served build).
"""

from __future__ import annotations

import asyncio
import logging
import time

from kb.written import WrittenAnswer, WrittenFile, is_written
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
        self._changes = 0  # changes this process saved to the file
        self._built = 0  # of those, how many the last build made here holds
        self.failed = ""  # why the last build failed ("" if it did not)

    async def answers(self) -> list[WrittenAnswer]:
        return await asyncio.to_thread(self.file.read)

    async def get(self, answer_id: str) -> WrittenAnswer | None:
        return await asyncio.to_thread(self.file.get, answer_id)

    async def save(self, answer: WrittenAnswer, version: str = "") -> None:
        """Save `answer` (new, or in place of the one with its id; with `version`, only over that version, else
        kb.written.AnswerChanged) and serve a build with it."""
        await self.keep(answer, version)
        await self.serve()

    async def keep(self, answer: WrittenAnswer, version: str = "") -> None:
        """Save `answer` to the file, as `save` does, without building: `serve` builds it."""
        await asyncio.to_thread(self.file.save, answer, version)
        self._changes += 1

    async def remove(self, answer_id: str) -> WrittenAnswer | None:
        """Remove the answer with `answer_id` and serve a build without it; None (nothing changed) when there is none."""
        gone = await self.drop(answer_id)
        if gone is not None:
            await self.serve()
        return gone

    async def drop(self, answer_id: str) -> WrittenAnswer | None:
        """Remove the answer with `answer_id` from the file, as `remove` does, without building: `serve` builds it."""
        gone = await asyncio.to_thread(self.file.remove, answer_id)
        if gone is not None:
            self._changes += 1
        return gone

    async def serve(self) -> None:
        """Serve a build with the file as it is now; none is made when a build begun since the last change here
        holds it already."""
        wanted = self._changes
        async with self._lock:
            if self._built >= wanted:
                return
            holds = self._changes  # the build reads the file after every change saved so far
            if await self._build():
                self._built = holds

    async def reconcile(self) -> list[str]:
        """At start-up: the written answers the file holds that the served build does not hold as they are saved
        (a server stopped between a save and its build), named in a warning and built; their ids ([] when none)."""
        served = self.reloader.served.kb
        name = self.file.path.name
        held = {e.id: (e.question, e.answer) for e in served.entries if is_written(e, name)}
        saved = await asyncio.to_thread(self.file.entries)
        missing = [e.id for e in saved if held.get(e.id) != (e.question, e.answer)]
        removed = sorted(set(held) - {e.id for e in saved})
        if not missing and not removed:
            return []
        log.warning(
            "the served build does not hold the written answers of %s as saved (%s%s); building them",
            self.file.path,
            f"missing or changed: {', '.join(missing)}" if missing else "",
            f"{'; ' if missing else ''}removed: {', '.join(removed)}" if removed else "",
        )
        async with self._lock:
            await self._build()
        return missing

    async def _build(self) -> bool:
        started = time.perf_counter()
        try:
            embedder = self.reloader.served.kb.searcher.embedder
            built: WrittenBuild = await asyncio.to_thread(write_written, self.reloader.settings, embedder)
            await self.reloader.reload()
        except Exception as exc:  # the old build keeps serving; the page says why
            self.failed = f"{type(exc).__name__}: {exc}"
            log.warning("building the index with the written answers failed: %s", self.failed)
            return False
        self.failed = ""
        log.info(
            "built and swapped in the index with %d written answers in %.2f s (%d passages embedded)",
            built.written,
            time.perf_counter() - started,
            built.embedded,
        )
        return True
