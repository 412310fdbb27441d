"""The insights as a maintainer works with them: the report, dismissed gaps, and the links that teach the knowledge base.

`Insights` is the one object the /insights page, its CSV exports, the links' admin API and
the votes' sessions go through: it owns the recorder's store (or says why there is none),
the gap finder, and the answer when the database server cannot be reached. The work itself
is `InsightsBook`'s (`book.py`), run in a worker thread so the event loop is never blocked;
the `kb` command calls the same book directly. It raises `InsightsOff` (no database could
be opened: nothing is recorded and links are off) and `InsightsUnreachable` (a database
server that is down), both in `kb.errors`, each saying what cannot be done; a server
answers both with 503 (server/error_handler.py).
"""

from __future__ import annotations

import asyncio
import time
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Callable, Iterator, Sequence

from ..errors import InsightsOff, InsightsUnreachable, KBError
from ..events import Voted
from ..hyperlinks import tracker_link
from .book import InsightsBook
from .records import PendingAnswer
from .report import Report, parse_since
from .store import InsightsStore, RecentQuestion
from .taught_links import Link
from .teach import learn, relearn_link, unlearn

if TYPE_CHECKING:
    from ..harvest.drafts import Asked, Draft
    from ..knowledge import KnowledgeBase
    from .groups import Gap, GapFinder
    from .harvested import KeptDraft
    from .recorder import Recorder

__all__ = ["Insights"]

_NOTHING_RECORDED = "nothing is recorded: {problem}"
_LINKS_OFF = "links are off: they are kept in the insights database, which cannot be used ({problem})"
_REPORT_UNREACHABLE = "the insights database {location} cannot be reached; questions and votes are kept meanwhile and written once it is back"
_PENDING_OFF = (
    "answers waiting for a maintainer are off: they are kept in the insights database, which cannot be used ({problem})"
)
_PENDING_UNREACHABLE = (
    "the insights database {location} cannot be reached; answers waiting for a maintainer wait until it is back"
)
_LINKS_UNREACHABLE = "the insights database {location} cannot be reached; links cannot be changed until it is back"
_DRAFTS_OFF = (
    "drafts from the tracker are off: they are kept in the insights database, which cannot be used ({problem})"
)
_DRAFTS_UNREACHABLE = (
    "the insights database {location} cannot be reached; drafts from the tracker wait until it is back"
)


class Insights:
    """The report, dismissing and restoring gaps, and the links, over the recorder's store."""

    def __init__(self, recorder: Recorder):
        self.recorder = recorder
        self._finder: GapFinder | None = None

    @property
    def feedback_on(self) -> bool:
        """Whether votes are taken: there is a database to keep them."""
        return self.recorder.store is not None

    async def vote(self, vote: Voted) -> None:
        """Write a vote, in a worker thread: committed when this returns (InsightsUnavailable when refused)."""
        await asyncio.to_thread(self.recorder.record_vote, vote)

    def pseudonym(self, identity: str) -> str:
        """A keyed hash of `identity` (a voter, a session), the same on every replica sharing the database."""
        return self.recorder.pseudonym(identity)

    @property
    def waiting(self) -> int:
        """Records not yet written."""
        return self.recorder.waiting

    @property
    def dropped(self) -> int:
        """Records dropped since start-up, the queue being full."""
        return self.recorder.dropped

    def _book(self, off: str) -> InsightsBook:
        if self.recorder.store is None:
            raise InsightsOff(off.format(problem=self.recorder.problem))
        return InsightsBook(self.recorder.store)

    @contextmanager
    def _reaching(self, book: InsightsBook, unreachable: str) -> Iterator[None]:
        """InsightsUnreachable when the database server cannot be reached (PostgreSQL down); other errors go on."""
        try:
            yield
        except KBError:
            raise
        except Exception as exc:
            if not book.store.unreachable(exc):
                raise
            raise InsightsUnreachable(unreachable.format(location=book.store.location)) from None

    def finder(self, kb: KnowledgeBase) -> GapFinder:
        """One for the program's life, so question vectors are embedded once across reports."""
        if self._finder is None:
            from .groups import GapFinder

            self._finder = GapFinder(kb.searcher.embedder)
        return self._finder

    async def report(self, kb: KnowledgeBase, since: str, lang: str | None = None) -> Report:
        """What was asked in the window `since` ("7d"); each entry named by its question in `lang` where it has one."""
        window = parse_since(since)
        book = self._book(_NOTHING_RECORDED)
        questions = {entry_id: entry.localized(lang).question for entry_id, entry in kb.by_id.items()}
        with self._reaching(book, _REPORT_UNREACHABLE):
            return await asyncio.to_thread(book.report, self.finder(kb), window, questions)

    async def dismiss(self, kb: KnowledgeBase, since: str, label: str) -> Gap | None:
        """Dismiss the gap of the window named `label`: its questions leave the list, now and after a restart.
        None when the window has no such gap."""
        report = await self.report(kb, since)
        gap = next((g for g in report.gaps if g.label == label), None)
        if gap is not None:
            await asyncio.to_thread(self._book(_NOTHING_RECORDED).dismiss_gap, gap)
        return gap

    async def restore(self, kb: KnowledgeBase, since: str, label: str) -> Gap | None:
        """Bring back the dismissed gap of the window named `label`; None when there is none."""
        report = await self.report(kb, since)
        gap = next((g for g in report.dismissed if g.label == label), None)
        if gap is not None:
            await asyncio.to_thread(self._book(_NOTHING_RECORDED).restore_gap, gap)
        return gap

    def check_links(self) -> None:
        """InsightsOff when links cannot be kept (before anything else about a link request is looked at)."""
        self._book(_LINKS_OFF)

    async def links(self, include_removed: bool = False) -> list[Link]:
        """The links, oldest first (`include_removed`: the undone and replaced ones too)."""
        book = self._book(_LINKS_OFF)
        with self._reaching(book, _LINKS_UNREACHABLE):
            return await asyncio.to_thread(book.links, include_removed)

    async def link_of(self, link_id: int) -> Link | None:
        """One link, active or not; None when there is none."""
        book = self._book(_LINKS_OFF)
        with self._reaching(book, _LINKS_UNREACHABLE):
            return await asyncio.to_thread(book.link_of, link_id)

    async def recent(self, limit: int, find: str = "") -> list[RecentQuestion]:
        """The last `limit` questions asked, newest first; those holding `find` when given."""
        book = self._book(_LINKS_OFF)
        with self._reaching(book, _LINKS_UNREACHABLE):
            return await asyncio.to_thread(book.recent, limit, find)

    async def link(self, kb: KnowledgeBase, question: str, entry_id: str | None) -> Link:
        """Link `question` to the entry that answers it (None: not covered by the FAQ); `kb.insights.teach.learn`."""
        book = self._book(_LINKS_OFF)
        with self._reaching(book, _LINKS_UNREACHABLE):
            return await learn(kb, book, question, entry_id)

    async def unlink(self, link_id: int) -> Link:
        """Undo a link (LinkNotFound when there is none)."""
        book = self._book(_LINKS_OFF)
        with self._reaching(book, _LINKS_UNREACHABLE):
            return await unlearn(book, link_id)

    async def relink(self, link_id: int) -> Link:
        """Bring back an undone link (LinkNotFound when there is none)."""
        book = self._book(_LINKS_OFF)
        with self._reaching(book, _LINKS_UNREACHABLE):
            return await relearn_link(book, link_id)

    async def keep_pending(self, answer: PendingAnswer) -> None:
        """Keep a channel's draft answer for its thread, waiting for a maintainer, over the one before (edited)."""
        await self._pending(lambda store: store.keep_pending(answer))

    async def pending(self, channel: str) -> list[PendingAnswer]:
        """`channel`'s answers waiting for a maintainer, newest first."""
        found: list[PendingAnswer] = await self._pending(lambda store: store.pending(channel))
        return found

    async def pending_answer(self, channel: str, thread: str) -> PendingAnswer | None:
        """The answer kept for `thread` of `channel`, waiting or claimed; None when there is none."""
        found: PendingAnswer | None = await self._pending(lambda store: store.pending_answer(channel, thread))
        return found

    async def claim_pending(self, channel: str, thread: str) -> PendingAnswer | None:
        """The waiting answer of `thread`, for this caller alone to post or dismiss (None: taken or gone already)."""
        found: PendingAnswer | None = await self._pending(lambda store: store.claim_pending(channel, thread))
        return found

    async def release_pending(self, answer: PendingAnswer) -> None:
        """A claimed answer back on the list (it could not be posted), unless its thread has a newer one."""
        await self._pending(lambda store: store.release_pending(answer))

    async def settle_pending(self, answer: PendingAnswer) -> None:
        """A claimed answer posted or dismissed: forgotten, unless its thread has a newer one."""
        await self._pending(lambda store: store.settle_pending(answer))

    async def drop_pending(self, channel: str, thread: str) -> bool:
        """Forget the answer kept for `thread` of `channel`; whether there was one."""
        dropped: bool = await self._pending(lambda store: store.drop_pending(channel, thread))
        return dropped

    async def _pending(self, work: Callable[[InsightsStore], Any]) -> Any:
        """`work` on the store's pending answers, in a worker thread, with the errors a server answers."""
        book = self._book(_PENDING_OFF)
        with self._reaching(book, _PENDING_UNREACHABLE):
            return await asyncio.to_thread(work, book.store)

    async def harvested(self, expire_days: int = 0) -> tuple[list[KeptDraft], dict[str, int]]:
        """The drafts from the tracker waiting for a maintainer (those untouched for `expire_days` deleted first,
        0: none), and how many are in each state."""
        book = self._book(_DRAFTS_OFF)
        store = book.store

        def read() -> tuple[list[KeptDraft], dict[str, int]]:
            if expire_days:
                store.expire_drafts(time.time() - expire_days * 86400)
            return store.drafts(), store.draft_counts()

        with self._reaching(book, _DRAFTS_UNREACHABLE):
            return await asyncio.to_thread(read)

    async def keep_drafts(self, drafts: Sequence[Draft]) -> int:
        """Keep harvested `drafts` for /insights, each in place of its thread's new one (`keep_drafts`); how many."""
        book = self._book(_DRAFTS_OFF)
        with self._reaching(book, _DRAFTS_UNREACHABLE):
            return await asyncio.to_thread(book.store.keep_drafts, drafts)

    async def join_draft(self, repo: str, number: int, asked: Asked) -> bool:
        """Add the thread `asked` to the new draft of `repo`#`number` (`join_draft`); whether there was one."""
        book = self._book(_DRAFTS_OFF)
        with self._reaching(book, _DRAFTS_UNREACHABLE):
            return await asyncio.to_thread(book.store.join_draft, repo, number, asked)

    async def harvested_draft(self, repo: str, number: int) -> KeptDraft | None:
        """The draft of `repo`#`number`, whatever its state; None when there is none."""
        book = self._book(_DRAFTS_OFF)
        with self._reaching(book, _DRAFTS_UNREACHABLE):
            return await asyncio.to_thread(book.store.harvested_draft, repo, number)

    async def accepted_drafts(self, limit: int = 1000) -> list[KeptDraft]:
        """The drafts accepted, each with the written answer it became (`written_id`, "" for alternates)."""
        book = self._book(_DRAFTS_OFF)
        with self._reaching(book, _DRAFTS_UNREACHABLE):
            return await asyncio.to_thread(book.store.drafts, "accepted", limit)

    async def decide_draft(self, repo: str, number: int, status: str, written_id: str = "") -> bool:
        """Mark the new draft of `repo`#`number` accepted (as `written_id`) or dismissed; whether there was one."""
        book = self._book(_DRAFTS_OFF)
        with self._reaching(book, _DRAFTS_UNREACHABLE):
            return await asyncio.to_thread(book.store.decide_draft, repo, number, status, written_id)

    async def link_from_tracker(self, kb: KnowledgeBase, question: str, entry_id: str, url: str) -> Link:
        """Link a thread's question to the entry that answers it, as an alternate learned from the tracker."""
        book = self._book(_LINKS_OFF)
        with self._reaching(book, _LINKS_UNREACHABLE):
            return await learn(kb, book, question, entry_id, origin="tracker", url=tracker_link(url))
