"""Source readers: one module per source format behind the `Reader` protocol, and `READERS`, the one list of them.

Everything that depends on a file's format asks here: the sources a folder without a manifest
holds (`ingest/manifest.py`), the entries a source gives (`ingest/sources.py`, so `kb ingest`,
`kb sync` and the server's builds), whether a source may name a `[source.translation]`, and what
`kb export` may write (the Q&A files' suffixes). A format is its module, holding a `READER`, and
its line below, as llm registers its built-in plugins (see docs/architecture.md, "Adding a
source format").
"""

from __future__ import annotations

from importlib import import_module
from pathlib import Path

from kb.errors import KBError

from .base import Contents, Reader, read_document, with_translations

__all__ = [
    "READERS",
    "Contents",
    "Reader",
    "read_document",
    "readers",
    "reader_by_suffix",
    "reader_for",
    "with_translations",
]

# A file's suffix is looked up in this order; a file a manifest names whose suffix no reader has is the first's.
READERS: tuple[str, ...] = (
    "ingest.readers.markdown",
    "ingest.readers.tables",
    "ingest.readers.written",
)


def readers() -> tuple[Reader, ...]:
    """The `READER` of each module of `READERS`, in its order."""
    found = []
    for module in READERS:
        reader = getattr(import_module(module), "READER", None)
        if not isinstance(reader, Reader):
            raise KBError(f"{module}: its READER is not a source reader (ingest.readers.Reader), got {reader!r}")
        found.append(reader)
    return tuple(found)


def reader_by_suffix(path: Path | str) -> Reader | None:
    """The reader of files with this one's suffix, or None when no reader has it."""
    suffix = Path(path).suffix.lower()
    return next((r for r in readers() if suffix in r.suffixes), None)


def reader_for(path: Path | str) -> Reader:
    """The reader of a source's file: by its suffix, else the first reader's (Markdown: a manifest may name
    a `notes.txt` written in it)."""
    return reader_by_suffix(path) or readers()[0]
