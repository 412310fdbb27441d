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
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np

from ..dense import matvec
from ..insights.records import question_key
from .questions import LearnedQuestion

__all__ = ["Learned", "LearnedMatch", "NOT_COVERED"]

NOT_COVERED = -1  # the owner of a not-covered question


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
        # The alternates grouped by entry: one maximum per group gives each entry's best.
        covered = np.flatnonzero(self.owners != NOT_COVERED)
        self._by_entry = covered[np.argsort(self.owners[covered], kind="stable")]
        grouped = self.owners[self._by_entry]
        self._starts = np.flatnonzero(np.concatenate(([True], grouped[1:] != grouped[:-1]))) if len(grouped) else grouped
        self._entries = grouped[self._starts] if len(grouped) else grouped

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
        if not len(self):
            return LearnedMatch(self._entries, np.zeros(0), -1.0, -1)
        cosines = matvec(self.vectors, np.asarray(q, dtype=np.float32))
        best = np.maximum.reduceat(cosines[self._by_entry], self._starts) if len(self._by_entry) else np.zeros(0)
        if not len(self._uncovered):
            return LearnedMatch(self._entries, best, -1.0, -1)
        nearest = int(self._uncovered[np.argmax(cosines[self._uncovered])])
        return LearnedMatch(self._entries, best, float(cosines[nearest]), nearest)
