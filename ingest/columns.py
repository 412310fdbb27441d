"""The columns of a Q&A file: their names in English and Chinese, a header row read as them, and
a row's cells read as the columns they are under (each fault collected, one a cell).

A header is matched case-insensitively, with spaces, hyphens and brackets read as `_`
("Question (EN)" is `question_en`). The text columns (question, answer, section, url, ...)
are the row's own language as named, and another language with a language after or
before the name: `question_en`, `en_question`, `英文问题`, `问题（英文）`. FastGPT's `q,a,indexes`
are question, answer and alternates.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from kb.errors import SourceError

from .tables import Formula, Header, Row

__all__ = ["Cells", "Column", "Columns", "LANGS", "NAMES", "PER_LANGUAGE", "lang_of", "read_header", "synonyms"]

LANGS = ("zh", "en")

# Each column's names: the first is the one `kb export` writes and errors use.
NAMES: dict[str, tuple[str, ...]] = {
    "id": ("id", "entry_id", "编号"),
    "source": ("source", "来源"),
    "lang": ("lang", "language", "语言"),
    "question": ("question", "q", "问题", "标准问题", "问"),
    "answer": ("answer", "a", "答案", "回答", "答"),
    "alternates": (
        "alternates",
        "alternate_questions",
        "similar_questions",
        "indexes",
        "index",
        "相似问题",
        "相似问法",
        "相似问",
        "其他问法",
    ),
    "tags": ("tags", "tag", "labels", "标签"),
    "section": ("section", "category", "分类", "章节", "类别"),
    "url": ("url", "link", "链接", "网址"),
    "not_covered": ("not_covered", "未覆盖"),
    "source_title": ("source_title", "来源标题"),
    "framework": ("framework", "框架"),
    "version": ("version", "版本"),
    "scope": ("scope", "适用范围"),
    "source_url": ("source_url", "来源链接"),
    "translated_by": ("translated_by", "译者"),
    "reviewed": ("reviewed", "已审校"),
    "intended_duplicates": ("intended_duplicates", "有意重复"),
    # The tracker threads an answer accepted from a harvested draft answers (`kb.harvest.accepted`): its link is one.
    "harvested": ("harvested", "来自议题"),
}
# The columns a language may follow: one version of an entry's text each.
PER_LANGUAGE = ("question", "answer", "section", "url", "source_title", "source_url", "translated_by", "reviewed")
_TRUE = {"true", "yes", "y", "1", "x", "✓", "是", "对"}
_FALSE = {"false", "no", "n", "0", "否", ""}
_LANG_WORDS = {"zh": ("zh", "cn", "chinese", "中文", "汉语"), "en": ("en", "english", "英文", "英语")}


def _normalized(name: str) -> str:
    return re.sub(r"[\s\-()（）\[\]【】_]+", "_", name.strip().lower()).strip("_")


@dataclass(frozen=True)
class Column:
    """A column's meaning: its name, and its language ("": the row's own)."""

    name: str
    lang: str = ""

    def __str__(self) -> str:
        return f"{self.name}_{self.lang}" if self.lang else self.name


def _known() -> dict[str, Column]:
    known: dict[str, Column] = {}
    for name, words in NAMES.items():
        for word in map(_normalized, words):
            known[word] = Column(name)
            if name not in PER_LANGUAGE:
                continue
            for lang, tags in _LANG_WORDS.items():
                for tag in tags:
                    for spelled in (f"{word}_{tag}", f"{tag}_{word}", f"{tag}{word}", f"{word}{tag}"):
                        if not spelled.isascii() or "_" in spelled:  # "questionen" is no name
                            known.setdefault(spelled, Column(name, lang))
    return known


_KNOWN = _known()
_LANG_VALUES = {word: lang for lang, words in _LANG_WORDS.items() for word in words} | {"zh_cn": "zh", "zh_hans": "zh"}


def lang_of(value: str) -> str | None:
    """A `lang` cell as a language: "zh", "EN", "中文" and "English" are understood; None: it is none of them."""
    return _LANG_VALUES.get(_normalized(value))


def synonyms(name: str) -> str:
    """The names a column may have, for a message: "question, q, 问题, 标准问题, 问"."""
    return ", ".join(NAMES[name])


@dataclass(frozen=True)
class Columns:
    """A header read: the position of each column it has, and those it does not know."""

    at: dict[Column, int]
    unknown: tuple[int, ...]

    def has(self, name: str) -> bool:
        return any(c.name == name for c in self.at)

    def langs(self, name: str) -> tuple[str, ...]:
        """The languages a text column is given in by a language's name (`question_en`: "en")."""
        return tuple(lang for lang in LANGS if Column(name, lang) in self.at)


def read_header(header: Header) -> tuple[Columns, list[SourceError]]:
    """The columns of `header`; a column given twice (`question` and `问题`), or (but in JSONL)
    no question or no answer column, is an error at the header."""
    at: dict[Column, int] = {}
    unknown: list[int] = []
    errors: list[SourceError] = []
    for i, name in enumerate(header.names):
        column = _KNOWN.get(_normalized(name))
        if column is None:
            unknown.append(i)
            continue
        if column in at:
            again = f"the {column} column again, as {header.column(at[column])} is"
            errors.append(header.error(again, column=i))
            continue
        at[column] = i
    columns = Columns(at, tuple(unknown))
    for name in ("question", "answer"):
        if not columns.has(name) and not header.jsonl:  # a JSONL line leaves out what it has not: its row says
            errors.append(header.error(f"no {name} column (one of: {synonyms(name)}; or {name}_zh, {name}_en)"))
    return columns, errors


class Cells:
    """The cells of one row, each read as the column it is under, every fault collected."""

    def __init__(self, row: Row, columns: Columns, errors: list[SourceError]):
        self.row, self.columns, self.errors = row, columns, errors
        self.faulty: set[int | None] = set()  # the cells already reported: one fault each

    def index(self, column: Column) -> int | None:
        return self.columns.at.get(column)

    def error(self, column: Column, message: str) -> None:
        at = self.index(column)
        if at not in self.faulty:
            self.faulty.add(at)
            if at is None and self.row.header.jsonl:  # a field the line leaves out
                message = f"field {str(column)!r}: {message}"
            self.errors.append(self.row.error(message, at))

    def raw(self, column: Column) -> object:
        i = self.index(column)
        return None if i is None else self.row.values[i]

    def text(self, column: Column) -> str:
        value = self.raw(column)
        if value is None or isinstance(value, str):
            return (value or "").strip("\r\n") if column.name == "answer" else (value or "").strip()
        if isinstance(value, Formula):
            self.error(column, f"a formula ({value.text}) where text belongs: paste it as values")
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            return str(value)
        else:
            self.error(column, f"expected text, got {type(value).__name__} {value!r}")
        return ""

    def where(self, name: str, lang: str) -> Column:
        """The column the row's own-language `name` is in: the plain one when the file has it."""
        return (
            Column(name, lang)
            if self.index(Column(name, lang)) is not None and self.index(Column(name)) is None
            else Column(name)
        )

    def texts(self, column: Column) -> list[str]:
        """A cell of several values: its text, or (JSONL) a list of strings."""
        value = self.raw(column)
        if isinstance(value, list):
            if all(isinstance(v, str) for v in value):
                return ["\n".join(" ".join(v.split()) for v in value)]  # one a line: none is split at `|`
            self.error(column, f"expected a list of strings, got {value!r}")
            return []
        return [self.text(column)] if self.text(column) else []

    def flag(self, column: Column) -> bool:
        value = self.raw(column)
        if isinstance(value, bool):
            return value
        text = self.text(column).lower()
        if text in _TRUE or text in _FALSE:
            return text in _TRUE
        self.error(column, f"{text!r} is not yes or no (true/false, 1/0, 是/否)")
        return False

    def known_empty(self) -> bool:
        """Whether every cell under a column of a Q&A file is empty (a row of notes in other columns)."""
        for i in self.columns.at.values():
            value = self.row.values[i]
            if value is not None and not (isinstance(value, str) and not value.strip()):
                return False
        return True

    def own(self, name: str, lang: str) -> str:
        """The row's own-language text of `name`: its plain column, else the one named with its language."""
        plain, named = self.text(Column(name)), self.text(Column(name, lang))
        if plain and named and plain != named:
            self.error(Column(name, lang), f"{name} given twice for {lang}, here and in the {name} column; keep one")
        return plain or named
