"""Teaching the knowledge base while it serves: link a question to the entry that answers it, or mark it
not covered by the FAQ (undoing a link, or bringing it back, is `InsightsBook`'s).

A link's vector is the model's embedding of what a search embeds of the question
(`kb.search.searched_text`: tracker noise taken out, a pasted stack trace reduced), so that
asking the question again meets it. The embedding runs on the embedder's own thread and the
database is written in a worker thread: neither blocks the event loop of a server.

A server that has made a change reloads the links (`Reloader.relearn` in server/reload.py);
the other replicas see it at their next check. `kb link` does the same from the command line.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from ..errors import QueryError, shown
from ..learning.questions import ORIGINS
from ..text import checked_query, detect_lang
from .offload import off_loop
from .taught_links import Link

if TYPE_CHECKING:
    from ..knowledge import KnowledgeBase
    from .book import InsightsBook

__all__ = ["learn"]


async def learn(
    kb: KnowledgeBase,
    book: InsightsBook,
    question: str,
    entry: str | None,
    origin: str = "asked",
    url: str = "",
    field: str = "entry_id",
) -> Link:
    """Link `question` to the entry with id `entry` of `kb` (None: the FAQ does not cover it) and keep the
    link in `book`. An active link of the same question is replaced (linking again moves it).

    A QueryError names the field at fault: `field` for an id `kb` has no entry with, `question` for an
    empty or too long question, `origin` for an unknown origin."""
    from ..search import searched_text

    if entry is not None and entry not in kb.by_id:
        raise QueryError(field, f"no entry with id {shown(entry)}")
    if origin not in ORIGINS:
        raise QueryError("origin", f"unknown origin {shown(origin)}; use one of {', '.join(map(repr, ORIGINS))}")
    # As linked: a question longer than the limit is refused, even a pasted trace.
    text = checked_query(question, kb.settings.max_query_chars, "question", "question", traces=False)
    searched = searched_text(text) or text
    embedder = kb.searcher.embedder
    vector = await asyncio.wrap_future(embedder.query_vector(searched))
    return await off_loop(book.store.links.add, text, detect_lang(text), entry, vector, embedder.model, origin, url)
