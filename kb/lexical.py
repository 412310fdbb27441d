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
    """BM25 per field plus coverage: the idf-weighted share of query groups an entry matches."""

    def __init__(self, questions: Sequence[Sequence[str]], answers: Sequence[Sequence[str]]):
        self.question = FieldIndex(questions)
        self.answer = FieldIndex(answers)
        self.both = FieldIndex([list(q) + list(a) for q, a in zip(questions, answers)])
        self.size = len(questions)

    def known(self, term: str) -> bool:
        return term in self.both

    def group_weight(self, group: tuple[tuple[str, float], ...]) -> float:
        # An unknown word weighs what the rarest possible word would: the corpus can't match it.
        rare = math.log(1 + (self.size + 0.5) / 0.5)
        return max(self.both.idf(t) if self.known(t) else rare for t, _ in group)

    def coverage(self, query: QueryTerms) -> tuple[np.ndarray, float]:
        """(share of the query's weight each entry matches, share any entry could match)."""
        matched = np.zeros(self.size, dtype=np.float32)
        total = reachable = 0.0
        for group in query.groups:
            weight = self.group_weight(group)
            total += weight
            hit = np.zeros(self.size, dtype=bool)
            for term, term_weight in group:
                hit[self.both.matches(term)] = True
            if hit.any():
                reachable += weight
                matched += weight * hit
        if total == 0:
            return matched, 0.0
        return matched / total, reachable / total
