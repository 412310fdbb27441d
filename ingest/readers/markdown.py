"""The Markdown reader: a FAQ document (`.md`), and its other language's document named by `[source.translation]`.

Without a manifest, `X.md` is a source titled by its first heading (else its file name), in the
language most of its letters are, laid out as its headings or bold list items suggest; an
`X.en.md` (or `X.zh.md`) beside it is its version in that language, not a source of its own.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from kb.entries import Source

from ..document import document_lang, read_text, readable_name
from ..markdown_faq import guess_entries_style, heading_title, parse_source
from .base import Contents, read_document

__all__ = ["READER", "Markdown"]

LANGS = ("zh", "en")
SUFFIX = ".md"


def _language_suffix(path: Path) -> str | None:
    """ "en" for `faq.en.md`, None for `faq.md`."""
    suffix = Path(path.stem).suffix.lstrip(".")
    return suffix if suffix in LANGS else None


def _is_version_of_another(path: Path) -> bool:
    """`faq.en.md` beside `faq.md` is that file's English version, not a source of its own."""
    lang = _language_suffix(path)
    return lang is not None and path.with_name(f"{Path(path.stem).stem}{SUFFIX}").is_file()


def _described(path: Path, name: str, lang: str | None = None) -> Source:
    """A source for a Markdown file that no manifest describes: titled by its first heading,
    else its file name; no framework (none is known)."""
    text = read_text(path)
    lang = lang or document_lang(text)
    title = heading_title(text) or readable_name(Path(path.stem).stem if _language_suffix(path) else path.stem)
    return Source(
        name=name,
        file=path.name,
        title=title,
        framework="",
        lang=lang,
        version="",
        url="",
        entries=guess_entries_style(text),
        titles={lang: title},
    )


class Markdown:
    """FAQ documents in Markdown, one language a file (`ingest/markdown_faq.py` splits them into entries)."""

    name = "Markdown document"
    suffixes = (SUFFIX,)
    translation = ""

    def describe(self, path: Path, name: str) -> Source | None:
        if _is_version_of_another(path):
            return None
        source = _described(path, name)
        for other in LANGS:
            version = path.with_name(f"{path.stem}.{other}{SUFFIX}")
            if other != source.lang and version.is_file():
                translation = _described(version, name, other)
                titles = source.titles | translation.titles
                return replace(source, titles=titles, translation=replace(translation, titles=titles))
        return source

    def read(self, folder: Path, source: Source) -> Contents:
        return read_document(folder, source, parse_source)


READER = Markdown()
