"""The knowledge base a program holds open: the index, the embedder and the searcher, loaded once."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from .adapter import QueryAdapter
from .embedding import open_embedder
from .entries import Entry, Source
from .errors import EntryNotFound, IndexUnreadable, SettingsError
from .glossary import load_glossary
from .hits import Hit, SearchResult
from .index import IndexMeta, read_index, read_meta
from .judge import Judging, open_judge
from .learning.overlay import Learned, TaughtQuestion
from .learning.questions import LearnedQuestion
from .lru import LRU
from .scoring import Calibration
from .search import Plan, Searcher
from .see_also import Resolved, SeeAlso
from .settings import Settings
from .syncs import moved_ids

__all__ = ["KnowledgeBase", "ON_LOOP_CHARS"]

# A question up to this long is planned and its words looked up on the event loop (well under a
# millisecond); a longer one, a pasted trace or log of up to 50,000 characters, in a worker
# thread, so that no other request waits while it is reduced and tokenized.
ON_LOOP_CHARS = 200


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
    # The second stage (KB_RERANK_MODEL, KB_RERANK): the judge, shared by every build, and the
    # calibration whose judged weights weigh its scores.
    judging: Judging | None = field(default=None, repr=False)
    calibration: Calibration | None = field(default=None, repr=False)
    # The judge's scores, by the question searched and the candidates it read, and judged results.
    verdicts: LRU[tuple[Any, ...], np.ndarray] = field(default_factory=lambda: LRU(0), repr=False)
    judged_results: LRU[Plan, SearchResult] = field(default_factory=lambda: LRU(0), repr=False)
    # Old id -> new id of the entries reworded upstream (`kb sync` keeps it with the build: `kb.syncs`).
    moved: dict[str, str] = field(default_factory=dict, repr=False)
    # The harvested threads a question the FAQ does not cover is shown ("see also"): one index every build
    # served shares (the server's reloader gives each build its own), empty until drafts are loaded into it.
    see_also: SeeAlso = field(default_factory=SeeAlso, repr=False)
    # The operating point each channel declares, by its name (a bot that posts in public declares a high one): handed
    # in as data by the program that serves the channels; KB_CHANNEL_PRECISION's override them.
    points: Mapping[str, float] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        if self.shipped is None:
            self.shipped = self.searcher.learned
        self.by_id = {e.id: e for e in self.searcher.entries}
        self.results.resize(self.settings.query_cache_size)
        self.verdicts.resize(self.settings.query_cache_size)
        self.judged_results.resize(self.settings.query_cache_size)
        self.position = {}
        for i, e in enumerate(self.searcher.entries):
            self.position.setdefault(e.id, i)

    @classmethod
    def open(
        cls,
        settings: Settings,
        judging: Judging | None = None,
        refit: bool = False,
        points: Mapping[str, float] | None = None,
    ) -> "KnowledgeBase":
        """Load the index at `settings.index_dir`, the embedder that built it, the calibration and
        the judge the settings configure (or `judging`, one already loaded). A calibration fitted
        with a judge that is not configured, or the reverse, raises CalibrationError naming the
        setting; `refit` (for `kb calibrate`, which fits a new one) leaves the judge out. `points` are the
        channels' own operating points (`precision_for`)."""
        calibration = Calibration.load(settings.calibration_path)
        if not refit:
            calibration.check(settings.judge, settings.rerank_model or settings.llm_model)
            judging = (judging or open_judge(settings)) if settings.judge else None
        meta = read_meta(settings.index_dir)
        embedder = open_embedder(settings.embed_model, settings.query_cache_size)
        if meta.model != embedder.model:
            raise IndexUnreadable(
                settings.index_dir,
                f"built with model {meta.model!r} but KB_EMBED_MODEL gives {embedder.model!r}; run `kb ingest` again",
            )
        index = read_index(settings.index_dir, model=embedder.model)
        adapter = _adapter(settings, index.adapter, embedder.model, embedder.dim)
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
            weights=calibration.weights,
            issue_weights=calibration.issues,
            adapter=adapter,
            precision=settings.answer_precision,
        )
        sources = _sources_of(index.entries)
        return cls(
            settings=settings,
            meta=index.meta,
            path=index.path,
            searcher=searcher,
            sources=sources,
            judging=None if refit else judging,
            calibration=calibration,
            moved=moved_ids(index.path),
            points=dict(points or {}),
        )

    @property
    def entries(self) -> list[Entry]:
        return self.searcher.entries

    def taught(self, links: Sequence[TaughtQuestion]) -> "KnowledgeBase":
        """This knowledge base with the active `links` learned beside what the build holds: a
        new object (its own result cache), the build's index and entries shared. A link made
        with another model, or to an entry this build lacks, is left out; one to an entry reworded
        upstream since (`moved`) is learned for its new id."""
        model = self.searcher.embedder.model
        usable = [link for link in links if link.model == model and link.vector.shape == (self.searcher.dense.dim,)]
        vectors = (
            np.stack([link.vector for link in usable]) if usable else np.zeros((0, self.searcher.dense.dim), np.float32)
        )
        # A link to an entry upstream reworded since (`kb sync` keeps the old id -> new id) follows it.
        questions = [link.learned() for link in usable]
        questions = [replace(q, entry=self.moved[q.entry]) if q.entry in self.moved else q for q in questions]
        learned = Learned.of(questions, vectors, self.position, self.searcher.dense.dim)
        assert self.shipped is not None
        searcher = self.searcher.with_learned(self.shipped + learned if len(learned) else self.shipped)
        return replace(self, searcher=searcher, results=LRU(0), judged_results=LRU(0), by_id={}, position={})

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
        judged: bool = True,
        precision: float | None = None,
        reads: str = "question",
    ) -> SearchResult:
        """The entries that best answer `question`, best first, and whether the best answers it.

        The one search call. The question is checked (a QueryError names the field at fault:
        empty, too long, an unknown tag or source), cleaned of tracker noise, a pasted stack
        trace reduced; the result says what was searched (`query`, `lang`, `searched`). `tags`
        and `source` restrict the entries, `lang` to one language. The event loop serves other
        requests while the model embeds the question.

        With a judge, the first stage's best KB_RERANK_TOP candidates are ranked again with its
        scores (`_judged`); `judged=False` gives the first stage alone (the live results).

        The result's verdict (`SearchResult.verdict`) is decided at the threshold of `precision` (a channel's
        operating point, `precision_for`; None: the searcher's, KB_ANSWER_PRECISION), on the confidence fitted on
        what the search `reads` (`kb.search.READS`: a question, or a whole issue).
        """
        k = k or self.settings.top_k
        if len(question) <= ON_LOOP_CHARS:
            plan = self.searcher.plan(question, k, tags=tags, source=source, lang=lang, reads=reads)
        else:
            plan = await asyncio.to_thread(
                self.searcher.plan, question, k, tags=tags, source=source, lang=lang, reads=reads
            )
        if self.judging is None or not judged:
            return self.answering_at(await self._first_stage(plan), precision, reads)
        result = self.judged_results.get(plan)
        if result is None:
            result, final = await self._judged(plan)
            if final:  # a failed judge is asked again next time
                self.judged_results.put(plan, result)
        return self.answering_at(result, precision, reads)

    def precision_for(self, channel: str | None) -> float:
        """The precision `channel` answers at: KB_CHANNEL_PRECISION's for it, else the point the channel declares
        (`points`), else KB_ANSWER_PRECISION."""
        name = channel or ""
        return self.settings.channel_precisions.get(name, self.points.get(name, self.settings.answer_precision))

    def answering_at(self, result: SearchResult, precision: float | None, reads: str = "question") -> SearchResult:
        """`result` decided at `precision`'s threshold (of the weights that scored it, for what it `reads`); as it
        is for None."""
        if precision is None:
            return result
        weights = self.searcher.answer_weights(reads)
        if result.judged and self.calibration is not None and self.calibration.judged is not None:
            weights = self.calibration.judged
        return result.at(weights.threshold(precision))

    async def _first_stage(self, plan: Plan) -> SearchResult:
        result = self.results.get(plan)
        if result is None:
            # The lexical half before the model, not while it runs. The model's OpenMP team has a
            # thread on every core, so work on the event loop meanwhile overlaps nothing: it holds
            # the GIL the embedding thread needs to start the model (which then started only once
            # the words were done anyway), and once the model runs it takes a core from the team,
            # whose threads wait for one another at every step.
            if len(plan.text) <= ON_LOOP_CHARS:
                words = self.searcher.words(plan)
            else:
                words = await asyncio.to_thread(self.searcher.words, plan)
            vector = await asyncio.wrap_future(self.searcher.embedder.query_vector(plan.embed_text))
            result = replace(self.searcher.rank(plan, vector, words), vector=vector)
            self.results.put(plan, result)
        return result

    async def _judged(self, plan: Plan) -> tuple[SearchResult, bool]:
        """The judged result, and whether it is final (False: the judge failed, and this is the
        first stage's). A question whose first stage leads by the calibration's `skip_gap` or
        more is not judged: on the calibration's questions the judge changed nothing there."""
        assert self.judging is not None and self.calibration is not None and self.calibration.judged is not None
        wide = replace(plan, k=max(plan.k, self.settings.rerank_top))
        first = await self._first_stage(wide)
        cut = replace(first, hits=first.hits[: plan.k])
        hits = first.hits
        if len(hits) < 2 or hits[0].score - hits[1].score >= self.calibration.skip_gap:
            self.judging.count("skipped")
            return cut, True
        candidates = hits[: self.settings.rerank_top]
        key = (plan.text, plan.query_lang, tuple(h.entry.id for h in candidates))
        scores = self.verdicts.get(key)
        if scores is not None:
            self.judging.count("cached")
        else:
            scores = await self.judging.scores(plan.text, [h.entry.localized(plan.query_lang) for h in candidates])
            if scores is None:
                return cut, False
            self.verdicts.put(key, scores)
        ids = np.array([self.position[h.entry.id] for h in hits], dtype=np.int64)
        judge = np.zeros(len(ids))
        judge[: len(scores)] = scores
        vector = await asyncio.wrap_future(self.searcher.embedder.query_vector(plan.embed_text))
        return replace(self.searcher.judged(plan, vector, ids, judge, self.calibration.judged), vector=vector), True

    def warm(self) -> None:
        """Load what a first search loads lazily (the model's weights, the word segmenter's dictionary) by
        searching once, in both languages, for a question no one asks."""
        self.search_blocking("warm up 预热", k=1)

    def search_blocking(self, *args: Any, **kwargs: Any) -> SearchResult:
        """`search` for a program without an event loop (the `kb` command, evaluation)."""
        return asyncio.run(self.search(*args, **kwargs))

    def resolved_threads(self, result: SearchResult, own_url: str = "") -> tuple[Resolved, ...]:
        """The resolved tracker threads to show below `result`'s entries as "see also" (`kb.see_also`): none unless its
        state is `likely` or `not_covered`, never the question's own thread (`own_url`, when the channel knows it)."""
        return self.see_also.near(result, self.searcher, own_url)

    def now_id(self, entry_id: str) -> str | None:
        """The id an entry reworded upstream has now, when `entry_id` was one of its old ids; else None."""
        moved = self.moved.get(entry_id)
        return moved if moved is not None and moved in self.by_id else None

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
        ids = searcher.scopes.beside(position, ids[ids != position])
        scores = searcher.entry_cosines(ids, vector)
        order = np.argsort(-scores, kind="stable")[:k]
        return [
            Hit(self.entries[int(ids[j])].localized(lang), round(float(scores[j]), 4), rank)
            for rank, j in enumerate(order, 1)
        ]


def _adapter(settings: Settings, built: QueryAdapter | None, model: str, dim: int) -> QueryAdapter | None:
    """The query adapter KB_QUERY_ADAPTER gives: the build's (`on`), none (`off`), or a file's,
    which must have been fitted for this model (a SettingsError naming the setting if not)."""
    choice = settings.query_adapter.strip()
    if choice.lower() == "on":
        return built
    if choice.lower() == "off":
        return None
    path = Path(choice).expanduser()
    try:
        adapter = QueryAdapter.load(path)
    except (OSError, ValueError) as exc:
        raise SettingsError("KB_QUERY_ADAPTER", choice, f"`on`, `off` or a query adapter file ({exc})") from None
    if adapter.model != model or adapter.dim != dim:
        raise SettingsError(
            "KB_QUERY_ADAPTER",
            choice,
            f"an adapter fitted for the model the index is built with ({model!r}); this one was fitted for "
            f"{adapter.model!r}: run `kb tune`, or set KB_QUERY_ADAPTER=off",
        )
    return adapter


def _sources_of(entries: list[Entry]) -> list[Source]:
    """The sources the entries came from, in first-seen order (from what the index stores)."""
    seen: dict[str, Source] = {}
    for e in entries:
        if e.source not in seen:
            seen[e.source] = Source(
                name=e.source,
                file="",
                title=e.source_title,
                titles=e.source_titles,
                framework=e.framework,
                lang=e.lang,
                version=e.source_version,
                url=e.source_url,
            )
    return list(seen.values())
