"""The index directory: entries, their vectors and a manifest, written atomically.

    $KB_DATA_DIR/index -> builds/<stamp>/     a symlink, swapped in one rename
        meta.json       format version, model, dimension, entry count, sources hash, checksums,
                        the kind of vector index (flat or hnsw) and HNSW's efSearch, the
                        site's name and tagline the sources' manifests give, and the
                        near-duplicate entries ingest found (`kb.duplicates`), and the
                        folders of sources it was read from (`kb sync` builds from the same)
        entries.jsonl   one entry per line
        vectors.faiss   normalised passage vectors (inner product = cosine), in a flat FAISS
                        index up to `kb.dense.APPROXIMATE_ABOVE` entries and HNSW past it:
                        one or more per entry (one per language the entry has)
        rows.npy        the entry each vector belongs to (row i of vectors.faiss is entry rows[i])
        background.npy  vectors of general-domain sentences, to tell how high unrelated text scores
        lexical.npz     the entries' term postings (`kb.lexical`), so loading tokenizes nothing
        learned.jsonl   the learned questions of the sources' files (`kb.learning`): alternates
                        of entries and questions the FAQ does not cover, one a line
        learned.npy     their vectors, as the model embeds a query, row i for line i
        adapter.npz     the query adapter (`kb.adapter`), when the build has one: meta.json's
                        `adapter` describes it and its checksum is among the others

A reader either sees the old build or the new one, never half of one. This module reads a build
(`read_index`, every file checked against its checksum); meta.json is `kb/index_meta.py`'s, and
writing a build is `kb/index_write.py`'s (`write_index`, `write_adapted`, named here too).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, TypeVar

import faiss
import numpy as np

from . import dense
from .adapter import FILE as ADAPTER_FILE
from .adapter import QueryAdapter
from .entries import Entry
from .errors import IndexUnreadable
from .index_meta import FORMAT_VERSION, SHIPPED_FOLDER, IndexMeta, build_files, checksum, read_meta
from .index_write import write_adapted, write_index
from .learning.overlay import Learned
from .learning.questions import LearnedQuestion
from .lexical import LexicalIndex

__all__ = [
    "FORMAT_VERSION",
    "IndexMeta",
    "Index",
    "write_index",
    "write_adapted",
    "read_index",
    "read_meta",
    "read_adapter",
    "SHIPPED_FOLDER",
]


@dataclass
class Index:
    """A loaded index: the entries in order and a FAISS index over their vectors."""

    path: Path
    meta: IndexMeta
    entries: list[Entry]
    vectors: faiss.Index
    background: np.ndarray
    rows: dense.EntryRows
    lexical: LexicalIndex
    learned: Learned = field(default_factory=lambda: Learned.empty(0))
    adapter: QueryAdapter | None = None

    def vector_matrix(self) -> np.ndarray:
        matrix: np.ndarray = self.vectors.reconstruct_n(0, self.vectors.ntotal)
        return matrix


def _learned(path: Path) -> list[LearnedQuestion]:
    with open(path, encoding="utf-8") as f:
        return [LearnedQuestion(**json.loads(line)) for line in f if line.strip()]


def read_adapter(index_dir: Path) -> QueryAdapter | None:
    """The query adapter of the build at `index_dir`, or None when it has none."""
    if not read_meta(index_dir).adapter:
        return None
    return _load(index_dir, ADAPTER_FILE, QueryAdapter.load)


T = TypeVar("T")


def _load(index_dir: Path, name: str, load: Callable[[Path], T]) -> T:
    """`load(index_dir / name)`; bytes it cannot read become an IndexUnreadable naming the file.

    Checksums only say a file is the one written; one written by another version of FAISS
    or NumPy, or by something else, is refused here.
    """
    try:
        return load(index_dir / name)
    except (OSError, RuntimeError, ValueError, EOFError) as exc:
        reason = re.sub(r"^Error in .*? at \S+: ", "", str(exc).strip()).partition("\n")[0]  # FAISS's C++ location
        raise IndexUnreadable(index_dir, f"{name} cannot be read ({type(exc).__name__}: {reason})") from None


def _entries(path: Path) -> list[Entry]:
    """The entries of an entries.jsonl file, one a line."""
    entries = []
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            try:
                entries.append(Entry.from_dict(json.loads(line)))
            except (ValueError, TypeError, AttributeError) as exc:
                raise ValueError(f"line {number}: {exc}") from None
    return entries


def _matrix(path: Path) -> np.ndarray:
    """A 2-D float array from a .npy file."""
    array: np.ndarray = np.load(path)
    if array.ndim != 2 or array.dtype.kind != "f":
        raise ValueError(f"a {array.dtype} array of shape {array.shape}, expected 2-D floats")
    return array


def _owners(path: Path) -> np.ndarray:
    """A 1-D integer array from a .npy file."""
    array: np.ndarray = np.load(path)
    if array.ndim != 1 or array.dtype.kind not in "iu":
        raise ValueError(f"a {array.dtype} array of shape {array.shape}, expected 1-D integers")
    return array


def read_index(index_dir: Path, model: str | None = None) -> Index:
    """Load and verify an index; with `model`, refuse one built by another model."""
    index_dir = Path(index_dir)
    meta = read_meta(index_dir)
    if model is not None and meta.model != model:
        raise IndexUnreadable(
            index_dir,
            f"built with model {meta.model!r} but KB_EMBED_MODEL is {model!r}; run `kb ingest` again",
        )
    _verify_checksums(index_dir, meta)
    entries = _load(index_dir, "entries.jsonl", _entries)
    vectors = _read_vectors(index_dir, meta)
    background = _load(index_dir, "background.npy", _matrix)
    owners = _load(index_dir, "rows.npy", _owners) if meta.format_version >= 3 else np.arange(len(entries))
    if len(background) and background.shape[1] != meta.dim:
        raise IndexUnreadable(
            index_dir, f"background.npy holds vectors of dimension {background.shape[1]}; meta.json says {meta.dim}"
        )
    if vectors.ntotal != len(owners) or vectors.d != meta.dim or len(entries) != meta.entry_count:
        raise IndexUnreadable(
            index_dir,
            f"{len(entries)} entries, {vectors.ntotal} vectors of dimension {vectors.d} for {len(owners)} rows; "
            f"meta.json says {meta.entry_count} entries of dimension {meta.dim}",
        )
    try:
        rows = dense.EntryRows(owners, len(entries))
    except ValueError as exc:
        raise IndexUnreadable(index_dir, f"rows.npy: {exc}") from None
    lexical = _read_lexical(index_dir, meta, entries)
    learned = _read_learned(index_dir, meta, entries)
    adapter = _read_adapter(index_dir, meta)
    return Index(index_dir.resolve(), meta, entries, vectors, background, rows, lexical, learned, adapter)


def _verify_checksums(index_dir: Path, meta: IndexMeta) -> None:
    """IndexUnreadable when a file the manifest lists is missing or is not the one written."""
    for name in build_files(meta.format_version) + ((ADAPTER_FILE,) if meta.adapter else ()):
        path = index_dir / name
        if not path.exists():
            raise IndexUnreadable(index_dir, f"{name} is missing")
        if meta.checksums.get(name) != checksum(path):
            raise IndexUnreadable(index_dir, f"{name} does not match its checksum in meta.json (corrupt)")


def _read_vectors(index_dir: Path, meta: IndexMeta) -> faiss.Index:
    """The FAISS index of the entries' vectors, of the kind the manifest names, with HNSW's efSearch set."""
    vectors = _load(index_dir, "vectors.faiss", lambda path: faiss.read_index(str(path)))
    try:
        kind = dense.kind_of(vectors)
    except ValueError as exc:
        raise IndexUnreadable(index_dir, f"vectors.faiss: {exc}") from None
    if kind != meta.index_kind:
        raise IndexUnreadable(index_dir, f"vectors.faiss holds a {kind} index; meta.json says {meta.index_kind}")
    if kind == dense.HNSW and meta.ef_search > 0:
        graph = faiss.downcast_index(vectors)
        assert isinstance(graph, faiss.IndexHNSW)  # as kind_of found
        graph.hnsw.efSearch = meta.ef_search
    return vectors


def _read_lexical(index_dir: Path, meta: IndexMeta, entries: list[Entry]) -> LexicalIndex:
    """The entries' term postings as the build keeps them; built now for an index older than version 4."""
    if meta.format_version < 4:
        return LexicalIndex.of_entries(entries)
    lexical = _load(index_dir, "lexical.npz", LexicalIndex.load)
    if lexical.size != len(entries):
        raise IndexUnreadable(
            index_dir, f"lexical.npz indexes {lexical.size} entries; entries.jsonl holds {len(entries)}"
        )
    return lexical


def _read_learned(index_dir: Path, meta: IndexMeta, entries: list[Entry]) -> Learned:
    """The learned questions with their vectors; none for an index older than version 5."""
    if meta.format_version < 5:
        return Learned.empty(meta.dim)
    questions = _load(index_dir, "learned.jsonl", _learned)
    learned_vectors = _load(index_dir, "learned.npy", _matrix)
    if len(questions) != len(learned_vectors) or learned_vectors.shape[1] != meta.dim:
        raise IndexUnreadable(
            index_dir,
            f"learned.jsonl holds {len(questions)} questions; learned.npy {learned_vectors.shape} vectors",
        )
    return Learned.of(questions, learned_vectors, {e.id: i for i, e in enumerate(entries)}, meta.dim)


def _read_adapter(index_dir: Path, meta: IndexMeta) -> QueryAdapter | None:
    """The build's query adapter, checked against its model and dimension; None when it has none."""
    adapter = _load(index_dir, ADAPTER_FILE, QueryAdapter.load) if meta.adapter else None
    if adapter is not None and (adapter.model != meta.model or adapter.dim != meta.dim):
        raise IndexUnreadable(
            index_dir,
            f"{ADAPTER_FILE} maps vectors of dimension {adapter.dim} of model {adapter.model!r}; "
            f"meta.json says {meta.dim} of {meta.model!r}",
        )
    return adapter
