"""The Q&A-file parser: the rows of a CSV, TSV, XLSX or JSONL file in, entries out.

A row is one entry: its question and answer (Markdown) in the row's language, and the same
entry in the other language in the `_en` or `_zh` columns (`ingest/columns.py` names them all).
Its language is the `lang` cell; else the one the other language's columns are not; else the
question's. Its id is the `id` cell, else made from its source and question as for Markdown,
so reordering rows keeps every id. A `source` cell puts the row in a source of that name (an
export of several sources is one file), described by the source columns of its first row
that gives them, else by the manifest. A row marked `not_covered` is a question the FAQ does
not answer. Alternates (one a line, or `|` between them; `question <https://…>` says where it
was asked) are learned questions of the entry, as an alternates file's are.

Every bad cell of the file is reported, each naming its file, sheet, row and column.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from kb.duplicates import IntendedPair
from kb.entries import TRANSLATORS, Entry, Source, Translation, entry_id
from kb.errors import SourceError, SourceErrors
from kb.hyperlinks import absolutize_links
from kb.learning import LearnedQuestion
from kb.tags import tag_table
from kb.text import detect_lang

from .columns import LANGS, Cells, Column, Columns, lang_of, read_header
from .tables import Header, Row, read_table
from .tags import framework_tag, topic_tags

__all__ = ["QAFile", "parse_table", "split_alternates", "split_tags"]

_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
_ALTERNATE = re.compile(r"<(https?://[^\s<>]+)>\Z")  # a part's URL, at its end; what is before it is the question
_SOURCE_FIELDS = ("framework", "version")


@dataclass(frozen=True)
class QAFile:
    """What a Q&A file gives the index: entries, learned questions, and warnings for the build report."""

    entries: list[Entry]
    learned: list[LearnedQuestion]
    warnings: list[str]
    intended: list[IntendedPair] = field(default_factory=list)  # its rows' `intended_duplicates`


def split_alternates(value: str) -> list[tuple[str, str]]:
    """An alternates cell as (question, url) pairs: one a line, else `|` between them."""
    parts = value.split("\n") if "\n" in value else value.split("|")
    found = []
    for part in (p.strip() for p in parts):
        linked = _ALTERNATE.search(part, max(part.rfind("<"), 0))
        question, url = (part[: linked.start()].rstrip(), linked[1]) if linked else (part, "")
        if question:
            found.append((question, url))
    return found


def split_tags(value: str) -> list[str]:
    return [t.strip() for t in re.split(r"[,，、;；|\n]", value) if t.strip()]


@dataclass
class _Described:
    """A source as the rows describe it: what its first rows that say give, and where."""

    titles: dict[str, str] = field(default_factory=dict)
    urls: dict[str, str] = field(default_factory=dict)
    fields: dict[str, str] = field(default_factory=dict)
    said: dict[str, int] = field(default_factory=dict)  # "framework" -> the row that gave it


def _question(cells: Cells, lang: str) -> tuple[str, str, bool]:
    """A row's question (its line breaks joined), answer, and whether it is marked not covered; a question
    missing, an answer where none belongs or none where one does, is an error of the cell at fault."""
    question = re.sub(r"(?<!\s)\s*\n\s*", " ", cells.own("question", lang))
    answer = cells.own("answer", lang)
    not_covered = cells.flag(Column("not_covered"))
    if not question:
        cells.error(cells.where("question", lang), "no question")
    elif not_covered and answer:
        cells.error(cells.where("answer", lang), "a question marked not covered has no answer")
    elif not not_covered and not answer.strip():
        cells.error(cells.where("answer", lang), "the answer is empty")
    return question, answer, not_covered


def _lang(cells: Cells) -> str:
    """The row's own language: its `lang` cell, else the one its other-language columns are not, else its question's."""
    given = cells.text(Column("lang"))
    lang = lang_of(given) if given else None
    if lang is not None:
        return lang
    if given:  # reported, and the rest of the row read as if it gave none: each of its faults is named
        cells.error(Column("lang"), f"unknown lang {given!r} (expected zh or en)")
    question = cells.text(Column("question"))
    others = [lang for lang in LANGS if cells.text(Column("question", lang)) or cells.text(Column("answer", lang))]
    if question:
        return next(lang for lang in LANGS if lang != others[0]) if len(others) == 1 else detect_lang(question)
    if others:
        return min(others, key=lambda lang: cells.index(Column("question", lang)) or 0)
    return ""


class _Parser:
    def __init__(self, path: Path, source: Source):
        self.path, self.source = path, source
        self.errors: list[SourceError] = []
        self.described: dict[str, _Described] = {}
        self.ids: dict[str, str] = {}  # each id's row, as a message names it
        self.entries: list[Entry] = []
        self.learned: list[LearnedQuestion] = []
        self.intended: list[IntendedPair] = []
        self.workbook = path.suffix.lower() == ".xlsx"

    def describe(self, cells: Cells, name: str, lang: str, other: str) -> _Described:
        """The row's source, as the first rows that describe it say; a row that says otherwise is an error."""
        described = self.described.setdefault(name, _Described())
        given = {
            f"title:{lang}": cells.own("source_title", lang),
            f"title:{other}": cells.text(Column("source_title", other)),
        }
        given |= {f"url:{lang}": cells.own("source_url", lang), f"url:{other}": cells.text(Column("source_url", other))}
        given |= {key: cells.text(Column(key)) for key in _SOURCE_FIELDS}
        given["scope"] = ", ".join(word for value in cells.texts(Column("scope")) for word in split_tags(value))
        for key, value in given.items():
            if not value:
                continue
            kind, _, where = key.partition(":")
            held = {"title": described.titles, "url": described.urls}.get(kind, described.fields)
            slot = where or kind
            if slot not in held:
                held[slot], described.said[key] = value, cells.row.number
            elif held[slot] != value:
                column = Column(f"source_{kind}" if where else kind, "" if where == lang else where)
                said = f"{kind.replace('url', 'source_url').replace('title', 'source_title')} of source {name!r}"
                cells.error(column, f"the {said} is {held[slot]!r} on row {described.said[key]}: a source has one")
        return described

    def row(self, row: Row, columns: Columns) -> None:
        found: list[SourceError] = []
        cells = Cells(row, columns, found)
        if cells.known_empty():
            return
        lang = _lang(cells)
        if not lang:
            if not found:
                cells.error(Column("question"), "no question")
            self.errors += found
            return
        other = next(o for o in LANGS if o != lang)
        question, answer, not_covered = _question(cells, lang)
        name = cells.text(Column("source")) or self.source.name
        if not _NAME.fullmatch(name):
            cells.error(Column("source"), f"source name {name!r} may hold only letters, digits, '.', '_' and '-'")
        url = cells.own("url", lang)
        if not_covered:
            if not found:
                self.learned.append(LearnedQuestion(question, lang, "maintainer", url, "", None))
            self.errors += found
            return
        translation = self.translation(cells, other)
        described = self.describe(cells, name, lang, other)
        given_id = cells.text(Column("id"))
        if given_id and not _ID.fullmatch(given_id):
            cells.error(Column("id"), f"id {given_id!r} may hold only letters, digits, '.', '_' and '-' (100 at most)")
        by = _translator(cells, cells.where("translated_by", lang), cells.own("translated_by", lang))
        reviewed = cells.flag(Column("reviewed")) or cells.flag(Column("reviewed", lang))
        tags = [t for value in cells.texts(Column("tags")) for t in split_tags(value)]
        alternates = [a for value in cells.texts(Column("alternates")) for a in split_alternates(value)]
        section = cells.own("section", lang)
        intended = self.intended_of(cells)
        if found:
            self.errors += found
            return
        id_ = given_id or entry_id(name, question)
        if id_ in self.ids:
            at = cells.index(Column("id") if given_id else cells.where("question", lang))
            self.errors.append(row.error(f"question {question!r} has the same id {id_} as {self.ids[id_]}", at))
            return
        sheet = row.header.sheet
        self.ids[id_] = f"sheet {sheet!r}, row {row.number}" if sheet else f"row {row.number}"
        place, urls = self.whence(row, name, described, lang)
        place["url"] = url or place["url"]  # its own link, else its row's
        if translation is not None:
            translation = self.placed(translation, row, place["url"], urls.get(translation.lang) or urls.get(lang, ""))
        thread = bool(place["url"]) and bool(cells.raw(Column("harvested")))  # its link is the thread it came from
        entry = Entry(
            id=id_, question=question, answer=absolutize_links(answer, self.source.url), section=section, lang=lang,
            translations=(translation,) if translation else (), translated_by=by, reviewed=reviewed, thread=thread,
            **place,
        )  # fmt: skip
        self.entries.append(replace(entry, tags=self.tags(entry, tags)))
        self.learned += [LearnedQuestion(q, detect_lang(q), "maintainer", link, "", id_) for q, link in alternates]
        where = f"{self.path}:{row.line or row.number}"
        self.intended += [IntendedPair(id_, other_id, why, where) for other_id, why in intended]

    def placed(self, translation: Translation, row: Row, url: str, source_url: str) -> Translation:
        """A row's other-language version where its entry stands: the row's line and file, its own link or the
        entry's, and the link of the source it was read from."""
        return replace(
            translation,
            url=translation.url or url,
            source_url=source_url,
            line=row.line or row.number,
            file=self.source.file,
        )

    def intended_of(self, cells: Cells) -> list[tuple[str, str]]:
        """The row's `intended_duplicates`, one `entry-id: why` a line: the entries it is meant to be alike."""
        marks = []
        for value in cells.texts(Column("intended_duplicates")):
            for mark in filter(None, (m.strip() for m in value.split("\n"))):
                other_id, _, why = (part.strip() for part in mark.partition(":"))
                if not _ID.fullmatch(other_id) or not why:
                    cells.error(Column("intended_duplicates"), f"expected `entry-id: why` a line, got {mark!r}")
                marks.append((other_id, why))
        return marks

    def translation(self, cells: Cells, lang: str) -> Translation | None:
        """The row's version in `lang` (not its own), from the columns named with that language."""
        question = re.sub(r"(?<!\s)\s*\n\s*", " ", cells.text(Column("question", lang)))
        answer = cells.text(Column("answer", lang))
        if not question and not answer.strip():
            return None
        if not question or not answer.strip():
            missing = Column("question" if not question else "answer", lang)
            given = Column("answer" if not question else "question", lang)
            at = missing if cells.index(missing) is not None else given
            cells.error(at, f"{missing} is empty, but {given} is not")
            return None
        by = _translator(cells, Column("translated_by", lang), cells.text(Column("translated_by", lang)))
        return Translation(
            lang, question, absolutize_links(answer, self.source.url), cells.text(Column("section", lang)),
            cells.text(Column("url", lang)), "", translated_by=by, reviewed=cells.flag(Column("reviewed", lang)),
        )  # fmt: skip

    def whence(self, row: Row, name: str, described: _Described, lang: str) -> tuple[dict[str, Any], dict[str, str]]:
        """The fields of the row's entry that its source and place give (titles, framework, version, links, line),
        and its source's pinned page in each language."""
        source = self.source
        mine = name == source.name
        titles = dict(source.titles if mine else {}) | described.titles
        title = titles.get(lang) or next(iter(titles.values()), "") or (source.title if mine else name)
        urls = ({lang: source.url} if mine and source.url else {}) | described.urls
        line = row.line or row.number
        here = source.url  # where the file lives: a row without a url links to its line there (a workbook: to it)
        return {
            "source": name,
            "source_title": title,
            "source_titles": titles or {lang: title},
            "source_version": described.fields.get("version", source.version if mine else ""),
            "source_url": urls.get(lang, ""),
            "framework": described.fields.get("framework", source.framework if mine else ""),
            "scope": (source.scope if mine else ()) or tuple(split_tags(described.fields.get("scope", ""))),
            "url": here if self.workbook or not here else f"{here}#L{line}",
            "line": line,
            "file": source.file,
            "sheet": row.header.sheet,  # a workbook's: then `line` is the row
        }, urls

    def tags(self, entry: Entry, given: list[str]) -> tuple[str, ...]:
        """The framework's tag, the tags given, then the topics found in the text (the catch-all topic only
        when nothing else is given)."""
        fw = framework_tag(replace(self.source, name=entry.source, framework=entry.framework))
        topics = topic_tags(entry)
        if given and topics == (tag_table().fallback,):
            topics = ()
        return tuple(dict.fromkeys((fw, *given, *topics)))


def _translator(cells: Cells, column: Column, value: str) -> str:
    if value and value not in TRANSLATORS:
        cells.error(column, f"unknown translated_by {value!r} (expected one of {', '.join(TRANSLATORS)})")
    return "" if value == "authors" else value


def parse_table(path: Path, source: Source) -> QAFile:
    """The entries and learned questions of one Q&A file; every bad cell is reported in one SourceErrors."""
    path = Path(path)
    table = read_table(path, source.sheet)
    parser = _Parser(path, source)
    parser.errors += table.errors
    warnings = list(table.warnings)
    read: dict[int, Columns | None] = {}  # by id() of each header: a sheet's rows share theirs
    unknown: dict[str, None] = {}

    def columns_of(header: Header) -> Columns | None:
        columns, errors = read_header(header)
        whole = header.jsonl or (columns.has("question") and columns.has("answer"))
        if header.sheet and not source.sheet and not columns.has("question") and not columns.has("answer"):
            warnings.append(f"{path}: sheet {header.sheet!r} has no question or answer column: left out")
            errors, whole = [], False
        parser.errors.extend(errors)
        for i in columns.unknown if whole else ():
            unknown.setdefault(f"sheet {header.sheet!r}, {header.column(i)}" if header.sheet else header.column(i))
        return columns if whole else None

    read |= {id(header): columns_of(header) for header in table.headers}
    for row in table.rows:
        if id(row.header) not in read:  # a JSONL line: its keys are its header
            read[id(row.header)] = columns_of(row.header)
        columns = read[id(row.header)]
        if columns is not None:
            parser.row(row, columns)
    if unknown:
        warnings.append(f"{path}: not a Q&A column, ignored: {'; '.join(unknown)}")
    if not parser.errors and not parser.entries and not parser.learned:
        parser.errors.append(
            SourceError(path, "no entries found: a Q&A file has a header row, then a question and its answer a row")
        )
    SourceErrors.raise_any(parser.errors)
    return QAFile(parser.entries, parser.learned, warnings, parser.intended)
