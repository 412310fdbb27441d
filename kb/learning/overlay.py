"""The learned questions searched beside the entries.

Each learned question has a vector (the model's embedding of it as a query) and an owner:
the entry it is an alternate of, or none (not covered). A search compares the question
with all of them in one product:

- an entry's dense evidence is the best of its own vectors' and its alternates' cosines,
  so a question close to an alternate finds that entry, and an alternate adds evidence
  for its own entry only;
- the nearest not-covered question's similarity is a signal of the answer model.

The overlay is rebuilt whole when the learned questions change (an ingest, a link made on
any replica) and swapped in; a search reads one overlay from start to end.

Alternates and not-covered questions are each in a flat FAISS index: a search reads the
NEAREST alternates (an entry whose best alternate is not among them has none near enough
to count: the ranking weighs only what rises above a floor near 0.9) and the nearest
not-covered question. With 10,000 learned questions that is about 0.2 ms a search.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Mapping, Protocol, Sequence

import faiss
import numpy as np

from ..dense import one_thread
from ..text import question_key
from .questions import LearnedQuestion

__all__ = ["Learned", "LearnedMatch", "TaughtQuestion", "NOT_COVERED"]

NOT_COVERED = -1  # the owner of a not-covered question
NEAREST = 64  # alternates read a search


class TaughtQuestion(Protocol):
    """A question taught while the knowledge base serves, with its vector (`KnowledgeBase.taught` learns them):
    a maintainer's link, `kb.insights.taught_links.Link`."""

    @property
    def model(self) -> str:
        """The embedding model that made `vector`."""
        ...

    @property
    def vector(self) -> np.ndarray: ...

    def learned(self) -> LearnedQuestion: ...


@dataclass(frozen=True)
class LearnedMatch:
    """What the learned questions say about one query."""

    entries: np.ndarray  # positions of the entries that have alternates, ascending
    cosines: np.ndarray  # each one's best alternate's cosine with the query
    not_covered: float  # the nearest not-covered question's cosine (-1.0: there is none)
    not_covered_index: int  # which learned question that is (-1: none)

    def best_of(self, ids: np.ndarray) -> np.ndarray:
        """For entry positions `ids`: their best alternate's cosine, -1.0 where they have none."""
        ids = np.asarray(ids, dtype=np.int64)
        if not len(self.entries):
            return np.full(len(ids), -1.0)
        at = np.minimum(np.searchsorted(self.entries, ids), len(self.entries) - 1)
        return np.where(self.entries[at] == ids, self.cosines[at], -1.0)

    def nearest_entries(self, n: int) -> np.ndarray:
        """The `n` entries whose alternates come nearest the query."""
        return self.entries[np.argsort(-self.cosines, kind="stable")[:n]]


class Learned:
    """Learned questions, their vectors and owners (entry positions, or NOT_COVERED)."""

    def __init__(self, questions: Sequence[LearnedQuestion], vectors: np.ndarray, owners: np.ndarray):
        if len(questions) != len(vectors) or len(vectors) != len(owners):
            raise ValueError(f"{len(questions)} questions, {len(vectors)} vectors, {len(owners)} owners")
        self.questions = tuple(questions)
        self.vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        self.owners = np.asarray(owners, dtype=np.int64)
        self.keys = np.array([question_key(q.question) for q in self.questions], dtype=object)
        self._uncovered = np.flatnonzero(self.owners == NOT_COVERED)
        self._covered = np.flatnonzero(self.owners != NOT_COVERED)
        dim = self.vectors.shape[1]
        self._alternates = faiss.IndexFlatIP(dim)
        self._alternates.add(self.vectors[self._covered])
        self._not_covered = faiss.IndexFlatIP(dim)
        self._not_covered.add(self.vectors[self._uncovered])

    @classmethod
    def empty(cls, dim: int) -> "Learned":
        return cls((), np.zeros((0, dim), dtype=np.float32), np.zeros(0, dtype=np.int64))

    @classmethod
    def of(
        cls, questions: Sequence[LearnedQuestion], vectors: np.ndarray, positions: Mapping[str, int], dim: int
    ) -> "Learned":
        """The questions whose entry is among `positions` (entry id -> position), and the not-covered ones."""
        keep = [i for i, q in enumerate(questions) if q.entry is None or q.entry in positions]
        if not keep:
            return cls.empty(dim)
        owners = [NOT_COVERED if questions[i].entry is None else positions[str(questions[i].entry)] for i in keep]
        return cls([questions[i] for i in keep], np.asarray(vectors)[keep], np.array(owners))

    def __len__(self) -> int:
        return len(self.questions)

    def __add__(self, other: "Learned") -> "Learned":
        return Learned(
            self.questions + other.questions,
            np.concatenate([self.vectors, other.vectors]) if len(other) else self.vectors,
            np.concatenate([self.owners, other.owners]),
        )

    def mapped(self, through: Callable[[np.ndarray], np.ndarray]) -> "Learned":
        """These learned questions with their vectors mapped (by a query adapter, `kb.adapter`)."""
        return Learned(self.questions, through(self.vectors), self.owners)

    def without(self, keys: set[str]) -> "Learned":
        """These learned questions but those whose `question_key` is in `keys`."""
        keep = np.array([k not in keys for k in self.keys], dtype=bool)
        if keep.all():
            return self
        idx = np.flatnonzero(keep)
        return Learned([self.questions[i] for i in idx], self.vectors[idx], self.owners[idx])

    def texts_by_entry(self, entries: int) -> list[list[str]]:
        """For each of `entries` entry positions, the questions of its alternates."""
        found: list[list[str]] = [[] for _ in range(entries)]
        for question, owner in zip(self.questions, self.owners):
            if owner != NOT_COVERED:
                found[int(owner)].append(question.question)
        return found

    def of_entry(self, position: int) -> list[LearnedQuestion]:
        """The alternates of the entry at `position`, in the order they were learned."""
        return [self.questions[i] for i in np.flatnonzero(self.owners == position)]

    def match(self, q: np.ndarray) -> LearnedMatch:
        """What the learned questions say about the query vector `q`."""
        entries, best = np.zeros(0, np.int64), np.zeros(0, np.float32)
        not_covered, nearest = -1.0, -1
        query = np.asarray(q, dtype=np.float32).reshape(1, -1)
        with one_thread():
            if len(self._covered):
                cosines, rows = self._alternates.search(query, min(NEAREST, len(self._covered)))
                owners = self.owners[self._covered[rows[0]]]
                # best first: an entry's first row among them is its best alternate
                entries, first = np.unique(owners, return_index=True)
                best = cosines[0][first]
            if len(self._uncovered):
                cosine, row = self._not_covered.search(query, 1)
                not_covered, nearest = float(cosine[0][0]), int(self._uncovered[row[0][0]])
        return LearnedMatch(entries, best, not_covered, nearest)
