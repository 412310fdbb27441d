"""The Q&A-file reader: a spreadsheet, CSV, TSV or JSONL file, one entry a row, both languages in its own columns.

Without a manifest, a Q&A file is a source titled by its file name; each row's language is its
own. Reading it is `ingest/tables.py` (rows and cells) and `ingest/table_faq.py` (entries).
"""

from __future__ import annotations

from pathlib import Path

from kb.entries import Source

from ..document import document_lang, readable_name
from ..table_faq import parse_table
from ..tables import TABLE_SUFFIXES
from .base import Contents

__all__ = ["READER", "Tables"]


class Tables:
    """Q&A files: `.csv`, `.tsv`, `.xlsx` (every sheet, or the manifest's `sheet`) and `.jsonl`."""

    name = "Q&A file"
    suffixes = TABLE_SUFFIXES
    translation = "in its own columns (question_en, answer_en, or question_zh, answer_zh)"

    def describe(self, path: Path, name: str) -> Source:
        title = readable_name(path.stem)
        lang = document_lang(title)  # the title's language: a row's is its own
        return Source(
            name=name, file=path.name, title=title, framework="", lang=lang, version="", url="", titles={lang: title}
        )

    def read(self, folder: Path, source: Source) -> Contents:
        found = parse_table(folder / source.file, source)  # tagged: a row may give tags, and a source of its own
        return Contents(found.entries, found.learned, found.warnings, found.intended)


READER = Tables()
