r"""Topic tags: the table in `data/tags.toml` of what an entry can be about, with labels
in Chinese and English and the words that mark it.

`TAGS` (topic id -> Tag, in table order) is loaded on first use and cached.

Patterns such as `\w*PROFIL\w*` start a scan at every character of a word, so on a word of
n characters a backtracking engine takes time in n². A tag reads the text with every run of
printable ASCII characters (and of ASCII spaces) cut to `MAX_RUN` (`bounded`): the patterns
read only ASCII past a literal, so each scan stops within a few runs, and matching takes time
linear in the text. No keyword is that long; Chinese text, which ends a run, is kept whole.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ValidationInfo, field_validator

from .errors import SourceError
from .tomlfile import DataModel, load_toml

if TYPE_CHECKING:
    from .entries import Entry

__all__ = [
    "Tag",
    "TagTable",
    "TAGS_PATH",
    "MAX_RUN",
    "bounded",
    "load_tags",
    "tag_table",
    "label",
    "framework_tag",
    "topic_tags",
    "TAGS",  # noqa: F822 (TAGS: module __getattr__)
]

TAGS_PATH = Path(__file__).parent / "data" / "tags.toml"
_ID = re.compile(r"[a-z0-9][a-z0-9-]*")
MAX_RUN = 100  # characters of a run of printable ASCII (or of ASCII spaces) the patterns read
# Tried only where a run starts (the lookbehinds), so cutting is itself linear.
_LONG_RUN = re.compile(rf"(?<![!-~])([!-~]{{{MAX_RUN}}})[!-~]+|(?<![ \t-\r])([ \t-\r]{{{MAX_RUN}}})[ \t-\r]+")


def bounded(text: str) -> str:
    """`text` with every run of more than MAX_RUN printable ASCII characters, or ASCII spaces, cut to its first MAX_RUN."""
    return _LONG_RUN.sub(lambda m: m.group(1) or m.group(2), text)


@dataclass(frozen=True)
class Tag:
    """One topic: its id, its labels, and the patterns that mark an entry as about it."""

    id: str
    zh: str
    en: str
    patterns: tuple[re.Pattern[str], ...]

    def matches(self, text: str) -> bool:
        """Whether a pattern matches `text`, as `bounded` cuts it (in time linear in its length)."""
        text = bounded(text)
        return any(pattern.search(text) for pattern in self.patterns)

    def label(self, lang: str) -> str:
        return self.zh if lang == "zh" else self.en


@dataclass(frozen=True)
class TagTable:
    """The whole table: topic tags in order, the fallback topic, framework display names."""

    tags: dict[str, Tag]
    fallback: str
    frameworks: dict[str, str]


def _keyword(word: str) -> re.Pattern[str]:
    # An ASCII end of a keyword must not be glued to ASCII letters, digits or `_`;
    # Chinese text around it is fine ("有oom报错").
    before = r"(?<![A-Za-z0-9_])" if re.match(r"[A-Za-z0-9_]", word) else ""
    after = r"(?![A-Za-z0-9_])" if re.search(r"[A-Za-z0-9_]$", word) else ""
    return re.compile(before + re.escape(word).replace(r"\ ", r"\s+") + after, re.I)


def _words(value: list[str], info: ValidationInfo) -> list[str]:
    for number, word in enumerate(value, 1):
        if not word.strip():
            raise ValueError(f"field {info.field_name!r} item {number} is empty")
    return value


class _TagTable(DataModel):
    """A `[[tag]]` table."""

    id: str
    zh: str
    en: str
    keywords: list[str] = []
    patterns: list[str] = []

    _words = field_validator("keywords", "patterns")(_words)

    @field_validator("id")
    @classmethod
    def _id(cls, value: str) -> str:
        if not _ID.fullmatch(value):
            raise ValueError(f"id {value!r} must be lower-case letters, digits, '-'")
        return value

    @field_validator("zh", "en")
    @classmethod
    def _label(cls, value: str, info: ValidationInfo) -> str:
        if not value.strip():
            raise ValueError(f"label {info.field_name!r} is empty")
        return value.strip()

    @field_validator("patterns")
    @classmethod
    def _patterns(cls, value: list[str]) -> list[str]:
        for pattern in value:
            try:
                re.compile(pattern, re.I | re.ASCII)
            except re.error as exc:
                raise ValueError(f"bad pattern {pattern!r}: {exc}") from None
        return value


class _TagFile(DataModel):
    fallback: str = ""
    frameworks: dict[str, str] = {}
    tag: list[_TagTable] = []


def _tag(table: _TagTable) -> Tag:
    compiled = [_keyword(w) for w in table.keywords] + [re.compile(p, re.I | re.ASCII) for p in table.patterns]
    return Tag(table.id, table.zh, table.en, tuple(compiled))


def load_tags(path: Path = TAGS_PATH) -> TagTable:
    """Read and check a tag table; a SourceError names the file and the tag at fault."""
    doc = load_toml(path, _TagFile, "the tag table")
    tags: dict[str, Tag] = {}
    for number, table in enumerate(doc.model.tag):
        if table.id in tags:
            raise SourceError(doc.path, f"tag {table.id!r} is defined twice", doc.line(("tag", number)))
        tags[table.id] = _tag(table)
    if doc.model.fallback not in tags:
        raise doc.error(f"fallback {doc.model.fallback!r} is not one of the tags", (), "fallback")
    return TagTable(tags, doc.model.fallback, {k.lower(): v for k, v in doc.model.frameworks.items()})


@lru_cache(maxsize=1)
def tag_table() -> TagTable:
    """The shipped tag table, read once."""
    return load_tags(TAGS_PATH)


def label(tag_id: str, lang: str) -> str:
    """A tag's label in `lang` ("zh" or "en"); a framework tag is labelled with its own name."""
    table = tag_table()
    if tag_id in table.tags:
        return table.tags[tag_id].label(lang)
    return table.frameworks.get(tag_id, tag_id)


def framework_tag(framework: str, source: str) -> str:
    """The framework as a tag id ("ChatLearn" -> "chatlearn", "My Tool" -> "my-tool"); the source's name without one."""
    return re.sub(r"[^a-z0-9]+", "-", framework.lower()).strip("-") or source.lower()


def topic_tags(entry: Entry, table: TagTable | None = None) -> tuple[str, ...]:
    """The topic tags matching the entry's section, question and answer (in every language
    it has), in table order; the table's fallback tag when none matches."""
    table = table or tag_table()
    text = "\n".join(part for e in entry.versions() for part in (e.section, e.question, e.answer))
    topics = (tag for tag in table.tags.values() if tag.id != table.fallback)
    return tuple(tag.id for tag in topics if tag.matches(text)) or (table.fallback,)


def __getattr__(name: str) -> Any:
    if name == "TAGS":
        return tag_table().tags
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
