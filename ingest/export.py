"""The export: entries and what was learned about them written as one Q&A file (`.xlsx`, `.csv`,
`.tsv`, `.jsonl`), one row an entry, that `kb ingest` reads back into the same entries.

A row holds the entry's id and source, its question, answer, section and link in its own
language and in the other (`question_en`, ...), who wrote the other version, its
alternates (one a line, `question <url>` where it was asked), its tags, and what describes
its source (title in each language, framework, version, pinned pages), so that ingesting
the file gives every entry its id, texts, tags and source again. A question the FAQ does
not cover is a row marked `not_covered`, without an answer. A pair of entries the build marked
as meant to be alike (`[[intended_duplicates]]`) is written on the first one's row, in
`intended_duplicates` (`second-id: why`), so that ingesting the file marks it again.

A CSV or TSV cell that a spreadsheet would run as a formula (it starts with `=`, `+`, `-` or
`@`, or with `'`s before one) is written after a `'`, which `ingest/tables.py` takes off again;
a workbook's cells are written as text, never as formulas. An answer's bare URLs, which
ingesting made into autolinks (`<https://…>`), are written bare again where ingesting the
answer gives it back unchanged.
"""

from __future__ import annotations

import csv
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Sequence

from kb.duplicates import Duplicate
from kb.entries import Entry
from kb.errors import KBError
from kb.hyperlinks import absolutize_links
from kb.learning import LearnedQuestion
from kb.text import question_key

from .columns import LANGS
from .readers.tables import READER as TABLES
from .tables import quoted

__all__ = ["Export", "export_rows", "write_export", "EXPORT_SUFFIXES"]

EXPORT_SUFFIXES = TABLES.suffixes  # what the Q&A files' reader reads back
XLSX_CELL = 32767  # the most characters a workbook's cell holds


@dataclass(frozen=True)
class Export:
    """The rows of an export: its columns in order, and each row's values by column."""

    columns: tuple[str, ...]
    rows: list[dict[str, object]]
    entries: int
    alternates: int
    not_covered: int


def _alternate(question: LearnedQuestion) -> str:
    text = " ".join(question.question.split())
    return f"{text} <{question.url}>" if question.url else text


_AUTOLINK = re.compile(r"<(https?://[^\s<>]+)>")


def _bare(answer: str) -> str:
    """`answer` with its autolinks as the bare URLs ingesting made them from, if ingesting that gives `answer` back."""
    bare = _AUTOLINK.sub(r"\1", answer)
    return bare if bare != answer and absolutize_links(bare, "") == answer else answer


def _row(entry: Entry, alternates: list[LearnedQuestion], intended: list[str]) -> dict[str, object]:
    lang = entry.lang
    row: dict[str, object] = {
        "id": entry.id,
        "source": entry.source,
        "lang": lang,
        "question": entry.question,
        "answer": _bare(entry.answer),
        "section": entry.section,
        "url": entry.url,
        "alternates": [_alternate(q) for q in alternates],
        "tags": entry.tags,
        "intended_duplicates": intended,
        "translated_by": entry.translated_by,
        "reviewed": entry.reviewed if entry.translated_by == "machine" else None,
        "source_title": entry.source_titles.get(lang) or entry.source_title,
        "framework": entry.framework,
        "version": entry.source_version,
        "source_url": entry.source_url,
        "scope": entry.scope,
    }
    for other in entry.translations:
        at = other.lang
        row |= {
            f"question_{at}": other.question,
            f"answer_{at}": _bare(other.answer),
            f"section_{at}": other.section,
            f"url_{at}": other.url,
            f"translated_by_{at}": other.translated_by or "authors",
            f"reviewed_{at}": other.reviewed if other.translated_by == "machine" else None,
            f"source_title_{at}": entry.source_titles.get(at, ""),
            f"source_url_{at}": other.source_url,
        }
    return row


_OWN = ("id", "source", "lang", "question", "answer")
_AFTER = ("alternates", "tags", "intended_duplicates", "section", "url", "translated_by", "reviewed")
_SOURCE = ("source_title", "framework", "version", "source_url")


def export_rows(
    entries: Sequence[Entry], learned: Iterable[LearnedQuestion] = (), duplicates: Iterable[Duplicate] = ()
) -> Export:
    """The rows of `entries` with their alternates among `learned` and the pairs among `duplicates` marked
    intended, then a row for each of `learned` the FAQ does not cover; a question already there (case and
    surrounding spaces aside) only again with a link it does not have yet."""
    alternates: dict[str, list[LearnedQuestion]] = {e.id: [] for e in entries}
    intended: dict[str, list[str]] = {e.id: [] for e in entries}
    for pair in duplicates:
        if pair.intended and pair.first in intended and pair.second in intended:
            intended[pair.first].append(f"{pair.second}: {' '.join(pair.intended.split())}")
    not_covered: list[LearnedQuestion] = []
    seen: dict[tuple[str, str | None], set[str]] = {}  # each question's links
    for question in learned:
        key = (question_key(question.question), question.entry)
        links = seen.get(key)
        if (question.entry is not None and question.entry not in alternates) or (
            links is not None and (not question.url or question.url in links)
        ):
            continue  # not among the entries, or already there (asked elsewhere too: with each place's link)
        seen.setdefault(key, set()).add(question.url)
        (not_covered if question.entry is None else alternates[question.entry]).append(question)
    rows = [_row(e, alternates[e.id], intended[e.id]) for e in entries]
    rows += [{"lang": q.lang, "question": q.question, "url": q.url, "not_covered": True} for q in not_covered]
    others = [lang for lang in LANGS if any(f"question_{lang}" in row for row in rows)]
    names = [*_OWN, *(f"{n}_{lang}" for lang in others for n in ("question", "answer")), *_AFTER]
    names += [f"{n}_{lang}" for lang in others for n in ("section", "url", "translated_by", "reviewed")]
    names += [*_SOURCE[:1], *(f"source_title_{lang}" for lang in others), *_SOURCE[1:]]
    names += [f"source_url_{lang}" for lang in others] + ["scope"] + (["not_covered"] if not_covered else [])
    used = tuple(n for n in names if any(row.get(n) not in (None, "", [], (), False) for row in rows))
    return Export(used, rows, len(entries), sum(map(len, alternates.values())), len(not_covered))


def _text(value: object) -> str:
    """A value as a spreadsheet's cell holds it: lists one item a line, yes or no, or text."""
    if isinstance(value, tuple):  # tags
        return ", ".join(value)
    if isinstance(value, list):  # alternates
        # a line break even after one: a cell with one is split at line breaks only, never at `|`
        return "\n".join(value) + ("\n" if len(value) == 1 and "|" in value[0] else "")
    if isinstance(value, bool):
        return "yes" if value else "no"
    return "" if value is None else str(value)


def _write_delimited(path: Path, export: Export, delimiter: str) -> None:
    with open(path, "w", encoding="utf-8-sig", newline="") as f:  # the BOM: a spreadsheet reads UTF-8
        writer = csv.writer(f, delimiter=delimiter, lineterminator="\r\n")
        writer.writerow(export.columns)
        for row in export.rows:
            writer.writerow([quoted(_text(row.get(name))) for name in export.columns])


def _write_jsonl(path: Path, export: Export) -> None:
    with open(path, "w", encoding="utf-8") as f:
        for row in export.rows:
            kept = {
                n: list(v) if isinstance(v, tuple) else v
                for n in export.columns
                if (v := row.get(n)) not in (None, "", [], ())
            }
            f.write(json.dumps(kept, ensure_ascii=False) + "\n")


def _write_workbook(path: Path, export: Export) -> None:
    from openpyxl import Workbook
    from openpyxl.cell import WriteOnlyCell
    from openpyxl.styles import Font
    from openpyxl.utils.exceptions import IllegalCharacterError

    book = Workbook(write_only=True)
    sheet = book.create_sheet("FAQ")
    sheet.freeze_panes = "A2"
    header = []
    for name in export.columns:
        cell = WriteOnlyCell(sheet, value=name)
        cell.font = Font(bold=True)
        header.append(cell)
    sheet.append(header)
    for row in export.rows:
        cells = []
        for name in export.columns:
            text = _text(row.get(name))
            if len(text) > XLSX_CELL:
                raise KBError(
                    f"entry {row.get('id')}: its {name} has {len(text)} characters; a workbook's cell holds {XLSX_CELL}: export to .jsonl or .csv"
                )
            try:
                cell = WriteOnlyCell(sheet, value=text or None)
            except IllegalCharacterError:
                raise KBError(
                    f"entry {row.get('id')}: its {name} holds a control character a workbook cannot: export to .jsonl or .csv"
                ) from None
            if text.startswith("="):
                cell.data_type = "s"  # text, not a formula
            cells.append(cell)
        sheet.append(cells)
    book.save(path)


def write_export(path: Path, export: Export) -> None:
    """Write `export` to `path` in the format its suffix names, whole or not at all (written beside it, then renamed)."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in EXPORT_SUFFIXES:
        raise KBError(
            f"{path}: cannot export to {suffix or 'a file without a suffix'}; name a {', '.join(EXPORT_SUFFIXES)} file"
        )
    if not path.parent.is_dir():
        raise KBError(f"{path}: the folder {path.parent} does not exist")
    partial = path.with_name(f".{path.name}.partial")
    try:
        if suffix == ".xlsx":
            _write_workbook(partial, export)
        elif suffix == ".jsonl":
            _write_jsonl(partial, export)
        else:
            _write_delimited(partial, export, "\t" if suffix == ".tsv" else ",")
        os.replace(partial, path)
    finally:
        partial.unlink(missing_ok=True)
