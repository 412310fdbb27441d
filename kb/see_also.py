""" "See also": resolved tracker threads shown below a question the FAQ does not cover, never as its answer.

The threads are the harvested drafts a maintainer has not decided yet, each with the threads grouped
under it (`kb.harvest`, kept in the insights database). Their questions' first paragraphs (the issues'
titles) are embedded once, as questions, and held in a small matrix; a search whose state is
`not_covered` compares the vector it already has of the question (`SearchResult.vector`) with it, so
"see also" embeds nothing per question. The questions' vectors are also kept in the data directory's embedding
cache (`$KB_DATA_DIR/cache/embeddings.sqlite`, under the model's name and `#query`), where `kb harvest` leaves
those it embedded to group its drafts: a server starting, or a second replica, embeds none of them again. At most `MAX_SHOWN` threads are shown, one a draft, each at
least `MIN_COSINE` near the question (chosen on the time split of bench/bench_harvest.py, real_tune's
questions only). The index is swapped whole when the drafts change (`SeeAlso.load`).
"""

from __future__ import annotations

import sqlite3
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Mapping, Sequence

import numpy as np

from .embedding_cache import EmbeddingCache
from .hyperlinks import tracker_link
from .verdict import AnswerState

if TYPE_CHECKING:
    from .embedding import Embedder
    from .hits import SearchResult

__all__ = [
    "Resolved",
    "SeeAlso",
    "threads_of",
    "cached_questions",
    "keep_questions",
    "MAX_SHOWN",
    "MIN_COSINE",
    "MAX_THREADS",
]

MAX_SHOWN = 3  # threads shown below a question, at most
MIN_COSINE = 0.92  # how near (question to question, the e5 model's scale) a thread's question must be
MAX_THREADS = 5000  # threads held, at most (the newest drafts first)
MAX_TITLE = 300  # characters of a thread's title shown


@dataclass(frozen=True)
class Resolved:
    """A resolved thread that may help: its title (the question it asked), its link, where it was asked."""

    title: str
    url: str
    repo: str
    number: int

    def to_json(self) -> dict[str, Any]:
        return {"title": self.title, "url": self.url, "repo": self.repo, "number": self.number}


QUERY_CACHE = "#query"  # after the model's name in the embedding cache: a question's vector, not a passage's


def cached_questions(path: Path | None, model: str, questions: Sequence[str]) -> dict[str, np.ndarray]:
    """The vectors of `questions` the embedding cache at `path` holds for `model`, by question (none for no path, or
    a cache that cannot be read: it is only a cache)."""
    if path is None or not questions:
        return {}
    try:
        cache = EmbeddingCache(path, model + QUERY_CACHE)
        try:
            found = cache.get_many([EmbeddingCache.key(q) for q in questions])
        finally:
            cache.close()
    except (sqlite3.Error, OSError):
        return {}
    return {q: found[EmbeddingCache.key(q)] for q in questions if EmbeddingCache.key(q) in found}


def keep_questions(path: Path | None, model: str, vectors: Mapping[str, np.ndarray]) -> None:
    """Keep the vectors of questions in the embedding cache at `path`, for `model` (best effort: a cache that
    cannot be written, busy with an ingest, is left as it is)."""
    if path is None or not vectors:
        return
    try:
        cache = EmbeddingCache(path, model + QUERY_CACHE)
        try:
            cache.put_many({EmbeddingCache.key(q): np.asarray(v, np.float32) for q, v in vectors.items()})
        finally:
            cache.close()
    except (sqlite3.Error, OSError):
        return


def _first_paragraph(question: str) -> str:
    return question.split("\n\n", 1)[0][:MAX_TITLE]


def threads_of(drafts: Iterable[Any]) -> list[list[tuple[Resolved, str]]]:
    """Per harvested draft (`kb.harvest.Draft`), its thread and the threads grouped under it, each with the
    question it is found by: its first paragraph, the issue's title as the harvest cleaned it. A thread whose link
    is not an https URL on the tracker's own host (`kb.hyperlinks.tracker_link`) is left out."""
    grouped = []
    for draft in drafts:
        lead = _first_paragraph(draft.question)
        threads = [(Resolved(lead, draft.url, draft.repo, draft.number), lead)]
        for asked in draft.alternates:
            title = _first_paragraph(asked.question)
            threads.append((Resolved(title, asked.url, draft.repo, asked.number), title))
        grouped.append(
            [(t, question) for t, question in threads if question and tracker_link(t.url).startswith("https://")]
        )
    return grouped


@dataclass(frozen=True)
class _Index:
    threads: tuple[Resolved, ...]
    groups: np.ndarray  # the draft each thread is grouped under (one shown a draft)
    vectors: np.ndarray  # a unit row a thread, float32
    model: str


_EMPTY = _Index((), np.zeros(0, np.int64), np.zeros((0, 0), np.float32), "")


class SeeAlso:
    """The harvested threads a not-covered question may be shown: shared by every build served, swapped whole."""

    def __init__(self, min_cosine: float = MIN_COSINE) -> None:
        self.min_cosine = min_cosine
        self._index = _EMPTY
        self._known: dict[str, np.ndarray] = {}  # each question embedded once, across loads
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._index.threads)

    def load(
        self, drafts: Iterable[Sequence[tuple[Resolved, str]]], embedder: Embedder, cache: Path | None = None
    ) -> int:
        """Hold the threads of `drafts` (per draft, each thread with the question it is found by) in place of those
        held; the questions not embedded before are read from the embedding cache at `cache`, or embedded now (and
        kept there). Blocks: call it from a worker thread. How many threads are held."""
        threads: list[Resolved] = []
        questions: list[str] = []
        groups: list[int] = []
        for group, draft in enumerate(drafts):
            for thread, question in draft:
                if len(threads) == MAX_THREADS:
                    break
                threads.append(thread)
                questions.append(question)
                groups.append(group)
        with self._lock:  # two loads at once embed each question once
            known = {} if self._index.model not in ("", embedder.model) else self._known
            new = [q for q in dict.fromkeys(questions) if q not in known]
            found = cached_questions(cache, embedder.model, new)
            missing = [q for q in new if q not in found]
            if missing:
                embedded = dict(zip(missing, embedder.embed_queries(missing, batch_size=32)))
                keep_questions(cache, embedder.model, embedded)
                found |= embedded
            known.update(found)
            self._known = {q: known[q] for q in questions}  # a draft decided since is forgotten
            vectors = (
                np.stack([self._known[q] for q in questions]).astype(np.float32, copy=False)
                if questions
                else np.zeros((0, embedder.dim), np.float32)
            )
            self._index = _Index(tuple(threads), np.array(groups, np.int64), vectors, embedder.model)
        return len(threads)

    def draft_asking(self, vector: np.ndarray | None, model: str, same: float) -> Resolved | None:
        """The thread leading the held draft whose threads hold the one nearest `vector` (a question's vector by
        `model`), when that one is at least `same` near: the draft a thread asking the same joins. None otherwise."""
        index = self._index
        if vector is None or not index.threads or model != index.model or vector.shape != (index.vectors.shape[1],):
            return None
        cosines = index.vectors @ vector
        best = int(cosines.argmax())
        if float(cosines[best]) < same:
            return None
        return index.threads[int(np.flatnonzero(index.groups == index.groups[best])[0])]  # each draft's lead first

    def near(self, result: SearchResult, model: str = "") -> tuple[Resolved, ...]:
        """The threads to show below `result`: none unless its state is `not_covered`; else up to `MAX_SHOWN`,
        nearest first, one a draft, each at least `min_cosine` near the question. `model`: the embedder
        that made the result's vector (a vector of another model is compared with nothing)."""
        index, vector = self._index, result.vector
        if result.state is not AnswerState.NOT_COVERED or vector is None or not index.threads:
            return ()
        if (model and model != index.model) or vector.shape != (index.vectors.shape[1],):
            return ()
        cosines = index.vectors @ vector
        shown: list[Resolved] = []
        seen: set[int] = set()
        for i in np.argsort(-cosines, kind="stable"):
            if cosines[i] < self.min_cosine or len(shown) == MAX_SHOWN:
                break
            if int(index.groups[i]) in seen:
                continue
            seen.add(int(index.groups[i]))
            shown.append(index.threads[int(i)])
        return tuple(shown)
