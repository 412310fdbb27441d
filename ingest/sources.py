"""All the sources of a directory, parsed, paired with their translations and tagged:
the entries an index is built from, and the questions the Q&A files teach beside them."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

from kb.duplicates import IntendedPair
from kb.entries import Entry, Source
from kb.errors import SourceError, SourceErrors
from kb.learning import LearnedQuestion
from kb.written import SOURCE as WRITTEN_SOURCE

from .manifest import load_manifest
from .readers import Reader, reader_for
from .readers.written import READER as WRITTEN

__all__ = ["Parsed", "parse_sources", "read_sources", "written_source"]


@dataclass(frozen=True)
class Parsed:
    """What the sources hold: the entries, the learned questions of the Q&A files (their
    alternates and not-covered rows), and warnings for the build report."""

    entries: list[Entry]
    learned: list[LearnedQuestion]
    warnings: list[str]
    intended: list[IntendedPair] = field(default_factory=list)  # the pairs the Q&A files' rows mark


def written_source(path: Path) -> Source:
    """The source of the answers written on the insights page (`kb.written`): its rows name their own sources."""
    return WRITTEN.describe(path, WRITTEN_SOURCE)


def parse_sources(sources_dir: Path | Sequence[Path]) -> list[Entry]:
    """Every entry of every source listed in `sources_dir` (see `read_sources`)."""
    return read_sources(sources_dir).entries


def read_sources(sources_dir: Path | Sequence[Path], written: Path | None = None) -> Parsed:
    """Every entry of every source listed in `sources_dir` (or in each of several, in
    order; manifest order, then document order), paired with its translation and tagged,
    and the learned questions of the Q&A files; then those of `written`, the file of the
    answers written on the insights page, when it exists and no manifest lists it already.

    Every file that cannot be ingested is reported, not only the first: one SourceError, or
    SourceErrors listing each. Two entries with the same id, or two sources with the same
    name in different directories (or in different files, for the sources a Q&A file's
    rows name), are errors naming both places."""
    dirs = [Path(sources_dir)] if isinstance(sources_dir, (str, Path)) else [Path(d) for d in sources_dir]
    entries: list[Entry] = []
    learned: list[LearnedQuestion] = []
    warnings: list[str] = []
    intended: list[IntendedPair] = []
    errors: list[SourceError] = []
    where: dict[str, str] = {}
    named: dict[str, Path] = {}
    listed: list[tuple[Path, Source, Reader]] = []
    for directory in dirs:
        try:
            listed += [(directory, s, reader_for(s.file)) for s in load_manifest(directory, errors)]
        except SourceError as exc:
            errors.append(exc)
    if written is not None and written.is_file() and written.read_text(encoding="utf-8").strip():
        if written.resolve() not in {(d / s.file).resolve() for d, s, _ in listed}:
            listed.append((written.parent, written_source(written), WRITTEN))
    for directory, source, reader in listed:
        path = directory / source.file
        if source.name in named and named[source.name] != path:
            errors.append(SourceError(path, f"source name {source.name!r} is also that of {named[source.name]}"))
            continue
        named[source.name] = path
        try:
            found = reader.read(directory, source)
        except SourceError as exc:
            errors.append(exc)
            continue
        for entry in found.entries:
            if named.setdefault(entry.source, path) != path:  # a row's source, named by another file
                message = f"source {entry.source!r} (its source column) is that of {named[entry.source]}"
                errors.append(SourceError(path, message, entry.line))
                continue
            if entry.id in where:
                message = f"entry {entry.question!r} has the same id {entry.id} as {where[entry.id]}"
                errors.append(SourceError(path, message, entry.line))
                continue
            where[entry.id] = f"{path}:{entry.line}"
            entries.append(entry)
        learned += found.learned
        warnings += found.warnings
        intended += found.intended
    SourceErrors.raise_any(errors)
    return Parsed(entries, learned, warnings, intended)
