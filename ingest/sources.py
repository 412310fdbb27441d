"""All the sources of a directory, parsed and tagged: the entries an index is built from."""

from __future__ import annotations

from pathlib import Path

from kb.entries import Entry
from kb.errors import SourceError

from .manifest import load_manifest
from .markdown_faq import parse_source
from .tags import tag_entry

__all__ = ["parse_sources"]


def parse_sources(sources_dir: Path) -> list[Entry]:
    """Every entry of every source listed in `sources_dir` (manifest order, then document
    order), tagged. Two entries with the same id are an error naming both places."""
    sources_dir = Path(sources_dir)
    entries: list[Entry] = []
    where: dict[str, str] = {}
    for source in load_manifest(sources_dir):
        path = sources_dir / source.file
        for entry in parse_source(path, source):
            place = f"{path}:{entry.line}"
            if entry.id in where:
                message = f"entry {entry.question!r} has the same id {entry.id} as {where[entry.id]}"
                raise SourceError(path, message, entry.line)
            where[entry.id] = place
            entries.append(tag_entry(entry, source))
    return entries
