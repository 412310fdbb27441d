"""All the sources of a directory, parsed, paired with their translations and tagged:
the entries an index is built from."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from kb.entries import Entry, Source, Translation
from kb.errors import SourceError

from .manifest import load_manifest
from .markdown_faq import parse_source
from .tags import tag_entry

__all__ = ["parse_sources", "with_translations"]


def with_translations(entries: list[Entry], translated: list[Entry], path: Path, translation_path: Path) -> list[Entry]:
    """Each entry with the entry at the same position of the translated document.

    The two documents must have as many entries; otherwise the pairing would be wrong for
    every entry after the first difference, so it is an error naming both files and counts.
    """
    if len(entries) != len(translated):
        raise SourceError(
            translation_path,
            f"{len(translated)} entries, but {path} has {len(entries)}: a translation has one entry "
            "for each of its source's, in the same order",
        )
    return [
        replace(entry, translations=(Translation(
            lang=other.lang, question=other.question, answer=other.answer, section=other.section,
            url=other.url, source_url=other.source_url, line=other.line,
        ),))
        for entry, other in zip(entries, translated)
    ]


def _entries_of(sources_dir: Path, source: Source) -> list[Entry]:
    path = sources_dir / source.file
    entries = parse_source(path, source)
    if source.translation is None:
        return entries
    translation_path = sources_dir / source.translation.file
    return with_translations(entries, parse_source(translation_path, source.translation), path, translation_path)


def parse_sources(sources_dir: Path) -> list[Entry]:
    """Every entry of every source listed in `sources_dir` (manifest order, then document
    order), paired with its translation and tagged. Two entries with the same id are an
    error naming both places."""
    sources_dir = Path(sources_dir)
    entries: list[Entry] = []
    where: dict[str, str] = {}
    for source in load_manifest(sources_dir):
        path = sources_dir / source.file
        for entry in _entries_of(sources_dir, source):
            place = f"{path}:{entry.line}"
            if entry.id in where:
                message = f"entry {entry.question!r} has the same id {entry.id} as {where[entry.id]}"
                raise SourceError(path, message, entry.line)
            where[entry.id] = place
            entries.append(tag_entry(entry, source))
    return entries
