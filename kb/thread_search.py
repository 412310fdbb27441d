"""Resolved tracker threads searched as the entries are: the same evidence, weighed by the same ranking.

A thread is searched as an entry would be if its question and its maintainer's answer were one: its text
(`question`, then the answer) embedded as a passage, as the entries are; its words in a lexical index of its own
(`kb.lexical.LexicalIndex`: the question field, the whole); the query's vector through the searcher's query adapter
(`Searcher.compared`) and its words as the glossary gives them; and each thread's evidence (`kb.scoring.Features`:
the cosine above what general text scores, the share of the query's words anywhere and in its question, its length)
weighed by the calibration's ranking weights (`Weights.rank_coef`), as an entry's is. Besides the score, each
thread's `body`: the share of the query's words found in its text outside its title (the body's question and the
answer), so that a rule can ask for evidence beyond a short title (`kb.see_also`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Sequence

import numpy as np

from .dense import matvec
from .lexical import FieldIndex, LexicalIndex, QueryTerms
from .scoring import Features, Weights
from .text import tokenize

if TYPE_CHECKING:
    from .search import Searcher

__all__ = ["ThreadText", "ThreadSearch", "Ranked", "query_of"]


@dataclass(frozen=True)
class ThreadText:
    """What a thread is searched by: its title, the rest of its question (the body's), and the answer it got."""

    title: str
    body: str
    answer: str

    @property
    def question(self) -> str:
        return f"{self.title}\n\n{self.body}" if self.body else self.title

    @property
    def passage(self) -> str:
        """The text embedded, as an entry's is (`Entry.text`: its question, then its answer)."""
        return f"{self.question}\n\n{self.answer}"


@dataclass(frozen=True)
class Ranked:
    """The threads scored for one query, as arrays over the threads (in the order they are held)."""

    score: np.ndarray  # the ranking's score (`Features.score`)
    cosine: np.ndarray  # the thread's passage vector · the query's vector (through the adapter)
    coverage: np.ndarray  # the share of the query's words anywhere in the thread
    body: np.ndarray  # the share of the query's words in the thread outside its title


class ThreadSearch:
    """The held threads' vectors and words: `rank` scores them all for one query (a few hundred at most)."""

    def __init__(self, texts: Sequence[ThreadText], vectors: np.ndarray):
        if len(texts) != len(vectors):
            raise ValueError(f"{len(texts)} threads but {len(vectors)} vectors")
        self.size = len(texts)
        self.vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        questions = [tokenize(t.question) for t in texts]
        answers = [tokenize(t.answer) for t in texts]
        self.lexical = LexicalIndex(questions, answers)
        self.body = FieldIndex([tokenize(t.body) + a for t, a in zip(texts, answers)])
        length = np.log1p(self.lexical.both.lengths().astype(np.float64))
        self.length = length - (length.mean() if len(length) else 0.0)

    def rank(self, terms: QueryTerms, q: np.ndarray, background: float, weights: Weights) -> Ranked:
        """Every thread's evidence for a query: its `terms` (`Glossary.query_terms`), its vector `q` as the search
        compares it (through the adapter), and what general text scores for it (`background`)."""
        ids = np.arange(self.size, dtype=np.int64)
        weighed = self.lexical.weighed(terms)
        _, coverage, question = self.lexical.evidence(weighed, ids)
        body = self.lexical.share(weighed, self.lexical.holds(weighed, ids, self.body))
        cosine = matvec(self.vectors, np.asarray(q, dtype=np.float32)) if self.size else np.zeros(0, np.float32)
        features = Features(
            cosine=cosine,
            background=background,
            coverage=coverage,
            question=question,
            named=np.zeros(self.size, dtype=bool),  # a thread is of a tracker, not of a framework's FAQ
            framework=None,
            length=self.length,
            words=len(terms.groups),
        )
        return Ranked(features.score(_first_stage(weights)), cosine, coverage, body)


def _first_stage(weights: Weights) -> Weights:
    """The ranking weights without a judge's column (no judge reads a thread)."""
    if not weights.judged:
        return weights
    return replace(weights, rank_coef=weights.rank_coef[:-1], answer_coef=weights.answer_coef[:-1])


def query_of(searcher: Searcher, searched: str, vector: np.ndarray) -> tuple[QueryTerms, np.ndarray, float]:
    """A searched text and its model vector as the threads are searched with them: the glossary's terms, the vector
    through the searcher's adapter, and what general text scores for it."""
    q = searcher.compared(vector)
    return searcher.glossary.query_terms(searched), q, searcher.background_of(q)
