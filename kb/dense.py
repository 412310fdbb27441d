"""The dense side: the entry vectors in a FAISS index, and the entries nearest a query vector.

Which index depends on the corpus size (see `build`). A small corpus gets a flat index: a
search compares the query with every vector, exactly. Past `APPROXIMATE_ABOVE` entries it
gets HNSW, a graph of near neighbours that a search walks, visiting a few thousand vectors
whatever the size, at a recall@10 against exact search that `bench/bench_scale.py` measures.

Vectors are normalised, so inner product is cosine similarity. The vectors live only in
the FAISS index (HNSW keeps them in its flat storage); `vectors` and `cosines` read them
back for the few entries a search scores.
"""

from __future__ import annotations

import math
from contextlib import contextmanager
from typing import Any, Iterator

import faiss
import numpy as np

from .filters import Subset

__all__ = [
    "one_thread",
    "matvec",
    "FLAT",
    "HNSW",
    "APPROXIMATE_ABOVE",
    "HNSW_M",
    "HNSW_EF_CONSTRUCTION",
    "HNSW_EF_SEARCH",
    "build",
    "kind_of",
    "ef_search_of",
    "DenseIndex",
    "EntryRows",
]

FLAT = "flat"
HNSW = "hnsw"

# Above this many entries the index is HNSW. bench/bench_scale.py, 2 cores, one query on
# one thread as `nearest` runs it: a flat search for the 200 candidates a search scores
# reads every vector (1.5 KB each) and takes 0.3 ms at 10k entries, 0.9 ms at 20k, 2.6 ms
# at 50k, 5.6 ms at 100k and about 60 ms at 1M; HNSW takes about 1 ms at 100k and 1.3 ms at
# 1M. Up to 20k entries the flat index is as fast as HNSW and exact, so it stays; past
# that HNSW wins by a factor that grows with the corpus, at recall@10 >= 0.98.
APPROXIMATE_ABOVE = 20_000
# Graph links per vector, and the candidate lists kept while building and while searching.
# M 16 and efConstruction 40 (FAISS's default) build 1M vectors in under 4 minutes on 2
# cores; a denser graph (M 32) builds twice as slowly. On that graph efSearch 512 gives
# recall@10 0.99 at 1M (256: 0.98, 128: 0.97) in about 1.3 ms per search.
HNSW_M = 16
HNSW_EF_CONSTRUCTION = 40
HNSW_EF_SEARCH = 512

# A filtered HNSW search widens its candidate list (efSearch) by 1 / (share of entries
# allowed), as most nodes the walk visits are then filtered out; this caps the widening.
MAX_FILTERED_EF = 4096
# What one candidate of a filtered walk costs, in entries scored exactly (measured at 100k
# entries, 2 cores: 2.3 us per candidate kept against 0.2 us per allowed entry). A filter
# that leaves fewer entries than the walk would cost is searched exactly instead.
EXACT_PER_WALK_STEP = 10


def build(
    vectors: np.ndarray,
    approximate_above: int = APPROXIMATE_ABOVE,
    ef_search: int = HNSW_EF_SEARCH,
) -> faiss.Index:
    """A flat index for up to `approximate_above` vectors, HNSW for more."""
    vectors = np.ascontiguousarray(vectors, dtype=np.float32)
    dim = vectors.shape[1]
    index: faiss.Index
    if len(vectors) <= approximate_above:
        index = faiss.IndexFlatIP(dim)
    else:
        graph = faiss.IndexHNSWFlat(dim, HNSW_M, faiss.METRIC_INNER_PRODUCT)
        graph.hnsw.efConstruction = HNSW_EF_CONSTRUCTION
        graph.hnsw.efSearch = ef_search
        index = graph
    index.add(vectors)
    return index


def kind_of(index: faiss.Index) -> str:
    index = faiss.downcast_index(index)
    if isinstance(index, faiss.IndexHNSWFlat):
        return HNSW
    if isinstance(index, faiss.IndexFlat):
        return FLAT
    raise ValueError(f"unsupported FAISS index {type(index).__name__}")


def ef_search_of(index: faiss.Index) -> int:
    """HNSW's efSearch; 0 for a flat index."""
    index = faiss.downcast_index(index)
    return int(index.hnsw.efSearch) if isinstance(index, faiss.IndexHNSWFlat) else 0


class DenseIndex:
    """A loaded FAISS index of normalised vectors, searched with or without a filter."""

    def __init__(self, index: faiss.Index):
        self._owner = index  # the Python object that owns the C++ index; a downcast view does not
        self.index = faiss.downcast_index(index)
        self.kind = kind_of(self.index)
        self.size = int(self.index.ntotal)
        self.dim = int(self.index.d)
        # Exact search within a filter runs on the flat vectors: HNSW keeps them as its storage.
        self._flat = faiss.downcast_index(self.index.storage) if isinstance(self.index, faiss.IndexHNSW) else self.index

    @classmethod
    def from_vectors(cls, vectors: np.ndarray) -> "DenseIndex":
        """A flat index over `vectors` (for callers that hold a matrix, not an index)."""
        return cls(build(vectors, approximate_above=len(vectors)))

    def vectors(self, ids: np.ndarray) -> np.ndarray:
        return self.index.reconstruct_batch(np.asarray(ids, dtype=np.int64))

    def cosines(self, ids: np.ndarray, q: np.ndarray) -> np.ndarray:
        """q · v for the vectors of `ids` (float32, each summed in float64, so a value does
        not depend on which other ids are asked for at the same time)."""
        if not len(ids):
            return np.zeros(0, dtype=np.float32)
        return matvec(self.vectors(ids).astype(np.float64), np.asarray(q, dtype=np.float64)).astype(np.float32)

    def nearest(self, q: np.ndarray, k: int, allowed: Subset | None = None) -> np.ndarray:
        """Ids of the (up to) `k` entries nearest `q`, best first, among `allowed` if given.

        Unfiltered, this is one search of the index. A filter that leaves at most `k`
        entries returns them all, in id order (they are all candidates). Otherwise the allowed entries
        are searched exactly, or, on HNSW when they are many, by a walk of the graph that
        skips the others; if the walk finds too few, exactly after all.
        """
        q = np.ascontiguousarray(np.asarray(q, dtype=np.float32).reshape(1, self.dim))
        if allowed is None:
            return self._search(self.index, q, min(k, self.size))
        if allowed.count <= k:
            return allowed.ids()
        bitmap = allowed.bitmap()
        selector = faiss.IDSelectorBitmap(len(bitmap), faiss.swig_ptr(bitmap))
        if isinstance(self.index, faiss.IndexHNSW):
            share = allowed.count / self.size
            ef = min(MAX_FILTERED_EF, math.ceil(max(int(self.index.hnsw.efSearch), k) / share))
            if allowed.count > EXACT_PER_WALK_STEP * ef:
                found = self._search(self.index, q, k, _search_parameters(selector, ef))
                if len(found) >= k:
                    return found
        return self._search(self._flat, q, k, _search_parameters(selector))

    @staticmethod
    def _search(index: faiss.Index, q: np.ndarray, k: int, params: faiss.SearchParameters | None = None) -> np.ndarray:
        if k <= 0:
            return np.zeros(0, dtype=np.int64)
        with one_thread():
            _, labels = index.search(q, k, params=params)
        found = labels[0]
        ids: np.ndarray = found[found >= 0]
        return ids


def _search_parameters(selector: faiss.IDSelector, ef_search: int | None = None) -> faiss.SearchParameters:
    """A search's parameters: only the ids `selector` allows and, given `ef_search`, HNSW's efSearch.

    faiss's Python wrapper takes them as keyword arguments (and keeps `sel` alive as long as
    the parameters); its type stubs know neither those arguments nor SearchParametersHNSW,
    so the classes are reached untyped here."""
    untyped: Any = faiss
    params: faiss.SearchParameters = (
        untyped.SearchParameters(sel=selector)
        if ef_search is None
        else untyped.SearchParametersHNSW(sel=selector, efSearch=ef_search)
    )
    return params


def matvec(matrix: np.ndarray, vector: np.ndarray) -> np.ndarray:
    """`matrix @ vector` on the calling thread alone, each row summed on its own.

    NumPy hands a product this size (a few hundred rows of 384) to OpenBLAS, which splits it
    across its threads and leaves them spinning on the cores for a while afterwards, where
    the model's OpenMP threads and the event loop then wait for a core. `einsum` computes it
    in NumPy's own loop on this thread: 20-30 us more CPU a search, and no threads spinning.
    """
    dots: np.ndarray = np.einsum("ij,j->i", matrix, vector)
    return dots


@contextmanager
def one_thread() -> Iterator[None]:
    """Run FAISS on the calling thread alone for a while (OpenMP's thread count is per thread).

    A search is one query. FAISS would split a flat scan of it across an OpenMP team, and
    on a machine whose cores are busy (the embedder, other requests) the scan then waits
    for a thread the scheduler has not run yet: a 10k-entry scan took 16 ms with two
    threads on 2 busy cores against 0.3 ms on one.
    """
    before = faiss.omp_get_max_threads()
    faiss.omp_set_num_threads(1)
    try:
        yield
    finally:
        faiss.omp_set_num_threads(before)


class EntryRows:
    """Which entry each vector belongs to, when an entry has several (one per language, say).

    Rows are grouped by entry in entry order: entry i owns rows `start[i]:start[i + 1]`.
    An entry's cosine with a query is the best of its rows'.
    """

    def __init__(self, owners: np.ndarray, entries: int):
        self.owners = np.asarray(owners, dtype=np.int64)
        counts = np.bincount(self.owners, minlength=entries)
        if len(counts) != entries or (len(self.owners) and np.any(np.diff(self.owners) < 0)) or np.any(counts == 0):
            raise ValueError(f"rows must be grouped by entry, each of the {entries} entries owning at least one")
        self.start = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
        self.identity = len(self.owners) == entries

    @classmethod
    def one_each(cls, entries: int) -> "EntryRows":
        return cls(np.arange(entries), entries)

    def rows_of(self, ids: np.ndarray) -> np.ndarray:
        """The rows of the entries `ids`, entry by entry."""
        ids = np.asarray(ids, dtype=np.int64)
        if self.identity:
            return ids
        starts, counts = self.start[ids], self.start[ids + 1] - self.start[ids]
        offsets = np.concatenate(([0], np.cumsum(counts)[:-1]))
        return np.repeat(starts - offsets, counts) + np.arange(int(counts.sum()))

    def best(self, ids: np.ndarray, row_scores: np.ndarray) -> np.ndarray:
        """Per entry of `ids`, the best of its rows' scores (`row_scores` in `rows_of(ids)` order)."""
        if self.identity or not len(ids):
            return row_scores
        counts = self.start[np.asarray(ids) + 1] - self.start[np.asarray(ids)]
        return np.maximum.reduceat(row_scores, np.concatenate(([0], np.cumsum(counts)[:-1])))

    def entries_of(self, rows: np.ndarray) -> np.ndarray:
        """The entries that own `rows`, each once, in the order first seen."""
        owners = self.owners[rows]
        _, first = np.unique(owners, return_index=True)
        owners_kept: np.ndarray = owners[np.sort(first)]
        return owners_kept
