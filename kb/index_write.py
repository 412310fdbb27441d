"""Writing an index build: a new build's files, or the current build with another query adapter, swapped in atomically.

The files are those kb/index.py describes, meta.json last; `kb.builds.swap_in` points the index
link at the new build in one rename, so a reader sees the old build or the new one.
"""

from __future__ import annotations

import json
import os
import shutil
import typing
from dataclasses import asdict, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Sequence

import faiss
import numpy as np

from . import builds, dense
from .adapter import FILE as ADAPTER_FILE
from .adapter import QueryAdapter
from .duplicates import Duplicate
from .entries import Entry
from .errors import IndexUnreadable
from .index_meta import FILES, FORMAT_VERSION, SYNC_FILE, IndexMeta, build_files, checksum, read_meta
from .learning.overlay import Learned
from .learning.questions import LearnedQuestion
from .lexical import LexicalIndex

__all__ = ["write_adapted", "write_index"]


def write_index(
    index_dir: Path,
    entries: list[Entry],
    vectors: np.ndarray,
    background: np.ndarray,
    model: str,
    sources_hash: str,
    approximate_above: int = dense.APPROXIMATE_ABOVE,
    owners: np.ndarray | None = None,
    learned: Sequence[LearnedQuestion] = (),
    learned_vectors: np.ndarray | None = None,
    site: dict[str, dict[str, str]] | None = None,
    adapter: QueryAdapter | None = None,
    duplicates: Sequence[Duplicate] = (),
    replacing: Path | None = None,
    sync: dict[str, typing.Any] | None = None,
    folders: Sequence[str] = (),
) -> IndexMeta:
    """Write a new build beside the current one, then point `index_dir` at it in one rename.

    `owners[i]` is the entry vector i belongs to (default: one vector per entry, in order).
    The vectors go in a flat index up to `approximate_above` of them and in HNSW past it
    (see `kb.dense` for why there). `learned` are the sources' learned questions, with their
    vectors; an alternate's words join its entry's question on the lexical side. `site` is
    the site's name and tagline in each language, as the manifests give them; `adapter`, the
    query adapter the build carries; `duplicates`, the near-duplicate entries found; `sync`,
    what `kb sync` keeps with the build (`kb.syncs`: the commits read, the old pins, the id map); `folders`,
    the folders of sources it was read from (see `IndexMeta.folders`). With
    `replacing` (a build made from the one at that path), IndexMoved when the index points at
    another by the time it is written: nothing is swapped in.
    """
    owners, learned_vectors = _checked_rows(len(entries), vectors, owners, len(learned), learned_vectors)

    def write(tmp: Path) -> IndexMeta:
        if sync is not None:
            (tmp / SYNC_FILE).write_text(json.dumps(sync, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
        return _write_build(
            tmp,
            entries,
            vectors,
            background,
            model,
            sources_hash,
            approximate_above,
            owners,
            learned,
            learned_vectors,
            site or {},
            adapter,
            duplicates,
            folders,
        )

    return builds.swap_in(index_dir, write, replacing)


def _checked_rows(
    entries: int, vectors: np.ndarray, owners: np.ndarray | None, learned: int, learned_vectors: np.ndarray | None
) -> tuple[np.ndarray, np.ndarray]:
    """The owner of each vector and the learned questions' vectors, defaults filled in; ValueError when their
    counts disagree, or when an entry owns no group of rows."""
    if learned_vectors is None:
        learned_vectors = np.zeros((0, vectors.shape[1]), dtype=np.float32)
    if learned != len(learned_vectors):
        raise ValueError(f"{learned} learned questions but {len(learned_vectors)} vectors")
    owners = np.arange(entries) if owners is None else np.asarray(owners)
    if len(owners) != len(vectors):
        raise ValueError(f"{len(vectors)} vectors but {len(owners)} owners")
    dense.EntryRows(owners, entries)  # raises unless every entry owns a group of rows
    return owners, learned_vectors


def write_adapted(index_dir: Path, adapter: QueryAdapter | None) -> IndexMeta:
    """A new build that is the current one with `adapter` as its query adapter (None: without
    one), swapped in as `write_index` does. The other files are hard links to the current
    build's (copies where the file system has none): builds are never changed once written."""

    def write(tmp: Path) -> IndexMeta:
        current = index_dir.resolve()  # read under the write lock: no other build is swapped in meanwhile
        old = read_meta(index_dir)
        if old.format_version < 5:
            raise IndexUnreadable(index_dir, "built by an older kb; run `kb ingest` again")
        if adapter is not None and adapter.model != old.model:
            raise IndexUnreadable(
                index_dir, f"built with model {old.model!r}; the adapter was fitted for {adapter.model!r}"
            )
        names = [name for name in build_files(old.format_version) if name != ADAPTER_FILE]
        kept = names + ([SYNC_FILE] if (current / SYNC_FILE).exists() else [])
        for name in kept:
            try:
                os.link(current / name, tmp / name)
            except OSError:
                shutil.copy2(current / name, tmp / name)
        checksums = {name: old.checksums[name] for name in names if name in old.checksums}
        summary = _write_adapter(tmp, adapter, checksums)
        meta = replace(
            old,
            format_version=FORMAT_VERSION,
            built_at=datetime.now(timezone.utc).isoformat(timespec="seconds"),
            checksums=checksums,
            adapter=summary,
        )
        (tmp / "meta.json").write_text(json.dumps(asdict(meta), indent=2) + "\n", encoding="utf-8")
        return meta

    return builds.swap_in(index_dir, write)


def _write_adapter(tmp: Path, adapter: QueryAdapter | None, checksums: dict[str, str]) -> dict[str, typing.Any]:
    """Write the adapter's file into a build being written, its checksum into `checksums`;
    returns what meta.json says of it ({} for none)."""
    if adapter is None:
        return {}
    adapter.save(tmp / ADAPTER_FILE)
    checksums[ADAPTER_FILE] = checksum(tmp / ADAPTER_FILE)
    return {"model": adapter.model, **adapter.summary()}


def _write_build(
    tmp: Path,
    entries: list[Entry],
    vectors: np.ndarray,
    background: np.ndarray,
    model: str,
    sources_hash: str,
    approximate_above: int,
    owners: np.ndarray,
    learned: Sequence[LearnedQuestion],
    learned_vectors: np.ndarray,
    site: dict[str, dict[str, str]],
    adapter: QueryAdapter | None,
    duplicates: Sequence[Duplicate] = (),
    folders: Sequence[str] = (),
) -> IndexMeta:
    """Write a build's files into `tmp`, the manifest last."""
    with open(tmp / "entries.jsonl", "w", encoding="utf-8") as f:
        for entry in entries:
            f.write(json.dumps(entry.to_dict(), ensure_ascii=False) + "\n")
    index = dense.build(vectors, approximate_above)
    faiss.write_index(index, str(tmp / "vectors.faiss"))
    np.save(tmp / "background.npy", np.asarray(background, dtype=np.float32))
    np.save(tmp / "rows.npy", owners.astype(np.int32))
    overlay = Learned.of(learned, learned_vectors, {e.id: i for i, e in enumerate(entries)}, vectors.shape[1])
    LexicalIndex.of_entries(entries, overlay.texts_by_entry(len(entries))).save(tmp / "lexical.npz")
    with open(tmp / "learned.jsonl", "w", encoding="utf-8") as f:
        for question in learned:
            f.write(json.dumps(asdict(question), ensure_ascii=False) + "\n")
    np.save(tmp / "learned.npy", np.asarray(learned_vectors, dtype=np.float32).reshape(len(learned), vectors.shape[1]))
    checksums = {name: checksum(tmp / name) for name in FILES}
    summary = _write_adapter(tmp, adapter, checksums)
    meta = IndexMeta(
        format_version=FORMAT_VERSION,
        model=model,
        dim=int(vectors.shape[1]),
        entry_count=len(entries),
        built_at=datetime.now(timezone.utc).isoformat(timespec="seconds"),
        sources_hash=sources_hash,
        checksums=checksums,
        index_kind=dense.kind_of(index),
        ef_search=dense.ef_search_of(index),
        site=site,
        adapter=summary,
        duplicates=[d.to_dict() for d in duplicates],
        folders=list(folders),
    )
    (tmp / "meta.json").write_text(json.dumps(asdict(meta), indent=2) + "\n", encoding="utf-8")
    return meta
