"""Whether an index was built from the sources beside it: the hash of what it is made of, and its folders.

`kb ingest` writes the hash and the folders into the index's meta; `kb serve` compares the hash with
the sources before it serves (a warning when they differ), and `kb sync` builds from the same folders.
Kept apart from `ingest` so that the comparison loads no parser.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Sequence

from .errors import IndexMissing, SourceError
from .glossary import GLOSSARY_PATH
from .index import SHIPPED_FOLDER, read_meta
from .settings import SHIPPED_SOURCES, Settings

__all__ = [
    "BACKGROUND_PATH",
    "SourceDirs",
    "source_dirs",
    "sources_hash",
    "index_is_stale",
    "folder_names",
    "built_from",
    "is_shipped",
    "build_folders",
]

BACKGROUND_PATH = Path(__file__).resolve().parent / "data" / "background.txt"

SourceDirs = Path | Sequence[Path]


def source_dirs(sources_dir: SourceDirs) -> list[Path]:
    """One directory of sources or several, as a list."""
    return [Path(sources_dir)] if isinstance(sources_dir, (str, Path)) else [Path(d) for d in sources_dir]


def sources_hash(sources_dir: SourceDirs) -> str:
    """A hash of every source file (of one directory or several), the glossary and the
    background: what the index is made of."""
    digest = hashlib.sha256()
    files = [p for d in source_dirs(sources_dir) for p in sorted(p for p in d.iterdir() if p.is_file())]
    for path in files + [GLOSSARY_PATH, BACKGROUND_PATH]:
        if path.exists():
            digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def index_is_stale(settings: Settings, sources_dir: SourceDirs | None = None) -> bool:
    """True when there is no index yet or it was built from other sources.

    A corrupt or foreign index is not stale but wrong: `read_meta` raises, naming why.
    """
    try:
        meta = read_meta(settings.index_dir)
    except IndexMissing:
        return True
    return meta.sources_hash != sources_hash(sources_dir or settings.sources_dir)


def is_shipped(folder: Path) -> bool:
    """Whether `folder` is the shipped FAQs' folder (`kb/sources` of this installation)."""
    return Path(folder).resolve() == SHIPPED_SOURCES.resolve()


def folder_names(sources_dir: SourceDirs) -> list[str]:
    """The folders as a build records them: absolute paths, the shipped FAQs' as `SHIPPED_FOLDER`."""
    return [SHIPPED_FOLDER if is_shipped(d) else str(d.resolve()) for d in source_dirs(sources_dir)]


def built_from(settings: Settings) -> list[Path] | None:
    """The folders the index at `settings.index_dir` was read from, in order; None when there is no index
    or it does not say (built before builds recorded their folders)."""
    try:
        meta = read_meta(settings.index_dir)
    except IndexMissing:
        return None
    if not meta.folders:
        return None
    return [SHIPPED_SOURCES if name == SHIPPED_FOLDER else Path(name) for name in meta.folders]


def build_folders(settings: Settings, given: Sequence[Path] | None = None) -> list[Path]:
    """The folders `kb sync` builds from: `given` (`--sources`, `--with-shipped`), else those the served index
    was built from (and `settings.sources_dir` after them, when it is neither among them nor the shipped FAQs'
    folder), else `settings.sources_dir` alone (no index yet, or one built before builds named their folders).
    SourceError naming a folder the served index was built from that is no longer there."""
    if given:
        return [Path(d) for d in given]
    recorded = built_from(settings)
    if recorded is None:
        return [settings.sources_dir]
    for folder in recorded:
        if not folder.is_dir():
            raise SourceError(
                folder,
                "the served index was built from this folder, which is no longer there: give the folders to build "
                "from (`kb sync --sources DIR`, `--with-shipped`), or `kb ingest` without it",
            )
    if not is_shipped(settings.sources_dir) and settings.sources_dir.resolve() not in {d.resolve() for d in recorded}:
        recorded.append(settings.sources_dir)
    return recorded
