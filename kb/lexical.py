"""BM25 over token fields (question, answer), and how much of a query each entry covers."""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import Sequence

import numpy as np

__all__ = ["FieldIndex", "QueryTerms", "LexicalIndex"]


@dataclass(frozen=True)
class QueryTerms:
    """A query as groups of alternatives: each group is one query word and its glossary equivalents.

    A group counts as matched when any of its terms is in the entry.
    """

    groups: tuple[tuple[tuple[str, float], ...], ...]  # ((term, weight), ...) per group

    @property
    def terms(self) -> dict[str, float]:
        weights: dict[str, float] = {}
        for group in self.groups:
            for term, weight in group:
                weights[term] = max(weights.get(term, 0.0), weight)
        return weights


class FieldIndex:
    """Okapi BM25 over one field of every entry."""

    def __init__(self, docs: Sequence[Sequence[str]], k1: float = 1.2, b: float = 0.75):
        self.size = len(docs)
        self.k1, self.b = k1, b
        lengths = np.array([len(d) for d in docs], dtype=np.float32)
        self.avg_length = float(lengths.mean()) if len(docs) else 0.0
        postings: dict[str, list[tuple[int, int]]] = defaultdict(list)
        for doc_id, doc in enumerate(docs):
            for term, count in Counter(doc).items():
                postings[term].append((doc_id, count))
        norm = k1 * (1 - b + b * lengths / max(self.avg_length, 1e-9))
        self._postings: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        for term, items in postings.items():
            ids = np.array([i for i, _ in items], dtype=np.int64)
            tf = np.array([c for _, c in items], dtype=np.float32)
            self._postings[term] = (ids, tf * (k1 + 1) / (tf + norm[ids]))

    def idf(self, term: str) -> float:
        df = len(self._postings[term][0]) if term in self._postings else 0
        return math.log(1 + (self.size - df + 0.5) / (df + 0.5))

    @property
    def vocabulary(self) -> list[str]:
        return list(self._postings)

    def __contains__(self, term: str) -> bool:
        return term in self._postings

    def score(self, terms: dict[str, float]) -> np.ndarray:
        scores = np.zeros(self.size, dtype=np.float32)
        for term, weight in terms.items():
            if term in self._postings:
                ids, saturated = self._postings[term]
                scores[ids] += weight * self.idf(term) * saturated
        return scores

    def matches(self, term: str) -> np.ndarray:
        """Ids of the entries that contain `term`."""
        return self._postings[term][0] if term in self._postings else np.zeros(0, dtype=np.int64)


class LexicalIndex:
    """BM25 per field, and coverage: how much of a query's weight an entry contains.

    Each query group weighs the idf of its own word (a word no entry has weighs most: the
    corpus cannot match it). An entry earns a group's weight through the best term it
    contains, in proportion to that term's idf and weight, so a common translation such as
    "model" earns little of a rare word's weight.
    """

    def __init__(self, questions: Sequence[Sequence[str]], answers: Sequence[Sequence[str]]):
        self.question = FieldIndex(questions)
        self.answer = FieldIndex(answers)
        self.both = FieldIndex([list(q) + list(a) for q, a in zip(questions, answers)])
        self.size = len(questions)
        self._rare = math.log(1 + (self.size + 0.5) / 0.5)

    def _idf(self, term: str) -> float:
        return self.both.idf(term) if term in self.both else self._rare

    def coverage(self, query: QueryTerms, field: FieldIndex | None = None) -> tuple[np.ndarray, float]:
        """(share of the query's weight each entry's field contains, share any entry contains)."""
        field = field or self.both
        earned = np.zeros(self.size, dtype=np.float32)
        total = reachable = 0.0
        for group in query.groups:
            weight = self._idf(group[0][0])
            total += weight
            best = np.zeros(self.size, dtype=np.float32)
            for term, term_weight in group:
                ids = field.matches(term)
                if len(ids):
                    credit = min(weight, term_weight * self._idf(term))
                    best[ids] = np.maximum(best[ids], credit)
            earned += best
            reachable += float(best.max()) if self.size else 0.0
        if total == 0:
            return earned, 0.0
        return earned / total, reachable / total
