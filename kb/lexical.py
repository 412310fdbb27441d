"""Term postings per field (question, answer), and how much of a query each entry covers."""

from __future__ import annotations

import math
from collections import defaultdict
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


class FieldIndex:
    """Which entries contain each term of one field, and the term's idf."""

    def __init__(self, docs: Sequence[Sequence[str]]):
        self.size = len(docs)
        postings: dict[str, list[int]] = defaultdict(list)
        for doc_id, doc in enumerate(docs):
            for term in dict.fromkeys(doc):
                postings[term].append(doc_id)
        self._postings = {term: np.array(ids, dtype=np.int64) for term, ids in postings.items()}

    def idf(self, term: str) -> float:
        df = len(self._postings[term]) if term in self._postings else 0
        return math.log(1 + (self.size - df + 0.5) / (df + 0.5))

    @property
    def vocabulary(self) -> list[str]:
        return list(self._postings)

    def __contains__(self, term: str) -> bool:
        return term in self._postings

    def matches(self, term: str) -> np.ndarray:
        """Ids of the entries that contain `term`."""
        return self._postings.get(term, np.zeros(0, dtype=np.int64))


class LexicalIndex:
    """Coverage: how much of a query's weight an entry contains, in one field or all.

    Each query group weighs the idf of its own word (a word no entry has weighs most: the
    corpus cannot match it). An entry earns a group's weight through the best term it
    contains, in proportion to that term's idf and weight, so a common translation such as
    "model" earns little of a rare word's weight.
    """

    def __init__(self, questions: Sequence[Sequence[str]], answers: Sequence[Sequence[str]]):
        self.question = FieldIndex(questions)
        self.both = FieldIndex([list(q) + list(a) for q, a in zip(questions, answers)])
        self.size = len(questions)
        self._rare = math.log(1 + (self.size + 0.5) / 0.5)

    def _idf(self, term: str) -> float:
        return self.both.idf(term) if term in self.both else self._rare

    def coverage(self, query: QueryTerms, field: FieldIndex | None = None) -> np.ndarray:
        """The share of the query's weight each entry contains (in `field`, or anywhere)."""
        field = field or self.both
        earned = np.zeros(self.size, dtype=np.float32)
        total = 0.0
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
        return earned / total if total else earned
