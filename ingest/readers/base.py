"""What a source reader is: the `Reader` protocol, the `Contents` it reads, and the pairing of a document with its translation.

A reader is one source format (Markdown, Q&A files, the written answers' file): which files it
reads (`suffixes`), the source it makes of a file no manifest describes (`describe`), and what a
file gives the index (`read`). A reader of documents in one language each (Markdown) reads the
`[source.translation]` too, through `read_document`, which pairs the two by position, titles and
tags the entries; a reader whose file holds both languages (a Q&A file) says where it keeps the
other one (`translation`), and the manifest refuses a `[source.translation]` for it.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable, Protocol, runtime_checkable

from kb.duplicates import IntendedPair
from kb.entries import Entry, Source, Translation
from kb.errors import SourceError
from kb.learning import LearnedQuestion

from ..tags import tag_entry

__all__ = ["Contents", "Reader", "read_document", "with_translations"]


@dataclass(frozen=True)
class Contents:
    """What one source file gives the index: its entries (titled and tagged), the questions it teaches
    (alternates and not-covered rows), warnings for the build report, and pairs of entries it marks intended."""

    entries: list[Entry]
    learned: list[LearnedQuestion] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    intended: list[IntendedPair] = field(default_factory=list)


@runtime_checkable
class Reader(Protocol):
    """One source format. Its errors are `SourceError`s naming the file and, where there is one, the line."""

    @property
    def name(self) -> str:
        """What a file of this format is called in messages and docs ("Markdown document", "Q&A file")."""

    @property
    def suffixes(self) -> tuple[str, ...]:
        """The endings of the files it reads, lower case with their dot (".md"); () for a file named by a setting."""

    @property
    def translation(self) -> str:
        """Where a source of this format keeps its other language: "" for a file of its own, named by the
        manifest's `[source.translation]`; else where in the file ("in its own columns (...)")."""

    def describe(self, path: Path, name: str) -> Source | None:
        """The source `name` that a file no manifest describes is (title, language, layout), or None when
        the file is part of another's source (`faq.en.md` beside `faq.md`)."""

    def read(self, folder: Path, source: Source) -> Contents:
        """What the source's file (`folder / source.file`) gives the index."""


def read_document(folder: Path, source: Source, parse: Callable[[Path, Source], list[Entry]]) -> Contents:
    """The entries of a document in one language, `parse`d, and those of its `[source.translation]` paired with
    them by position; each titled in the source's languages and tagged: what a reader of such documents reads."""
    path = folder / source.file
    entries = [replace(e, source_titles=dict(source.titles), scope=source.scope) for e in parse(path, source)]
    if source.translation is not None:
        translation_path = folder / source.translation.file
        translated = parse(translation_path, source.translation)
        entries = with_translations(entries, translated, path, translation_path, source.translation)
    return Contents([tag_entry(e, source) for e in entries])


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
