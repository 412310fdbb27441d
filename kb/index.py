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

A reader either sees the old build or the new one, never half of one.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import time
import typing
from dataclasses import asdict, dataclass, field, fields, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable, Sequence, TypeVar

import faiss
import numpy as np

from . import builds, dense
from .adapter import FILE as ADAPTER_FILE
from .adapter import QueryAdapter
from .duplicates import Duplicate
from .entries import Entry
from .errors import IndexMissing, IndexMoved, IndexUnreadable
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

# 2: meta.json names the vector index kind. A version 1 index (always flat) still reads.
# 3: several vectors per entry, their owners in rows.npy. Older indexes (one each) still read.
# 4: the lexical index in lexical.npz. Older indexes have it built at load.
# 5: learned questions in learned.jsonl and learned.npy. Older indexes have none.
# 6: a query adapter in adapter.npz, when meta.json's `adapter` is not empty. Older indexes have none.
FORMAT_VERSION = 6
SHIPPED_FOLDER = "shipped"  # the shipped FAQs' folder in meta.json's `folders`
SYNC_FILE = "sync.json"  # what `kb sync` keeps with a build it made (`kb.syncs`); other builds have none
FILES = ("entries.jsonl", "vectors.faiss", "background.npy", "rows.npy", "lexical.npz", "learned.jsonl", "learned.npy")


def _files(format_version: int) -> tuple[str, ...]:
    return FILES[: {2: 3, 3: 4, 4: 5}.get(format_version, 3 if format_version < 2 else len(FILES))]


@dataclass(frozen=True)
class IndexMeta:
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


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


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
    if learned_vectors is None:
        learned_vectors = np.zeros((0, vectors.shape[1]), dtype=np.float32)
    if len(learned) != len(learned_vectors):
        raise ValueError(f"{len(learned)} learned questions but {len(learned_vectors)} vectors")
    owners = np.arange(len(entries)) if owners is None else np.asarray(owners)
    if len(owners) != len(vectors):
        raise ValueError(f"{len(vectors)} vectors but {len(owners)} owners")
    dense.EntryRows(owners, len(entries))  # raises unless every entry owns a group of rows

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

    return _swap_in(index_dir, write, replacing)


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
        names = [name for name in _files(old.format_version) if name != ADAPTER_FILE]
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

    return _swap_in(index_dir, write)


def _write_adapter(tmp: Path, adapter: QueryAdapter | None, checksums: dict[str, str]) -> dict[str, typing.Any]:
    """Write the adapter's file into a build being written, its checksum into `checksums`;
    returns what meta.json says of it ({} for none)."""
    if adapter is None:
        return {}
    adapter.save(tmp / ADAPTER_FILE)
    checksums[ADAPTER_FILE] = _sha256(tmp / ADAPTER_FILE)
    return {"model": adapter.model, **adapter.summary()}


def _swap_in(index_dir: Path, write: Callable[[Path], IndexMeta], replacing: Path | None = None) -> IndexMeta:
    """Have `write` fill a new build directory, then point `index_dir` at it in one rename
    (with `replacing`, only if `index_dir` still points at that build)."""
    builds_dir = index_dir.parent / "builds"
    with builds.writing(builds_dir):  # one ingest writes at a time; what a killed one left is removed
        if replacing is not None and index_dir.resolve() != replacing.resolve():
            raise IndexMoved(index_dir, replacing, index_dir.resolve())
        stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S%f")
        build = builds_dir / stamp
        tmp = builds_dir / f".{stamp}{builds.PARTIAL}"
        tmp.mkdir()
        try:
            meta = write(tmp)
            os.rename(tmp, build)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        link = index_dir.parent / f"{builds.LINK_PREFIX}{stamp}"
        os.symlink(Path("builds") / stamp, link)
        if index_dir.exists() and not index_dir.is_symlink():
            link.unlink()
            raise IndexUnreadable(index_dir, "exists and is not an index link; move it away first")
        os.replace(link, index_dir)  # atomic: readers see the old build or the new one
        builds.prune(builds_dir, current=stamp)
    return meta


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
    checksums = {name: _sha256(tmp / name) for name in FILES}
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


def _learned(path: Path) -> list[LearnedQuestion]:
    with open(path, encoding="utf-8") as f:
        return [LearnedQuestion(**json.loads(line)) for line in f if line.strip()]


def read_meta(index_dir: Path) -> IndexMeta:
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


def read_adapter(index_dir: Path) -> QueryAdapter | None:
    """The query adapter of the build at `index_dir`, or None when it has none."""
    if not read_meta(index_dir).adapter:
        return None
    return _load(index_dir, ADAPTER_FILE, QueryAdapter.load)


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
    for name in _files(meta.format_version) + ((ADAPTER_FILE,) if meta.adapter else ()):
        path = index_dir / name
        if not path.exists():
            raise IndexUnreadable(index_dir, f"{name} is missing")
        if meta.checksums.get(name) != _sha256(path):
            raise IndexUnreadable(index_dir, f"{name} does not match its checksum in meta.json (corrupt)")
    entries = _load(index_dir, "entries.jsonl", _entries)
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
    if meta.format_version >= 4:
        lexical = _load(index_dir, "lexical.npz", LexicalIndex.load)
        if lexical.size != len(entries):
            raise IndexUnreadable(
                index_dir, f"lexical.npz indexes {lexical.size} entries; entries.jsonl holds {len(entries)}"
            )
    else:
        lexical = LexicalIndex.of_entries(entries)
    learned = Learned.empty(meta.dim)
    if meta.format_version >= 5:
        questions = _load(index_dir, "learned.jsonl", _learned)
        learned_vectors = _load(index_dir, "learned.npy", _matrix)
        if len(questions) != len(learned_vectors) or learned_vectors.shape[1] != meta.dim:
            raise IndexUnreadable(
                index_dir,
                f"learned.jsonl holds {len(questions)} questions; learned.npy {learned_vectors.shape} vectors",
            )
        learned = Learned.of(questions, learned_vectors, {e.id: i for i, e in enumerate(entries)}, meta.dim)
    adapter = _load(index_dir, ADAPTER_FILE, QueryAdapter.load) if meta.adapter else None
    if adapter is not None and (adapter.model != meta.model or adapter.dim != meta.dim):
        raise IndexUnreadable(
            index_dir,
            f"{ADAPTER_FILE} maps vectors of dimension {adapter.dim} of model {adapter.model!r}; "
            f"meta.json says {meta.dim} of {meta.model!r}",
        )
    return Index(index_dir.resolve(), meta, entries, vectors, background, rows, lexical, learned, adapter)
