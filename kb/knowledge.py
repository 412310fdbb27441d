"""The knowledge base a program holds open: the index, the embedder and the searcher, loaded once."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from .embedding import open_embedder
from .entries import Entry, Source
from .errors import EntryNotFound, IndexUnreadable
from .glossary import load_glossary
from .index import IndexMeta, read_index, read_meta
from .learning.links import Link
from .learning.overlay import Learned
from .learning.questions import LearnedQuestion
from .lru import LRU
from .hits import Hit, SearchResult
from .search import Plan, Searcher
from .settings import Settings

__all__ = ["KnowledgeBase"]


@dataclass
class KnowledgeBase:
    settings: Settings
    meta: IndexMeta
    path: Path
    searcher: Searcher
    sources: list[Source]
    by_id: dict[str, Entry] = field(default_factory=dict, repr=False)
    position: dict[str, int] = field(default_factory=dict, repr=False)  # entry id -> its row in the index
    # The results of recent searches (neither a build nor what has been learned changes
    # while this object serves): a repeated question, common from Slack and the widget's
    # suggestions, skips all the work.
    results: LRU[Plan, SearchResult] = field(default_factory=lambda: LRU(0), repr=False)
    # The learned questions the build holds (from the sources' files), before any link.
    shipped: Learned | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if self.shipped is None:
            self.shipped = self.searcher.learned
        self.by_id = {e.id: e for e in self.searcher.entries}
        self.results.resize(self.settings.query_cache_size)
        self.position = {}
        for i, e in enumerate(self.searcher.entries):
            self.position.setdefault(e.id, i)

    @classmethod
    def open(cls, settings: Settings) -> "KnowledgeBase":
        """Load the index at `settings.index_dir` and the embedder that built it."""
        meta = read_meta(settings.index_dir)
        embedder = open_embedder(settings.embed_model, settings.query_cache_size)
        if meta.model != embedder.model:
            raise IndexUnreadable(
                settings.index_dir,
                f"built with model {meta.model!r} but KB_EMBED_MODEL gives {embedder.model!r}; "
                "run `kb ingest` again",
            )
        index = read_index(settings.index_dir, model=embedder.model)
        searcher = Searcher(
            index.entries,
            index.vectors,
            embedder,
            load_glossary(),
            index.background,
            max_query_chars=settings.max_query_chars,
            rows=index.rows,
            lexical=index.lexical,
            learned=index.learned,
        )
        sources = _sources_of(index.entries)
        return cls(settings=settings, meta=index.meta, path=index.path, searcher=searcher, sources=sources)

    @property
    def entries(self) -> list[Entry]:
        return self.searcher.entries

    def taught(self, links: Sequence[Link]) -> "KnowledgeBase":
        """This knowledge base with the active `links` learned beside what the build holds: a
        new object (its own result cache), the build's index and entries shared. A link made
        with another model, or to an entry this build lacks, is left out."""
        model = self.searcher.embedder.model
        usable = [link for link in links if link.model == model and link.vector.shape == (self.searcher.dense.dim,)]
        vectors = np.stack([link.vector for link in usable]) if usable else np.zeros((0, self.searcher.dense.dim), np.float32)
        learned = Learned.of([link.learned() for link in usable], vectors, self.position, self.searcher.dense.dim)
        assert self.shipped is not None
        searcher = self.searcher.with_learned(self.shipped + learned if len(learned) else self.shipped)
        return replace(self, searcher=searcher, results=LRU(0), by_id={}, position={})

    def alternates(self, entry_id: str) -> list[LearnedQuestion]:
        """The entry's alternate questions: its sources' files', then links', in the order learned."""
        self.get(entry_id)
        return self.searcher.learned.of_entry(self.position[entry_id])

    async def search(
        self,
        question: str,
        k: int | None = None,
        tags: Sequence[str] = (),
        source: str | None = None,
        lang: str | None = None,
    ) -> SearchResult:
        """The entries that best answer `question`, best first, and whether the best answers it.

        The one search call. The question is checked (a QueryError names the field at fault:
        empty, too long, an unknown tag or source), cleaned of tracker noise, a pasted stack
        trace reduced; the result says what was searched (`query`, `lang`, `searched`). `tags`
        and `source` restrict the entries, `lang` to one language. The event loop serves other
        requests while the model embeds the question.
        """
        plan = self.searcher.plan(question, k or self.settings.top_k, tags=tags, source=source, lang=lang)
        result = self.results.get(plan)
        if result is None:
            # The lexical half before the model, not while it runs. The model's OpenMP team has a
            # thread on every core, so work on the event loop meanwhile overlaps nothing: it holds
            # the GIL the embedding thread needs to start the model (which then started only once
            # the words were done anyway), and once the model runs it takes a core from the team,
            # whose threads wait for one another at every step.
            words = self.searcher.words(plan)
            vector = await asyncio.wrap_future(self.searcher.embedder.query_vector(plan.embed_text))
            result = self.searcher.rank(plan, vector, words)
            self.results.put(plan, result)
        return result

    def search_blocking(self, *args: Any, **kwargs: Any) -> SearchResult:
        """`search` for a program without an event loop (the `kb` command, evaluation)."""
        return asyncio.run(self.search(*args, **kwargs))

    def get(self, entry_id: str) -> Entry:
        try:
            return self.by_id[entry_id]
        except KeyError:
            raise EntryNotFound(entry_id) from None

    def related(self, entry_id: str, k: int = 3, lang: str | None = None) -> list[Hit]:
        """The entries nearest to this one (by their vectors), best first: a search of the
        vector index with the entry's own vector, the entry itself left out; each in `lang`
        where it has that version."""
        self.get(entry_id)
        position = self.position[entry_id]
        searcher = self.searcher
        vector = searcher.dense.vectors(searcher.rows.rows_of(np.array([position]))[:1])[0]
        ids = searcher.rows.entries_of(searcher.dense.nearest(vector, (k + 1) * 4))
        ids = ids[ids != position]
        scores = searcher.entry_cosines(ids, vector)
        order = np.argsort(-scores, kind="stable")[:k]
        return [
            Hit(self.entries[int(ids[j])].localized(lang), round(float(scores[j]), 4), rank)
            for rank, j in enumerate(order, 1)
        ]


def _sources_of(entries: list[Entry]) -> list[Source]:
    """The sources the entries came from, in first-seen order (from what the index stores)."""
    seen: dict[str, Source] = {}
    for e in entries:
        if e.source not in seen:
            seen[e.source] = Source(
                name=e.source,
                file="",
                title=e.source_title,
                framework=e.framework,
                lang=e.lang,
                version=e.source_version,
                url=e.source_url,
            )
    return list(seen.values())
