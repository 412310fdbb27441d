"""Passage vectors kept across ingests, in SQLite: an entry embedded once is not embedded again."""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from .embedding import Embedder

__all__ = ["EmbeddingCache", "embed_with_cache"]


class EmbeddingCache:
    """Passage vectors by content hash in a SQLite file, so re-ingesting embeds only what changed."""

    def __init__(self, path: Path, model: str):
        path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(path)
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS vectors (model TEXT, hash TEXT, vector BLOB, PRIMARY KEY (model, hash))"
        )
        self._model = model

    @staticmethod
    def key(text: str) -> str:
        return hashlib.sha256(text.encode("utf-8")).hexdigest()

    def get_many(self, keys: Sequence[str]) -> dict[str, np.ndarray]:
        found: dict[str, np.ndarray] = {}
        for start in range(0, len(keys), 500):
            chunk = list(keys[start : start + 500])
            marks = ",".join("?" * len(chunk))
            rows = self._db.execute(
                f"SELECT hash, vector FROM vectors WHERE model = ? AND hash IN ({marks})",
                [self._model, *chunk],
            )
            for key, blob in rows:
                found[key] = np.frombuffer(blob, dtype=np.float32)
        return found

    def put_many(self, items: dict[str, np.ndarray]) -> None:
        with self._db:
            self._db.executemany(
                "INSERT OR REPLACE INTO vectors VALUES (?, ?, ?)",
                [(self._model, k, np.asarray(v, dtype=np.float32).tobytes()) for k, v in items.items()],
            )

    def close(self) -> None:
        self._db.close()


def embed_with_cache(
    embedder: Embedder,
    texts: Sequence[str],
    cache: EmbeddingCache,
    progress: Callable[[int, int], None] | None = None,
    batch_size: int = 16,
    queries: bool = False,
) -> tuple[np.ndarray, int]:
    """Embed passages (or, with `queries`, questions as the model embeds a query), computing
    only those the cache has not seen; returns (vectors, computed)."""
    texts = list(texts)
    keys = [EmbeddingCache.key(f"query\0{t}" if queries else t) for t in texts]
    embed = embedder.embed_queries if queries else embedder.embed_passages
    known = cache.get_many(keys)
    out = np.zeros((len(texts), embedder.dim), dtype=np.float32)
    todo = []
    for i, key in enumerate(keys):
        if key in known:
            out[i] = known[key]
        else:
            todo.append(i)
    done = len(texts) - len(todo)
    if progress:
        progress(done, len(texts))
    for start in range(0, len(todo), batch_size):
        batch = todo[start : start + batch_size]
        vectors = embed([texts[i] for i in batch], batch_size)
        out[batch] = vectors
        cache.put_many({keys[i]: vectors[j] for j, i in enumerate(batch)})
        done += len(batch)
        if progress:
            progress(done, len(texts))
    return out, len(todo)
