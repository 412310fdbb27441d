"""Whether an index was built from the sources beside it: the hash of what an index is made of.

`kb ingest` writes the hash into the index's meta; `kb serve` compares it with the sources before
it serves (a warning when they differ). Kept apart from `ingest` so that the comparison loads no
parser.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Sequence

from .errors import IndexMissing
from .glossary import GLOSSARY_PATH
from .index import read_meta
from .settings import Settings

__all__ = ["BACKGROUND_PATH", "SourceDirs", "source_dirs", "sources_hash", "index_is_stale"]

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
