"""Each entry's own question, as a search embeds a question: the wording of it every entry has.

A learned alternate says "this question was asked before, and this entry answered it"; most entries
have none, and a question worded freshly ("训练中断了，怎么从上次保存的地方接着跑？" for 如何续训？)
meets none. The entry's own question, in each language it has, is the one wording of it every entry
has: a build embeds it once as the model embeds a query (`questions.npy` in the index, a row for
each version of each entry, in the entries' order), and the confidence reads the nearest of an
entry's own questions and learned alternates (`kb.scoring`, signal `nearest_question`).
"""

from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

from .entries import Entry

__all__ = ["OwnQuestions", "question_owners"]


def question_owners(entries: Sequence[Entry]) -> np.ndarray:
    """The entry of each row of a build's question vectors: one row for each version of each entry, in order."""
    return np.array([i for i, entry in enumerate(entries) for _ in entry.versions()], dtype=np.int64)


class OwnQuestions:
    """The entries' own questions' vectors, and which entry each belongs to."""

    def __init__(self, vectors: np.ndarray, owners: np.ndarray, entries: int):
        if len(vectors) != len(owners):
            raise ValueError(f"{len(vectors)} question vectors for {len(owners)} owners")
        self.vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        self.owners = np.asarray(owners, dtype=np.int64)
        self.entries = entries

    @classmethod
    def of_entries(cls, entries: Sequence[Entry], vectors: np.ndarray) -> "OwnQuestions":
        """The vectors of a build's `questions.npy` for `entries`; none (every cosine unknown) when the
        build has none. ValueError when there are some, but not one for each version of each entry."""
        owners = question_owners(entries)
        if not len(vectors):
            return cls.empty(vectors.shape[1] if vectors.ndim == 2 else 0, len(entries))
        if len(vectors) != len(owners):
            raise ValueError(f"{len(vectors)} question vectors; the entries have {len(owners)} versions")
        return cls(vectors, owners, len(entries))

    @classmethod
    def empty(cls, dim: int, entries: int = 0) -> "OwnQuestions":
        return cls(np.zeros((0, dim), dtype=np.float32), np.zeros(0, dtype=np.int64), entries)

    def __len__(self) -> int:
        return len(self.vectors)

    def mapped(self, many: Callable[[np.ndarray], np.ndarray]) -> "OwnQuestions":
        """These questions as a search compares them: through the query adapter, as a question is."""
        return OwnQuestions(many(self.vectors), self.owners, self.entries) if len(self) else self

    def nearest(self, q: np.ndarray, ids: np.ndarray) -> np.ndarray:
        """For entry positions `ids`: the cosine of the nearest of each one's own questions with the query
        vector `q` (as compared), -1.0 where the build has none."""
        ids = np.asarray(ids, dtype=np.int64)
        if not len(self):
            return np.full(len(ids), -1.0)
        best = np.full(self.entries, -1.0)
        np.maximum.at(best, self.owners, self.vectors @ np.asarray(q, dtype=np.float32).reshape(-1))
        return best[ids]
