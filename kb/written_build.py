"""A new build with the written answers as their file now holds them: the current build's other
entries, vectors and learned questions kept, only the written answers' passages embedded.

What the server runs after an answer is written, edited or removed on the insights page
(server/written.py); `kb ingest` reads the same file as a source (ingest/sources.py), so the
next ingest gives these entries too. The new build is written beside the current one and
swapped in as any build is (`kb.index.write_index`); the vectors of the answers' passages come
from the embedding cache where they are in it, so an edit of one answer embeds that answer.
Near-duplicate pairs with a written answer are found by the next `kb ingest`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .duplicates import Duplicate
from .embedding import Embedder
from .embedding_cache import EmbeddingCache, embed_with_cache
from .errors import IndexMoved
from .glossary import load_glossary
from .index import IndexMeta, read_index, write_index
from .settings import Settings
from .written import WrittenFile, is_written

__all__ = ["WrittenBuild", "write_written"]

TRIES = 3  # builds made again when another (an ingest's, a refit's) was swapped in while one was made


@dataclass(frozen=True)
class WrittenBuild:
    """What a build with the written answers holds: the manifest, the answers' entries, the passages embedded now."""

    meta: IndexMeta
    written: int
    embedded: int


def write_written(settings: Settings, embedder: Embedder) -> WrittenBuild:
    """Write a build that is the current one with the written answers of `settings.written_path`
    in place of those it held, and point the index at it. `embedder` is the build's own model
    (the server's, already loaded). A build another writer swaps in meanwhile is built on, not undone."""
    for tried in range(1, TRIES + 1):
        try:
            return _write_on_current(settings, embedder)
        except IndexMoved:
            if tried == TRIES:
                raise
    raise AssertionError("unreachable")


def _write_on_current(settings: Settings, embedder: Embedder) -> WrittenBuild:
    written = WrittenFile(settings.written_path).entries()
    index = read_index(settings.index_dir, embedder.model)
    name = settings.written_path.name
    keep = [i for i, entry in enumerate(index.entries) if not is_written(entry, name)]
    position = {old: new for new, old in enumerate(keep)}
    owners = index.rows.owners
    rows = np.flatnonzero(np.isin(owners, keep))
    glossary = load_glossary()
    texts = [glossary.gloss(version.text) for entry in written for version in entry.versions()]
    cache = EmbeddingCache(settings.cache_dir / "embeddings.sqlite", embedder.model)
    try:
        vectors, embedded = embed_with_cache(embedder, texts, cache)
    finally:
        cache.close()
    entries = [index.entries[i] for i in keep] + written
    new_owners = [len(keep) + i for i, entry in enumerate(written) for _ in entry.versions()]
    ids = {entry.id for entry in entries}
    learned = index.learned
    kept = [i for i, q in enumerate(learned.questions) if q.entry is None or q.entry in ids]
    duplicates = [Duplicate.from_dict(d) for d in index.meta.duplicates]
    meta = write_index(
        settings.index_dir,
        entries,
        np.vstack([index.vector_matrix()[rows], vectors.reshape(len(texts), index.meta.dim)]),
        index.background,
        index.meta.model,
        index.meta.sources_hash,
        owners=np.array([position[int(o)] for o in owners[rows]] + new_owners, dtype=np.int64),
        learned=[learned.questions[i] for i in kept],
        learned_vectors=learned.vectors[kept],
        site=index.meta.site,
        adapter=index.adapter,
        duplicates=[d for d in duplicates if d.first in ids and d.second in ids],
        replacing=index.path,
    )
    return WrittenBuild(meta, len(written), embedded)
