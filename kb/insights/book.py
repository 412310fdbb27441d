"""The insights database as the report and the links use it, one call at a time and without threads.

`InsightsBook` is what `Insights` (`service.py`) runs in a worker thread for the server, and
what `kb insights`, `kb link` and `kb links` open: the store (`book.store`, whose parts the
commands call directly), the report, and undoing or restoring a link. Opening one opens the
store and nothing else: no writer thread starts and no old rows are pruned (that is the
recorder's work, `recorder.py`).
"""

from __future__ import annotations

from types import TracebackType
from typing import TYPE_CHECKING, Mapping

from ..errors import InsightsUnavailable, LinkNotFound
from ..settings import Settings
from .report import Report, gather
from .store import InsightsStore, store_path

if TYPE_CHECKING:
    from ..knowledge import KnowledgeBase
    from .groups import GapFinder
    from .taught_links import Link

__all__ = ["InsightsBook", "with_links"]


def with_links(kb: "KnowledgeBase", settings: Settings) -> "KnowledgeBase":
    """`kb` taught the active links of the insights database, as the server serves it (`KnowledgeBase.taught`);
    `kb` as it is when there is no database or no link. What a command that searches opens."""
    if not InsightsBook.exists(settings):
        return kb
    with InsightsBook.open(settings, create=False) as book:
        links = book.store.links.all()
    return kb.taught(links) if links else kb


class InsightsBook:
    """The report and the links undone or restored, over one `InsightsStore` (`store`)."""

    def __init__(self, store: InsightsStore):
        self.store = store

    @staticmethod
    def exists(settings: Settings) -> bool:
        """Whether there is a database to open: KB_DATABASE_URL, or the data directory's insights file."""
        return bool(settings.database_url) or store_path(settings.data_dir).exists()

    @classmethod
    def open(cls, settings: Settings, create: bool = True) -> InsightsBook:
        """The book of KB_DATABASE_URL, else of the SQLite file in the data directory (created when `create`);
        InsightsUnavailable when it cannot be opened, or when the file does not exist and `create` is off."""
        if not create and not cls.exists(settings):
            raise InsightsUnavailable(
                store_path(settings.data_dir),
                "does not exist: nothing has been recorded yet (the server records as it answers)",
            )
        return cls(InsightsStore(settings.database_url or store_path(settings.data_dir)))

    def close(self) -> None:
        self.store.close()

    def __enter__(self) -> InsightsBook:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.close()

    # The report

    def report(self, finder: GapFinder, window: float, entry_questions: Mapping[str, str], limit: int = 50) -> Report:
        """What was asked and voted in the last `window` seconds, at most `limit` rows a table; each entry
        named by `entry_questions[id]` where it has one (`report.gather`)."""
        return gather(self.store, finder, window, entry_questions, limit=limit)

    # The links

    def undo_link(self, link_id: int) -> Link:
        """Undo a link (its row is kept: `restore_link` brings it back); LinkNotFound when there is none."""
        link = self.store.links.remove(link_id)
        if link is None:
            raise LinkNotFound(link_id)
        return link

    def restore_link(self, link_id: int) -> Link:
        """Make an undone link active again (replacing any other active link of its question);
        LinkNotFound when there is none."""
        link = self.store.links.restore(link_id)
        if link is None:
            raise LinkNotFound(link_id)
        return link
