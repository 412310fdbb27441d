"""Search: dense (e5) and lexical (jieba and identifier tokens) evidence, fused,
and the decision whether the best entry is good enough to answer with.

A search scores candidates, not the whole corpus: the entries nearest the query in the
vector index and the entries that best cover its words in the postings, at most
`CANDIDATES` of each. Only their union gets the fused score. A corpus of up to
`CANDIDATES` entries is scored whole, exactly as if every entry were compared.
"""

from __future__ import annotations

import copy
from dataclasses import replace
from typing import Sequence

import faiss
import numpy as np

from .adapter import QueryAdapter
from .dense import DenseIndex, EntryRows, matvec
from .embedding import Embedder
from .entries import Entry
from .filters import Filters
from .frameworks import Frameworks
from .glossary import Glossary
from .hits import Hit, SearchResult, Signals
from .hubs import demoted, links_only_entries
from .learning.overlay import Learned, LearnedMatch
from .lexical import LexicalIndex, QueryTerms, Weighed
from .plan import READS, Evidence, Plan, Words, searched_text
from .quoted_errors import QuotedErrors
from .scope import Scopes
from .scoring import Features, Weights
from .spelling import Spelling
from .text import checked_query, detect_lang
from .verbatim import CERTAIN, Verbatim

# What a search returns lives in kb.hits, how it is scored in kb.scoring: import them from there.
__all__ = ["Plan", "Words", "Searcher", "searched_text", "READS"]  # Plan, Words, READS: kb.plan's

SPELLING_WEIGHT = 0.8  # a word one edit away is nearly the word
# Entries taken from each side (nearest vectors, best word coverage) to be scored. Any entry
# the fused score could put in the top few is near the top of one side or the other.
CANDIDATES = 200
# Entries whose alternates come nearest the query, added to the candidates.
LEARNED_CANDIDATES = 20
# A question this close to one the FAQ is known not to cover (and nearer to it than to any
# entry) is that question, or a rewording of it: the search abstains whatever the answer
# model would say.
SAME_QUESTION = 0.97


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
        weights: Weights | None = None,
        lexical: LexicalIndex | None = None,
        candidates: int = CANDIDATES,
        rows: EntryRows | None = None,
        learned: Learned | None = None,
        adapter: QueryAdapter | None = None,
        precision: float | None = None,
        issue_weights: Weights | None = None,
    ):
        """`vectors` is the index's FAISS index (a matrix is put in a flat one); `rows` says
        which entry each vector belongs to (default: one each, in order). `lexical`, when
        given, is used instead of tokenizing the entries (the one an index stores, or one of
        a corpus tokenized elsewhere, as in bench/bench_scale.py). `adapter`, when given, maps
        every query vector (the question's and the learned questions') before it is compared.
        `precision` is the operating point a result is decided at when no channel names one (None: the
        calibration's default). `issue_weights` is the confidence of a whole issue (`Calibration.issues`)."""
        self.weights = weights or Weights.load()
        self.issue_weights = issue_weights
        self.precision = precision
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
        # What has been learned (alternates, links, not-covered questions): swapped whole when it changes.
        self.learned = learned or Learned.empty(self.dense.dim)
        self.adapter = adapter
        self.matching = self._mapped(self.learned)  # the learned questions as a search compares them
        self.verbatim = Verbatim(self.entries, self.learned)  # each entry's own wordings
        self.quoted = QuotedErrors(self.entries)  # the specific errors each entry quotes
        # Every language an entry has is matched: a question meets whichever version it shares words with.
        self.lexical = lexical or LexicalIndex.of_entries(self.entries)
        self._words_changed()
        self.filters = Filters(self.entries)
        self.scopes = Scopes(self.entries)  # entries only a question naming their subject meets (kb.scope)
        self.links_only = links_only_entries(self.entries)  # answers of links alone: hubs (kb.hubs)
        self._every_entry = np.arange(len(self.entries), dtype=np.int64)
        # The dense side filters vectors, not entries: a vector has its entry's tags and languages.
        self.row_filters = self.filters if self.rows.identity else Filters([self.entries[o] for o in self.rows.owners])
        self.frameworks = Frameworks(self.entries)  # the frameworks a query names (kb.frameworks)

    def _words_changed(self) -> None:
        # An entry's length, as the ranking weighs it: log of its distinct words, centred.
        length = np.log1p(self.lexical.both.lengths().astype(np.float64))
        self.length = length - (length.mean() if len(length) else 0.0)
        self.spelling = Spelling(self.lexical.both.vocabulary)

    def with_learned(self, learned: Learned) -> "Searcher":
        """This searcher with other learned questions: their vectors beside the entries', the
        alternates' words with their entries' questions. The entries and their vectors are shared."""
        other = copy.copy(self)
        other.learned = learned
        other.matching = other._mapped(learned)
        other.verbatim = Verbatim(self.entries, learned)
        other.lexical = LexicalIndex.of_entries(self.entries, learned.texts_by_entry(len(self.entries)))
        other._words_changed()
        return other

    def with_adapter(self, adapter: QueryAdapter | None) -> "Searcher":
        """This searcher with another query adapter (None: the model's vectors as they are)."""
        other = copy.copy(self)
        other.adapter = adapter
        other.matching = other._mapped(self.learned)
        return other

    def _mapped(self, learned: Learned) -> Learned:
        return learned.mapped(self.adapter.many) if self.adapter is not None and len(learned) else learned

    def compared(self, q: np.ndarray) -> np.ndarray:
        """The model's vector of a query as the search compares it: through the adapter, if any."""
        return self.adapter(q) if self.adapter is not None else q

    def _check(self, query: str, tags: Sequence[str], source: str | None) -> str:
        # A longer pasted trace is taken, and reduced before searching.
        query = checked_query(query, self.max_query_chars, "q", "query")
        self.check_filters(tags, source)
        return query

    def check_filters(self, tags: Sequence[str] = (), source: str | None = None) -> None:
        """Raise QueryError naming the filter at fault, and the values it may take, for a tag or
        a source no entry has."""
        self.filters.check(tags, source)

    def plan(
        self,
        query: str,
        k: int = 5,
        tags: Sequence[str] = (),
        source: str | None = None,
        lang: str | None = None,
        reads: str = "question",
    ) -> Plan:
        """Check the query and work out what to embed; raises QueryError naming the field at fault. `reads` says
        what the query is (`READS`): a question (a title, a chat message, a pasted error) or a whole issue."""
        if reads not in READS:
            raise ValueError(f"reads={reads!r}: one of {', '.join(READS)}")
        query = self._check(query, tags, source)
        text = searched_text(query)
        return Plan(
            query=query,
            k=k,
            tags=tuple(tags),
            source=source,
            lang=lang,
            query_lang=detect_lang(query),
            text=text,
            embed_text=text,
            reads=reads,
        )

    def answer_weights(self, reads: str, weights: Weights | None = None) -> Weights:
        """The confidence model for what a search reads (`READS`): a whole issue's own when the calibration has one
        (first stage only: a judge's weights are the questions'), else `weights` (default: the searcher's)."""
        weights = weights or self.weights
        if reads == "issue" and self.issue_weights is not None and not weights.judged:
            return self.issue_weights
        return weights

    def words(self, plan: Plan) -> Words:
        """The half of a search that needs no embedding (done before the model runs)."""
        terms = self.query_terms(plan)
        weighed = self.lexical.weighed(terms)
        if self._scored_whole(plan):
            return Words(terms, None, weighed)
        allowed = self.filters.subset(plan.tags, plan.source, plan.lang)
        return Words(terms, self.lexical.top(weighed, max(self.candidates, plan.k), allowed), weighed)

    def _scored_whole(self, plan: Plan) -> bool:
        """Whether every allowed entry is a candidate: the corpus has no more vectors than a search
        takes from the vector index, so the index would return them all."""
        return self.dense.size <= max(self.candidates, plan.k)

    def _evidence(self, weighed: Weighed, ids: np.ndarray) -> Evidence:
        return Evidence(ids, *self.lexical.evidence(weighed, ids))

    def rank(self, plan: Plan, q: np.ndarray, words: Words | None = None) -> SearchResult:
        """The best entries for a planned query, given the model's embedding `q` (and its `words`)."""
        words = words or self.words(plan)
        terms = words.terms
        weighed = words.weighed or self.lexical.weighed(terms)
        q = self.compared(q)
        learned = self.matching.match(q)
        allowed = self.filters.subset(plan.tags, plan.source, plan.lang)
        own = self._owner(plan)
        if words.top is None:
            # A corpus scored whole: every allowed entry is a candidate. The nearest vectors, the
            # entries that cover the query best and those of the nearest alternates are among them.
            ids = self._every_entry if allowed is None else allowed.ids()
        else:
            allowed_rows = self.row_filters.subset(plan.tags, plan.source, plan.lang)
            near = self.rows.entries_of(self.dense.nearest(q, max(self.candidates, plan.k), allowed_rows))
            taught = learned.nearest_entries(LEARNED_CANDIDATES)
            if allowed is not None and len(taught):
                taught = taught[allowed.contains(taught)]
            ids = np.union1d(np.union1d(near, words.top), taught)
            if own is not None and (allowed is None or allowed.contains(np.array([own]))[0]):
                ids = np.union1d(ids, [own])  # an entry asked in its own words is always a candidate
        ids = self.scopes.kept(ids, plan.query, own)
        return self._result(plan, terms, weighed, q, ids, learned, own, self.weights)

    def _owner(self, plan: Plan) -> int | None:
        """The entry the question is certainly about, if any: asked in its own words (`kb.verbatim`; for a whole
        issue, its title alone may be them), or quoting a specific error it quotes (`kb.quoted_errors`)."""
        texts = [plan.query, plan.text]
        if plan.reads == "issue":
            texts.append(plan.query.split("\n", 1)[0])  # the issue's title (`kb.issue_question.question_of`)
        own = self.verbatim.owner(texts)
        return own if own is not None else self.quoted.owner(plan.text)

    def judged(self, plan: Plan, q: np.ndarray, ids: np.ndarray, judge: np.ndarray, weights: Weights) -> SearchResult:
        """The first stage's candidates `ids` ranked again, with the judge's score of each
        (`judge`, 0 for one it did not read) as one more column that `weights` weigh."""
        terms = self.query_terms(plan)
        q = self.compared(q)
        owner = self._owner(plan)
        weighed = self.lexical.weighed(terms)
        return self._result(plan, terms, weighed, q, ids, self.matching.match(q), owner, weights, judge)

    def _result(
        self,
        plan: Plan,
        terms: QueryTerms,
        weighed: Weighed,
        q: np.ndarray,
        ids: np.ndarray,
        learned: LearnedMatch,
        owner: int | None,
        weights: Weights,
        judge: np.ndarray | None = None,
    ) -> SearchResult:
        """The candidates `ids` scored, best first, and the best one's confidence; `owner`, the entry asked in its
        own words (`Verbatim.owner`), if any, comes first."""
        evidence = self._evidence(weighed, ids)
        f = self._features(terms, q, ids, learned, evidence)
        answer = self.answer_weights(plan.reads, weights)  # the confidence of what the search reads
        if judge is not None:
            f = replace(f, judge=judge)
        score = demoted(f.score(weights), self.links_only[ids], evidence.coverage)
        order = np.argsort(-score, kind="stable")  # ids ascend, so ties go to the earlier entry
        own = np.flatnonzero(ids[order] == owner) if owner is not None else np.zeros(0, np.int64)
        confidence = 0.0
        if len(own):
            # Asked in an entry's own words: that entry answers, first, whatever the others score.
            order = np.concatenate([order[own], np.delete(order, own)])
            confidence = CERTAIN
        elif len(order):
            x = f.of_best(score, order, plan.query_lang == "zh", answer)
            confidence = float(answer.answer_probability(x[None, :])[0])
            if learned.not_covered >= SAME_QUESTION and learned.not_covered > f.best_alternate(order[0]):
                confidence = 0.0  # a rewording of a question the FAQ is known not to cover
            if f.no_evidence(order[0], weights):
                confidence = 0.0
        order = order[: plan.k]
        terms_of = matched(weighed, evidence.holds[order])
        hits = tuple(
            Hit(
                entry=self.entries[int(ids[j])],
                score=round(float(score[j]), 4),
                rank=rank,
                matched=terms_of[rank - 1],
                signals=Signals(float(f.cosine[j]), f.background, float(f.coverage[j]), float(f.question[j])),
            )
            for rank, j in enumerate(order, 1)
        )
        return SearchResult(
            query=plan.query,
            hits=hits,
            lang=plan.query_lang,
            named=f.framework,
            searched=plan.text,
            confidence=round(confidence, 4),
            judged=weights.judged,
            point=answer.threshold(self.precision),
            floor=answer.floor,
            reads=plan.reads,
        )

    def features(
        self, terms: QueryTerms, q: np.ndarray, ids: np.ndarray, learned: LearnedMatch | None = None
    ) -> Features:
        """The evidence for the entries `ids` against a query (its terms and the model's
        embedding, and what the learned questions say of it: by default, matched here)."""
        return self._features(terms, self.compared(q), np.asarray(ids), learned)

    def _features(
        self,
        terms: QueryTerms,
        q: np.ndarray,
        ids: np.ndarray,
        learned: LearnedMatch | None,
        evidence: Evidence | None = None,
    ) -> Features:
        """`features` of a query vector as compared (through the adapter), given the lexical
        evidence for `ids` when it is known."""
        named, framework = self.frameworks.named(terms, ids)
        learned = learned or self.matching.match(q)
        evidence = evidence or self._evidence(self.lexical.weighed(terms), ids)
        return Features(
            cosine=self.entry_cosines(ids, q),
            background=background_score(self.background, q),
            coverage=evidence.coverage,
            question=evidence.question,
            named=named,
            framework=framework,
            length=self.length[ids],
            alternate=learned.best_of(ids),
            not_covered=learned.not_covered,
            words=len(terms.groups),
        )

    def background_of(self, q: np.ndarray) -> float:
        """What general-domain text scores for a query vector as compared (`compared`): the mean of its three best
        cosines."""
        return background_score(self.background, q)

    def query_terms(self, plan: Plan) -> QueryTerms:
        return respelled(self.spelling, self.glossary.query_terms(plan.text))

    def entry_cosines(self, ids: np.ndarray, q: np.ndarray) -> np.ndarray:
        """Each entry's cosine with `q`: the best of its vectors'."""
        return self.rows.best(ids, self.dense.cosines(self.rows.rows_of(ids), q))


def background_score(background: np.ndarray, q: np.ndarray) -> float:
    """What general-domain text (`background`, its vectors) scores for a query vector: the mean of its three best
    cosines."""
    if not len(background):
        return 0.0
    cosines = matvec(background, q)
    if len(cosines) > 3:
        cosines = np.partition(cosines, len(cosines) - 3)[-3:]
    return float(np.sort(cosines)[-3:].mean())


def respelled(spelling: Spelling, terms: QueryTerms) -> QueryTerms:
    """`terms` with each query word the corpus lacks given its near spellings as alternatives."""
    groups = []
    for group in terms.groups:
        near = spelling.near(group[0][0])
        groups.append(group + tuple((word, SPELLING_WEIGHT) for word in near))
    return QueryTerms(tuple(groups))


def matched(weighed: Weighed, holds: np.ndarray) -> list[tuple[str, ...]]:
    """The query terms each entry contains, in query order, given which it holds (rows of `LexicalIndex.holds`)."""
    return [tuple(dict.fromkeys(weighed.terms[j] for j in np.flatnonzero(row))) for row in holds]
