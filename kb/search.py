"""Search: dense (e5) and lexical (jieba and identifier tokens) evidence, fused,
and the decision whether the best entry is good enough to answer with.

A search scores candidates, not the whole corpus: the entries nearest the query in the
vector index and the entries that best cover its words in the postings, at most
`CANDIDATES` of each. Only their union gets the fused score. A corpus of up to
`CANDIDATES` entries is scored whole, exactly as if every entry were compared.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Sequence

import faiss
import numpy as np

from .dense import DenseIndex, EntryRows
from .embedding import Embedder
from .entries import Entry
from .errors import QueryError
from .filters import Filters
from .glossary import Glossary
from .lexical import LexicalIndex, QueryTerms
from .spelling import Spelling
from .stacktrace import reduce_trace
from .text import clean_query, detect_lang, tokenize

__all__ = ["Hit", "Plan", "Signals", "SearchResult", "Searcher", "Weights"]

SPELLING_WEIGHT = 0.8  # a word one edit away is nearly the word
# Entries taken from each side (nearest vectors, best word coverage) to be scored. Any entry
# the fused score could put in the top few is near the top of one side or the other.
CANDIDATES = 200


@dataclass(frozen=True)
class Weights:
    """How the evidence is weighed (chosen with `kb eval`; see README, Retrieval quality)."""

    question: float = 0.05  # share of the query found in the entry's question
    coverage: float = 0.20  # share of the query found anywhere in the entry
    framework: float = 0.05  # the query names the entry's framework ("slime OOM")
    # Score the best entry needs before it is given as the answer, by query language: set
    # between what out-of-scope and in-scope queries score (see README, Retrieval quality).
    answer_margin: tuple[tuple[str, float], ...] = (("zh", 0.08), ("en", 0.06))

    def margin(self, lang: str) -> float:
        return dict(self.answer_margin).get(lang, dict(self.answer_margin)["en"])


@dataclass(frozen=True)
class Signals:
    """The evidence behind a score, for `kb eval --explain`."""

    cosine: float  # query · entry
    background: float  # what general-domain sentences score for this query
    coverage: float  # share of the query's weight this entry contains
    question: float  # share of the query's weight this entry's question contains


@dataclass(frozen=True)
class Hit:
    entry: Entry
    score: float
    rank: int
    matched: tuple[str, ...] = ()  # query terms found in the entry, for highlighting
    signals: Signals | None = field(default=None, compare=False)


@dataclass(frozen=True)
class Plan:
    """A checked query and the text to embed for it: the half of a search before the model runs."""

    query: str
    k: int
    tags: tuple[str, ...]
    source: str | None
    lang: str | None  # only entries in this language
    query_lang: str  # the language the query is written in
    text: str  # the query, a pasted stack trace reduced to what identifies it
    embed_text: str  # `text` with its glossary equivalents, as the model sees it


@dataclass(frozen=True)
class SearchResult:
    query: str
    answered: bool
    hits: tuple[Hit, ...]
    lang: str = "en"  # the language the query is written in

    def in_language(self, hl: str | None = None) -> "SearchResult":
        """The same hits, each entry in the reader's language `hl` (default: the query's)
        where it has that version. Which entries, their order, scores and `answered` stay."""
        hl = hl or self.lang
        hits = tuple(replace(h, entry=h.entry.localized(hl)) for h in self.hits)
        return replace(self, hits=hits)


def _dense_index(vectors: faiss.Index | DenseIndex | np.ndarray) -> DenseIndex:
    if isinstance(vectors, DenseIndex):
        return vectors
    if isinstance(vectors, np.ndarray):
        return DenseIndex.from_vectors(vectors)
    return DenseIndex(vectors)


class Searcher:
    """Everything a search needs, loaded once: entries, vector index, lexical index, filters, background."""

    def __init__(
        self,
        entries: Sequence[Entry],
        vectors: faiss.Index | DenseIndex | np.ndarray,
        embedder: Embedder,
        glossary: Glossary,
        background: np.ndarray,
        max_query_chars: int = 2000,
        weights: Weights = Weights(),
        lexical: LexicalIndex | None = None,
        candidates: int = CANDIDATES,
        rows: EntryRows | None = None,
    ):
        """`vectors` is the index's FAISS index (a matrix is put in a flat one); `rows` says
        which entry each vector belongs to (default: one each, in order). `lexical`, when
        given, is used instead of tokenizing the entries (for corpora tokenized elsewhere,
        as in bench/bench_scale.py)."""
        self.weights = weights
        self.entries = list(entries)
        self.dense = _dense_index(vectors)
        self.rows = rows or EntryRows.one_each(len(self.entries))
        if self.dense.size != len(self.rows.owners):
            raise ValueError(f"{len(self.rows.owners)} rows but {self.dense.size} vectors")
        self.embedder = embedder
        self.glossary = glossary
        self.background = np.ascontiguousarray(background, dtype=np.float32)
        self.max_query_chars = max_query_chars
        self.candidates = candidates
        # The framework's name belongs with the question: "slime OOM" asks about slime's OOM.
        # Every language an entry has is matched: a question meets whichever version it shares words with.
        self.lexical = lexical or LexicalIndex(
            [tokenize(" ".join([e.framework] + [v.question for v in e.versions()])) for e in self.entries],
            [tokenize("\n".join(f"{v.section}\n{v.answer}" for v in e.versions())) for e in self.entries],
        )
        self.spelling = Spelling(self.lexical.both.vocabulary)
        self.filters = Filters(self.entries)
        # The dense side filters vectors, not entries: a vector has its entry's tags and languages.
        self.row_filters = self.filters if self.rows.identity else Filters([self.entries[o] for o in self.rows.owners])
        # Each entry's framework as the word a query names it by, coded as a small integer.
        words = {name: (tokenize(name) or [""])[0] for name in {e.framework for e in self.entries}}
        self._framework_code = {word: code for code, word in enumerate(dict.fromkeys(words.values()))}
        self._frameworks = np.array([self._framework_code[words[e.framework]] for e in self.entries], dtype=np.int32)
        self._tags = {t for e in self.entries for t in e.tags}
        self._sources = {e.source for e in self.entries}

    def _check(self, query: str, tags: Sequence[str], source: str | None) -> str:
        query = clean_query(query).strip()
        if not query:
            raise QueryError("q", "the query is empty")
        if len(query) > self.max_query_chars:
            raise QueryError("q", f"the query is {len(query)} characters; the limit is {self.max_query_chars}")
        for tag in tags:
            if tag not in self._tags:
                raise QueryError("tag", f"unknown tag {tag!r}")
        if source is not None and source not in self._sources:
            raise QueryError("source", f"unknown source {source!r}; known: {', '.join(sorted(self._sources))}")
        return query

    def plan(
        self,
        query: str,
        k: int = 5,
        tags: Sequence[str] = (),
        source: str | None = None,
        lang: str | None = None,
    ) -> Plan:
        """Check the query and work out what to embed; raises QueryError naming the field at fault."""
        query = self._check(query, tags, source)
        text = reduce_trace(query)  # a pasted stack trace, down to what identifies it
        return Plan(
            query=query, k=k, tags=tuple(tags), source=source, lang=lang,
            query_lang=detect_lang(query), text=text, embed_text=self.glossary.gloss(text),
        )

    def search(
        self,
        query: str,
        k: int = 5,
        tags: Sequence[str] = (),
        source: str | None = None,
        lang: str | None = None,
    ) -> SearchResult:
        plan = self.plan(query, k, tags, source, lang)
        return self.rank(plan, self.embedder.embed_query(plan.embed_text))

    def rank(self, plan: Plan, q: np.ndarray) -> SearchResult:
        """The best entries for a planned query, given its embedding `q`."""
        background = float(np.sort(self.background @ q)[-3:].mean()) if len(self.background) else 0.0
        terms = self._respell(self.glossary.query_terms(plan.text))
        allowed = self.filters.subset(plan.tags, plan.source, plan.lang)
        allowed_rows = self.row_filters.subset(plan.tags, plan.source, plan.lang)
        depth = max(self.candidates, plan.k)
        near = self.rows.entries_of(self.dense.nearest(q, depth, allowed_rows))
        ids = np.union1d(near, self.lexical.top(terms, depth, allowed))

        w = self.weights
        cosine = self.entry_cosines(ids, q)
        coverage = self.lexical.scores(terms, ids)
        question = self.lexical.scores(terms, ids, self.lexical.question)
        named = np.isin(self._frameworks[ids], [self._framework_code.get(g[0][0], -1) for g in terms.groups])
        score = (
            (cosine - background)
            + w.question * question
            + w.coverage * coverage
            + w.framework * named
        )

        order = np.argsort(-score, kind="stable")[: plan.k]  # ids ascend, so ties go to the earlier entry
        matched = self._matched(terms, ids[order])
        hits = tuple(
            Hit(
                entry=self.entries[int(ids[j])],
                score=round(float(score[j]), 4),
                rank=rank,
                matched=matched[rank - 1],
                signals=Signals(
                    float(cosine[j]), background, float(coverage[j]), float(question[j])
                ),
            )
            for rank, j in enumerate(order, 1)
        )
        answered = bool(hits) and self._confident(hits, plan.query_lang)
        return SearchResult(query=plan.query, answered=answered, hits=hits, lang=plan.query_lang)

    def entry_cosines(self, ids: np.ndarray, q: np.ndarray) -> np.ndarray:
        """Each entry's cosine with `q`: the best of its vectors'."""
        return self.rows.best(ids, self.dense.cosines(self.rows.rows_of(ids), q))

    def _respell(self, terms: QueryTerms) -> QueryTerms:
        """Give each query word the corpus lacks its near spellings as alternatives."""
        groups = []
        for group in terms.groups:
            near = self.spelling.near(group[0][0])
            groups.append(group + tuple((word, SPELLING_WEIGHT) for word in near))
        return QueryTerms(tuple(groups))

    def _matched(self, terms: QueryTerms, ids: np.ndarray) -> list[tuple[str, ...]]:
        """The query terms each of the entries `ids` contains, in query order."""
        found: list[list[str]] = [[] for _ in ids]
        for group in terms.groups:
            for term, _ in group:
                for j in np.flatnonzero(self.lexical.both.contains(term, ids)):
                    found[j].append(term)
        return [tuple(dict.fromkeys(words)) for words in found]

    def _confident(self, hits: tuple[Hit, ...], lang: str) -> bool:
        best = hits[0]
        assert best.signals is not None
        return best.score >= self.weights.margin(lang)
