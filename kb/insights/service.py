"""The insights as a maintainer works with them: the report, dismissed gaps, and the links that teach the knowledge base.

`Insights` is the one object the /insights page, its CSV exports, the links' admin API and
the votes' sessions go through: it owns the recorder's store (or says why there is none),
the gap finder, and the answer when the database server cannot be reached. The work itself
is the store's parts' (`insights.links`, `insights.pending`, `insights.drafts`, each
`InsightsStore`'s) and the book's (`book.py`), run in a worker thread so the event loop is
never blocked: `await insights.run(insights.pending.claim, channel, thread)`; the `kb` command
calls the same parts directly. It raises `InsightsOff` (no database could
be opened: nothing is recorded and links are off) and `InsightsUnreachable` (a database
server that is down), both in `kb.errors`, each saying what cannot be done; a server
answers both with 503 (server/error_handler.py).
"""

from __future__ import annotations

import time
from contextlib import contextmanager
from typing import TYPE_CHECKING, Callable, Iterator, ParamSpec, TypeVar

from ..errors import InsightsOff, InsightsUnreachable, KBError
from ..events import Voted
from ..hyperlinks import tracker_link
from .book import InsightsBook
from .harvested import HarvestedDrafts
from .links import Links
from .offload import off_loop
from .pending import PendingAnswers
from .report import Report, parse_since
from .store import InsightsStore, RecentQuestion
from .taught_links import Link
from .teach import learn

if TYPE_CHECKING:
    from ..knowledge import KnowledgeBase
    from .groups import Gap, GapFinder
    from .harvested import KeptDraft
    from .recorder import Recorder

__all__ = ["Insights"]

P = ParamSpec("P")
T = TypeVar("T")

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

# What each part's work says when the database server cannot be reached (the report's, for any other).
_UNREACHABLE: dict[type, str] = {
    Links: _LINKS_UNREACHABLE,
    PendingAnswers: _PENDING_UNREACHABLE,
    HarvestedDrafts: _DRAFTS_UNREACHABLE,
}


class Insights:
    """The report, dismissing and restoring gaps, and the links, over the recorder's store; any part's method
    through `run` (`await insights.run(insights.drafts.get, repo, number)`)."""

    def __init__(self, recorder: Recorder):
        self.recorder = recorder
        self._finder: GapFinder | None = None

    @property
    def feedback_on(self) -> bool:
        """Whether votes are taken: there is a database to keep them."""
        return self.recorder.store is not None

    async def vote(self, vote: Voted) -> None:
        """Write a vote, in a worker thread: committed when this returns (InsightsUnavailable when refused)."""
        await off_loop(self.recorder.record_vote, vote)

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

    def _store(self, off: str) -> InsightsStore:
        """The recorder's store; InsightsOff, saying `off`, when there is none."""
        if self.recorder.store is None:
            raise InsightsOff(off.format(problem=self.recorder.problem))
        return self.recorder.store

    def _book(self, off: str) -> InsightsBook:
        return InsightsBook(self._store(off))

    @property
    def links(self) -> Links:
        """The store's taught links; InsightsOff when there is no store."""
        return self._store(_LINKS_OFF).links

    @property
    def pending(self) -> PendingAnswers:
        """The store's answers waiting for a maintainer; InsightsOff when there is no store."""
        return self._store(_PENDING_OFF).pending

    @property
    def drafts(self) -> HarvestedDrafts:
        """The store's harvested drafts; InsightsOff when there is no store."""
        return self._store(_DRAFTS_OFF).drafts

    async def run(self, fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        """`fn`, a method of one of the store's parts (`insights.pending.claim`), in a worker thread;
        InsightsUnreachable, saying what waits, when the database server cannot be reached."""
        store = self._store(_NOTHING_RECORDED)
        unreachable = _UNREACHABLE.get(type(getattr(fn, "__self__", None)), _REPORT_UNREACHABLE)
        with self._reaching(store, unreachable):
            return await off_loop(fn, *args, **kwargs)

    @contextmanager
    def _reaching(self, store: InsightsStore, unreachable: str) -> Iterator[None]:
        """InsightsUnreachable when the database server cannot be reached (PostgreSQL down); other errors go on."""
        try:
            yield
        except KBError:
            raise
        except Exception as exc:
            if not store.unreachable(exc):
                raise
            raise InsightsUnreachable(unreachable.format(location=store.location)) from None

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
        with self._reaching(book.store, _REPORT_UNREACHABLE):
            return await off_loop(book.report, self.finder(kb), window, questions)

    async def dismiss(self, kb: KnowledgeBase, since: str, label: str) -> Gap | None:
        """Dismiss the gap of the window named `label`: its questions leave the list, now and after a restart.
        None when the window has no such gap."""
        report = await self.report(kb, since)
        gap = next((g for g in report.gaps if g.label == label), None)
        if gap is not None:
            await off_loop(self._store(_NOTHING_RECORDED).gaps.dismiss, [q.text for q in gap.questions])
        return gap

    async def restore(self, kb: KnowledgeBase, since: str, label: str) -> Gap | None:
        """Bring back the dismissed gap of the window named `label`; None when there is none."""
        report = await self.report(kb, since)
        gap = next((g for g in report.dismissed if g.label == label), None)
        if gap is not None:
            await off_loop(self._store(_NOTHING_RECORDED).gaps.restore, [q.text for q in gap.questions])
        return gap

    def check_links(self) -> None:
        """InsightsOff when links cannot be kept (before anything else about a link request is looked at)."""
        self._store(_LINKS_OFF)

    async def recent(self, limit: int, find: str = "") -> list[RecentQuestion]:
        """The last `limit` questions asked, newest first; those holding `find` when given."""
        store = self._store(_LINKS_OFF)
        with self._reaching(store, _LINKS_UNREACHABLE):
            return await off_loop(store.questions.recent, limit, find)

    async def link(self, kb: KnowledgeBase, question: str, entry_id: str | None) -> Link:
        """Link `question` to the entry that answers it (None: not covered by the FAQ); `kb.insights.teach.learn`."""
        book = self._book(_LINKS_OFF)
        with self._reaching(book.store, _LINKS_UNREACHABLE):
            return await learn(kb, book, question, entry_id)

    async def unlink(self, link_id: int) -> Link:
        """Undo a link (LinkNotFound when there is none)."""
        book = self._book(_LINKS_OFF)
        with self._reaching(book.store, _LINKS_UNREACHABLE):
            return await off_loop(book.undo_link, link_id)

    async def relink(self, link_id: int) -> Link:
        """Bring back an undone link (LinkNotFound when there is none)."""
        book = self._book(_LINKS_OFF)
        with self._reaching(book.store, _LINKS_UNREACHABLE):
            return await off_loop(book.restore_link, link_id)

    async def harvested(self, expire_days: int = 0) -> tuple[list[KeptDraft], dict[str, int]]:
        """The drafts from the tracker waiting for a maintainer (those untouched for `expire_days` deleted first,
        0: none), and how many are in each state."""
        store = self._store(_DRAFTS_OFF)

        def read() -> tuple[list[KeptDraft], dict[str, int]]:
            if expire_days:
                store.drafts.expire(time.time() - expire_days * 86400)
            return store.drafts.all(), store.drafts.counts()

        with self._reaching(store, _DRAFTS_UNREACHABLE):
            return await off_loop(read)

    async def link_from_tracker(self, kb: KnowledgeBase, question: str, entry_id: str, url: str) -> Link:
        """Link a thread's question to the entry that answers it, as an alternate learned from the tracker."""
        book = self._book(_LINKS_OFF)
        with self._reaching(book.store, _LINKS_UNREACHABLE):
            return await learn(kb, book, question, entry_id, origin="tracker", url=tracker_link(url))
