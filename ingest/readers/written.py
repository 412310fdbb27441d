"""The written answers' reader: the JSONL file of the answers written on the insights page (`kb.written`).

It is no file of a sources folder but the one `KB_WRITTEN_ANSWERS` names (by default
`$KB_DATA_DIR/written.jsonl`), so no suffix finds it: `kb ingest` reads it after the folders'
sources unless a manifest lists it already (then it is a Q&A file like any other). Its rows are
in the Q&A files' format and name their own sources (`<faq>-written`, or `written`).
"""

from __future__ import annotations

from pathlib import Path

from kb.entries import Source
from kb.written import SOURCE, TITLES

from .base import Contents
from .tables import READER as TABLES

__all__ = ["READER", "Written"]


class Written:
    """The answers written on the insights page."""

    name = "written answers' file"
    suffixes: tuple[str, ...] = ()
    translation = TABLES.translation

    def describe(self, path: Path, name: str = SOURCE) -> Source:
        titles = {lang: texts[0] for lang, texts in TITLES.items()}
        return Source(name, path.name, titles["en"], "", "en", "", "", titles=titles)

    def read(self, folder: Path, source: Source) -> Contents:
        return TABLES.read(folder, source)


READER = Written()
