"""The index's manifest, meta.json: what a build holds and how it was made, read and checked field by field.

Every build directory (kb/index.py) has one, written last; a reader checks it before it loads a
file, and a served build's is read on every `/healthz`, so a manifest of the wrong shape is an
IndexUnreadable naming the field, never a crash later.
"""

from __future__ import annotations

import hashlib
import json
import time
import typing
from dataclasses import dataclass, field, fields
from datetime import datetime
from pathlib import Path

from . import dense
from .duplicates import Duplicate
from .errors import IndexMissing, IndexUnreadable

__all__ = [
    "FILES",
    "FORMAT_VERSION",
    "SHIPPED_FOLDER",
    "SYNC_FILE",
    "IndexMeta",
    "build_files",
    "checksum",
    "read_meta",
]

# 2: meta.json names the vector index kind. A version 1 index (always flat) still reads.
# 3: several vectors per entry, their owners in rows.npy. Older indexes (one each) still read.
# 4: the lexical index in lexical.npz. Older indexes have it built at load.
# 5: learned questions in learned.jsonl and learned.npy. Older indexes have none.
# 6: a query adapter in adapter.npz, when meta.json's `adapter` is not empty. Older indexes have none.
FORMAT_VERSION = 6
SHIPPED_FOLDER = "shipped"  # the shipped FAQs' folder in meta.json's `folders`
SYNC_FILE = "sync.json"  # what `kb sync` keeps with a build it made (`kb.syncs`); other builds have none
FILES = ("entries.jsonl", "vectors.faiss", "background.npy", "rows.npy", "lexical.npz", "learned.jsonl", "learned.npy")


def build_files(format_version: int) -> tuple[str, ...]:
    """The files of FILES that a build of `format_version` holds (meta.json and the adapter aside)."""
    return FILES[: {2: 3, 3: 4, 4: 5}.get(format_version, 3 if format_version < 2 else len(FILES))]


@dataclass(frozen=True)
class IndexMeta:
    """What meta.json says of a build: its format, model, entries, checksums and where it was read from."""

    format_version: int
    model: str
    dim: int
    entry_count: int
    built_at: str  # ISO-8601, UTC
    sources_hash: str
    checksums: dict[str, str] = field(default_factory=dict)
    index_kind: str = dense.FLAT  # "flat" (exact) or "hnsw" (approximate); absent before version 2
    ef_search: int = 0  # HNSW's efSearch, the candidate list a search keeps; 0 for flat
    # The site's name and tagline from the sources' manifests ({"name": {"zh": …, "en": …}}); {} when none gives one.
    site: dict[str, dict[str, str]] = field(default_factory=dict)
    # The query adapter's summary (`QueryAdapter.summary`, and its model); {} when the build has none.
    adapter: dict[str, typing.Any] = field(default_factory=dict)
    # The near-duplicate entries ingest found (`Duplicate.to_dict`); absent before, and then none.
    duplicates: list[dict[str, typing.Any]] = field(default_factory=list)
    # The folders of sources the build was read from, in order: absolute paths, the shipped FAQs' folder as
    # SHIPPED_FOLDER (wherever kb is installed). Absent before, and then unknown.
    folders: list[str] = field(default_factory=list)

    @property
    def age_seconds(self) -> float:
        return time.time() - datetime.fromisoformat(self.built_at).timestamp()


def checksum(path: Path) -> str:
    """The SHA-256 of a file, as meta.json keeps it."""
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def read_meta(index_dir: Path) -> IndexMeta:
    """The manifest of the build at `index_dir`, checked; IndexMissing or IndexUnreadable naming the fault."""
    meta_path = index_dir / "meta.json"
    if not index_dir.exists():
        raise IndexMissing(index_dir, "no index here yet; run `kb ingest`")
    if not meta_path.exists():
        raise IndexUnreadable(index_dir, "meta.json is missing: not a kb index, or a truncated one")
    try:
        raw = json.loads(meta_path.read_text(encoding="utf-8"))
        meta = IndexMeta(**raw)
    except (ValueError, TypeError) as exc:
        raise IndexUnreadable(index_dir, f"meta.json is not a kb index manifest ({exc})") from None
    problem = _meta_problem(meta)
    if problem:
        raise IndexUnreadable(index_dir, f"meta.json: {problem}")
    if meta.format_version > FORMAT_VERSION:
        raise IndexUnreadable(
            index_dir,
            f"format version {meta.format_version} is newer than this kb reads ({FORMAT_VERSION}); upgrade kb",
        )
    return meta


def _meta_problem(meta: IndexMeta) -> str:
    """What is wrong with a manifest's field types or its build time ("" if nothing): a served
    build's manifest is read on every `/healthz`, so it is checked once, here."""
    types = typing.get_type_hints(IndexMeta)
    for f in fields(IndexMeta):
        value, expected = getattr(meta, f.name), typing.get_origin(types[f.name]) or types[f.name]
        if not isinstance(value, expected) or (expected is int and isinstance(value, bool)):
            return f"{f.name} is {value!r}, expected {expected.__name__}"
    if not all(isinstance(v, str) for v in meta.folders):
        return "folders must be a list of paths"
    if not all(isinstance(v, str) for v in meta.checksums.values()):
        return "checksums must map file names to SHA-256 digests"
    if not all(isinstance(v, dict) and all(isinstance(x, str) for x in v.values()) for v in meta.site.values()):
        return "site must map name and tagline to a text per language"
    try:
        [Duplicate.from_dict(d) for d in meta.duplicates]
    except TypeError:
        return "duplicates must be pairs of entries, each with its scores"
    try:
        datetime.fromisoformat(meta.built_at)
    except ValueError:
        return f"built_at is {meta.built_at!r}, expected an ISO-8601 time"
    return ""
