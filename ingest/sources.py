"""All the sources of a directory, parsed, paired with their translations and tagged:
the entries an index is built from, and the questions the Q&A files teach beside them."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Sequence

from kb.duplicates import IntendedPair
from kb.entries import Entry, Source, Translation
from kb.errors import SourceError, SourceErrors
from kb.learning import LearnedQuestion
from kb.written import SOURCE as WRITTEN_SOURCE

from .manifest import load_manifest
from .markdown_faq import parse_source
from .table_faq import QAFile, parse_table
from .tables import is_table
from .tags import tag_entry

__all__ = ["Parsed", "parse_sources", "read_sources", "with_translations", "written_source"]


@dataclass(frozen=True)
class Parsed:
    """What the sources hold: the entries, the learned questions of the Q&A files (their
    alternates and not-covered rows), and warnings for the build report."""

    entries: list[Entry]
    learned: list[LearnedQuestion]
    warnings: list[str]
    intended: list[IntendedPair] = field(default_factory=list)  # the pairs the Q&A files' rows mark


def with_translations(
    entries: list[Entry], translated: list[Entry], path: Path, translation_path: Path, version: Source | None = None
) -> list[Entry]:
    """Each entry with the entry at the same position of the translated document, leaving
    out the entries the translation `version` skips (by id).

    The two documents must have as many entries; otherwise the pairing would be wrong for
    every entry after the first difference, so it is an error naming both files and counts.
    A translation that is not the authors' own and has no page of its own (no url) links
    to the original's entry instead.
    """
    skipped = set(version.skipped) if version else set()
    unknown = sorted(skipped - {e.id for e in entries})
    if unknown:
        raise SourceError(translation_path, f"skips {', '.join(unknown)}, which {path} does not have")
    paired = [e for e in entries if e.id not in skipped]
    if len(paired) != len(translated):
        left_out = f" ({len(skipped)} skipped)" if skipped else ""
        raise SourceError(
            translation_path,
            f"{len(translated)} entries, but {path} has {len(paired)}{left_out}: a translation has one entry "
            "for each of its source's, in the same order",
        )
    by = version.translated_by if version else ""
    reviewed = version.reviewed if version else False
    versions = {
        entry.id: Translation(
            lang=other.lang,
            question=other.question,
            answer=other.answer,
            section=other.section,
            url=other.url or (entry.url if by else ""),
            source_url=other.source_url or (entry.source_url if by else ""),
            line=other.line,
            file=other.file,
            translated_by=by,
            reviewed=reviewed,
        )
        for entry, other in zip(paired, translated)
    }
    return [replace(entry, translations=(versions[entry.id],)) if entry.id in versions else entry for entry in entries]


def _entries_of(sources_dir: Path, source: Source) -> QAFile:
    path = sources_dir / source.file
    if is_table(path):
        return parse_table(path, source)  # tagged: a row may give tags, and a source of its own
    entries = [replace(e, source_titles=dict(source.titles)) for e in parse_source(path, source)]
    if source.translation is not None:
        translation_path = sources_dir / source.translation.file
        translated = parse_source(translation_path, source.translation)
        entries = with_translations(entries, translated, path, translation_path, source.translation)
    return QAFile([tag_entry(e, source) for e in entries], [], [])


def written_source(path: Path) -> Source:
    """The source of the answers written on the insights page (`kb.written`): its rows name their own sources."""
    titles = {"zh": "维护者撰写的答案", "en": "Answers written by the maintainers"}
    return Source(WRITTEN_SOURCE, path.name, titles["en"], "", "en", "", "", titles=titles)


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
    listed: list[tuple[Path, Source]] = []
    for directory in dirs:
        try:
            listed += [(directory, source) for source in load_manifest(directory, errors)]
        except SourceError as exc:
            errors.append(exc)
    if written is not None and written.is_file() and written.read_text(encoding="utf-8").strip():
        if written.resolve() not in {(d / s.file).resolve() for d, s in listed}:
            listed.append((written.parent, written_source(written)))
    for directory, source in listed:
        path = directory / source.file
        if source.name in named and named[source.name] != path:
            errors.append(SourceError(path, f"source name {source.name!r} is also that of {named[source.name]}"))
            continue
        named[source.name] = path
        try:
            found = _entries_of(directory, source)
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
