"""Topic tags: the table in `data/tags.toml` of what an entry can be about, with labels
in Chinese and English and the words that mark it.

`TAGS` (topic id -> Tag, in table order) is loaded on first use and cached.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from .errors import SourceError

__all__ = ["Tag", "TagTable", "TAGS_PATH", "load_tags", "tag_table", "label", "TAGS"]

TAGS_PATH = Path(__file__).parent / "data" / "tags.toml"
_ID = re.compile(r"[a-z0-9][a-z0-9-]*")


@dataclass(frozen=True)
class Tag:
    """One topic: its id, its labels, and the patterns that mark an entry as about it."""

    id: str
    zh: str
    en: str
    patterns: tuple[re.Pattern[str], ...]

    def matches(self, text: str) -> bool:
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


def _strings(path: Path, where: str, key: str, value: Any) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise SourceError(path, f"{where}: {key} must be a list of non-empty strings")
    return value


def _tag(path: Path, number: int, table: Any) -> Tag:
    where = f"[[tag]] #{number}"
    if not isinstance(table, dict):
        raise SourceError(path, f"{where}: expected a table")
    tag_id = table.get("id")
    if not isinstance(tag_id, str) or not _ID.fullmatch(tag_id):
        raise SourceError(path, f"{where}: id {tag_id!r} must be lower-case letters, digits, '-'")
    where = f"tag {tag_id!r}"
    for key in ("zh", "en"):
        if not isinstance(table.get(key), str) or not table[key].strip():
            raise SourceError(path, f"{where}: missing label {key!r}")
    unknown = sorted(set(table) - {"id", "zh", "en", "keywords", "patterns"})
    if unknown:
        raise SourceError(path, f"{where}: unknown field {unknown[0]!r}")
    compiled = [_keyword(w) for w in _strings(path, where, "keywords", table.get("keywords", []))]
    for pattern in _strings(path, where, "patterns", table.get("patterns", [])):
        try:
            compiled.append(re.compile(pattern, re.I | re.ASCII))
        except re.error as exc:
            raise SourceError(path, f"{where}: bad pattern {pattern!r}: {exc}") from None
    return Tag(tag_id, table["zh"].strip(), table["en"].strip(), tuple(compiled))


def load_tags(path: Path = TAGS_PATH) -> TagTable:
    """Read and check a tag table; a SourceError names the file and the tag at fault."""
    try:
        data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise SourceError(path, f"cannot read the tag table: {exc.strerror or exc}") from None
    except tomllib.TOMLDecodeError as exc:
        line = re.search(r"line (\d+)", str(exc))
        number = int(line[1]) if line else None
        raise SourceError(path, f"TOML syntax error: {exc}", number) from None
    tags: dict[str, Tag] = {}
    for number, table in enumerate(data.get("tag", []), 1):
        tag = _tag(path, number, table)
        if tag.id in tags:
            raise SourceError(path, f"tag {tag.id!r} is defined twice")
        tags[tag.id] = tag
    fallback = data.get("fallback", "")
    if fallback not in tags:
        raise SourceError(path, f"fallback {fallback!r} is not one of the tags")
    frameworks = data.get("frameworks", {})
    if not isinstance(frameworks, dict) or not all(isinstance(v, str) for v in frameworks.values()):
        raise SourceError(path, "[frameworks] must map framework ids to display names")
    return TagTable(tags, fallback, {k.lower(): v for k, v in frameworks.items()})


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


def __getattr__(name: str) -> Any:
    if name == "TAGS":
        return tag_table().tags
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
