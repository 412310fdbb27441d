"""Hot reload: swap a new index build in while the server runs, without failing a request.

`kb ingest` writes a new build and points `$KB_DATA_DIR/index` at it in one rename. The
server notices (it checks the link every `KB_RELOAD_INTERVAL` seconds, or at once on
`POST /admin/reload`), loads the new build beside the old one in a worker thread, and
swaps one reference. Each request takes that reference once, when it starts (`pin`), so its
search, chat and pages all come from one build, named in its `X-KB-Index` header; requests
already running finish on the old build. A build that fails to load is logged and the old
one keeps serving: whatever is wrong with it (a file FAISS or NumPy cannot read, a manifest
field of the wrong type), `/admin/reload` answers 409 with the reason, the watch logs it
once and keeps watching for the next build.

The links maintainers make (`kb.insights.taught_links`, in the insights database every replica
shares) are watched the same way: at each check a fingerprint of them is read, and when it
changed the links are loaded and the served build is replaced by the same build taught them. The harvested
drafts (those waiting and those accepted) are watched the same way, and read into the "see also" index every build
served shares (`kb.see_also`): at start-up, at each check when their fingerprint changed, and at once after a harvest or a
decision on /insights (`rethread`).
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping, TypeVar

from starlette.types import Scope

from kb import builds
from kb.chat import Chat
from kb.errors import BuildRefused, KBError
from kb.insights import InsightsStore
from kb.insights.taught_links import Link
from kb.judge import open_judge
from kb.knowledge import KnowledgeBase
from kb.llm import LLM
from kb.see_also import SeeAlso, stored_threads
from kb.settings import Settings
from kb.text import load_tokenizer

__all__ = ["Served", "Reloader", "ReloadOutcome", "pin", "pinned"]

log = logging.getLogger("kb.server")

T = TypeVar("T")


@dataclass(frozen=True)
class Served:
    """One build and what answers from it: the knowledge base and the chat on it."""

    kb: KnowledgeBase
    chat: Chat
    held: int  # `kb.builds.hold` on the build, so no ingest prunes it while it is served

    @property
    def build(self) -> str:
        return self.kb.path.name  # builds/<stamp>: unique, never rewritten


@dataclass(frozen=True)
class ReloadOutcome:
    reloaded: bool
    build: str
    previous: str
    entries: int


class Reloader:
    """Holds the served build and replaces it when the index link points elsewhere."""

    def __init__(
        self,
        settings: Settings,
        llm: LLM | None,
        store: InsightsStore | None = None,
        points: Mapping[str, float] | None = None,
    ):
        self.settings = settings
        self.points = dict(points or {})  # the channels' own operating points (`KnowledgeBase.points`)
        self.llm = llm
        self.store = store  # where the links are; None: nothing to learn from
        self.links: list[Link] = []
        self.links_state: tuple[int, ...] | None = None
        if store is not None:
            self.links_state, self.links = store.links.state(), store.links.all()
        self.judging = open_judge(settings)  # the second-stage judge, loaded once for every build
        # The harvested threads shown as "see also", shared by every build served; the drafts' fingerprint.
        self.see_also = SeeAlso()
        self.drafts_state: tuple[object, ...] | None = None
        started = time.perf_counter()
        self.served = self._load()
        log.info(
            "serving index build %s: %d entries, loaded in %.2f s",
            self.served.build,
            len(self.served.kb.entries),
            time.perf_counter() - started,
        )
        load_tokenizer()  # before the first Chinese question, not during it
        self._lock = asyncio.Lock()
        self._threads_lock = asyncio.Lock()
        self._working: set[asyncio.Future[Any]] = set()  # worker-thread calls still running, cancelled or not
        try:
            self._load_threads()
        except Exception as exc:  # the database is down: no "see also" until the watch reads the drafts
            log.error('cannot read the harvested drafts for "see also": %s', exc)
        self._failed: str = ""  # the build that last failed to load, so it is logged once

    def _load(self) -> Served:
        return self._serve(KnowledgeBase.open(self.settings, self.judging, points=self.points))

    def _serve(self, kb: KnowledgeBase) -> Served:
        kb.see_also = self.see_also
        # Taught even no link when `kb` was taught some: the last link undone leaves the build's own.
        if self.links or kb.searcher.learned is not kb.shipped:
            kb = kb.taught(self.links)
        return Served(kb, Chat(kb, self.llm), builds.hold(kb.path))

    async def relearn(self) -> bool:
        """Teach the served build the links, if they changed since last read; True if they had."""
        if self.store is None:
            return False
        async with self._lock:
            state = await self._in_thread(self.store.links.state)
            if state == self.links_state:
                return False
            self.links = await self._in_thread(self.store.links.all)
            self.links_state = state
            old = self.served
            self.served = await self._in_thread(self._serve, old.kb)
            builds.release(old.held)
            log.info("serving index build %s with %d links", self.served.build, len(self.links))
            return True

    def _load_threads(self) -> bool:
        """Read the drafts into the "see also" index if they changed since last read; whether they had. Blocks."""
        if self.store is None:
            return False
        state = self.store.drafts.state()
        if state == self.drafts_state:
            return False
        cache = self.settings.cache_dir / "embeddings.sqlite"
        held = self.see_also.load(stored_threads(self.store), self.served.kb.searcher.embedder, cache)
        self.drafts_state = state
        log.info('"see also" holds %d harvested threads', held)
        return True

    async def rethread(self) -> bool:
        """Read the harvested drafts into the "see also" index, if they changed since last read; True if they had."""
        async with self._threads_lock:
            return await self._in_thread(self._load_threads)

    async def _in_thread(self, call: Callable[..., T], *args: object) -> T:
        """`call(*args)` in a worker thread. Cancelling the caller does not stop the thread: `settle` waits for it."""
        work = asyncio.ensure_future(asyncio.to_thread(call, *args))
        self._working.add(work)
        work.add_done_callback(self._working.discard)
        return await asyncio.shield(work)

    async def settle(self) -> None:
        """Wait for the worker-thread calls still running (a cancelled watch's read), before the database closes."""
        await asyncio.gather(*self._working, return_exceptions=True)

    def close(self) -> None:
        builds.release(self.served.held)
        if self.judging is not None:
            self.judging.close()

    def _linked(self) -> Path:
        return Path(os.path.realpath(self.settings.index_dir))

    async def reload(self) -> ReloadOutcome:
        """Load the build the index link names, if it is not the one served; raises BuildRefused if it is broken."""
        async with self._lock:
            old, linked = self.served, self._linked()
            if linked == old.kb.path:
                return ReloadOutcome(False, old.build, old.build, len(old.kb.entries))
            started = time.perf_counter()
            try:
                new = await self._in_thread(self._load)
            except Exception as exc:  # whatever the build's files hold, the served build stays
                reason = str(exc) if isinstance(exc, KBError) else f"{type(exc).__name__}: {exc}"
                raise BuildRefused(
                    f"build {linked.name} not loaded ({reason}); still serving build {old.build}"
                ) from None
            self.served = new  # one assignment: a request sees the old build or the new one
            builds.release(old.held)  # requests still on it read memory only
            self._failed = ""
            log.info(
                "swapped in index build %s: %d entries, loaded in %.2f s (was %s)",
                new.build,
                len(new.kb.entries),
                time.perf_counter() - started,
                old.build,
            )
            return ReloadOutcome(True, new.build, old.build, len(new.kb.entries))

    async def watch(self, interval: float) -> None:
        """Check the index link every `interval` seconds and reload when it changes; runs until cancelled.

        A build that fails to load is logged once and not tried again until the link moves.
        """
        while True:
            await asyncio.sleep(interval)
            try:
                await self._check()
            except Exception as exc:  # the check itself failed (the data directory went away): try again next time
                self._log_once(f"checking {self.settings.index_dir}", f"cannot check {self.settings.index_dir}: {exc}")
            try:
                await self.relearn()
            except Exception as exc:  # the database is down: the links learned last stay, and it is tried again
                self._log_once("links", f"cannot read the links: {exc}")
            try:
                await self.rethread()
            except Exception as exc:  # the same: the threads read last stay shown
                self._log_once("drafts", f"cannot read the harvested drafts: {exc}")

    async def _check(self) -> None:
        linked = self._linked()
        if linked == self.served.kb.path or str(linked) == self._failed:
            return
        try:
            await self.reload()
        except BuildRefused as exc:
            self._log_once(str(linked), str(exc))

    def _log_once(self, failed: str, message: str) -> None:
        if failed != self._failed:
            self._failed = failed
            log.error("%s", message)


def pin(scope: Scope, served: Served) -> None:
    """Serve this request from `served` (`PinBuild` in server/middleware.py pins each request as it starts)."""
    scope.setdefault("state", {})["served"] = served


def pinned(scope: Scope) -> Served:
    """The build this request was pinned to when it started."""
    return scope["state"]["served"]
