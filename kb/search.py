"""Search: dense (e5) and lexical (jieba and identifier tokens) evidence, fused,
and the decision whether the best entry is good enough to answer with."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from .embedding import Embedder
from .entries import Entry
from .errors import QueryError
from .glossary import Glossary
from .lexical import LexicalIndex, QueryTerms
from .spelling import Spelling
from .stacktrace import reduce_trace
from .text import detect_lang, tokenize

__all__ = ["Hit", "Plan", "Signals", "SearchResult", "Searcher", "Weights"]

SPELLING_WEIGHT = 0.8  # a word one edit away is nearly the word


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
    lang: str = "en"


class Searcher:
    """Everything a search needs, loaded once: entries, vectors, lexical index, background."""

    def __init__(
        self,
        entries: Sequence[Entry],
        vectors: np.ndarray,
        embedder: Embedder,
        glossary: Glossary,
        background: np.ndarray,
        max_query_chars: int = 2000,
        weights: Weights = Weights(),
    ):
        self.weights = weights
        self.entries = list(entries)
        self.vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        self.embedder = embedder
        self.glossary = glossary
        self.background = np.ascontiguousarray(background, dtype=np.float32)
        self.max_query_chars = max_query_chars
        # The framework's name belongs with the question: "slime OOM" asks about slime's OOM.
        self.lexical = LexicalIndex(
            [tokenize(f"{e.framework} {e.question}") for e in self.entries],
            [tokenize(f"{e.section}\n{e.answer}") for e in self.entries],
        )
        self.spelling = Spelling(self.lexical.both.vocabulary)
        self._frameworks = np.array([tokenize(e.framework)[0] if tokenize(e.framework) else "" for e in self.entries])
        self._tags = {t for e in self.entries for t in e.tags}
        self._sources = {e.source for e in self.entries}

    def _check(self, query: str, tags: Sequence[str], source: str | None) -> str:
        query = query.strip()
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

    def _allowed(self, tags: Sequence[str], source: str | None, lang: str | None) -> np.ndarray:
        keep = np.ones(len(self.entries), dtype=bool)
        if tags or source or lang:
            for i, e in enumerate(self.entries):
                keep[i] = (
                    all(t in e.tags for t in tags)
                    and (source is None or e.source == source)
                    and (lang is None or e.lang == lang)
                )
        return keep

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
        cosine = self.vectors @ q
        background = float(np.sort(self.background @ q)[-3:].mean()) if len(self.background) else 0.0

        terms = self._respell(self.glossary.query_terms(plan.text))
        w = self.weights
        coverage = self.lexical.coverage(terms)
        question = self.lexical.coverage(terms, self.lexical.question)
        named = np.isin(self._frameworks, [g[0][0] for g in terms.groups])
        score = (
            (cosine - background)
            + w.question * question
            + w.coverage * coverage
            + w.framework * named
        )

        allowed = self._allowed(plan.tags, plan.source, plan.lang)
        order = [i for i in np.argsort(-score, kind="stable") if allowed[i]][: plan.k]
        hits = tuple(
            Hit(
                entry=self.entries[i],
                score=round(float(score[i]), 4),
                rank=rank,
                matched=self._matched(terms, i),
                signals=Signals(
                    float(cosine[i]), background, float(coverage[i]), float(question[i])
                ),
            )
            for rank, i in enumerate(order, 1)
        )
        answered = bool(hits) and self._confident(hits, plan.query_lang)
        return SearchResult(query=plan.query, answered=answered, hits=hits, lang=plan.query_lang)

    def _respell(self, terms: QueryTerms) -> QueryTerms:
        """Give each query word the corpus lacks its near spellings as alternatives."""
        groups = []
        for group in terms.groups:
            near = self.spelling.near(group[0][0])
            groups.append(group + tuple((word, SPELLING_WEIGHT) for word in near))
        return QueryTerms(tuple(groups))

    def _matched(self, terms: QueryTerms, i: int) -> tuple[str, ...]:
        found = []
        for group in terms.groups:
            for term, _ in group:
                if i in set(self.lexical.both.matches(term).tolist()):
                    found.append(term)
        return tuple(dict.fromkeys(found))

    def _confident(self, hits: tuple[Hit, ...], lang: str) -> bool:
        best = hits[0]
        assert best.signals is not None
        return best.score >= self.weights.margin(lang)
