"""Tagging: each entry gets its framework's tag and the topic tags whose words it contains."""

from __future__ import annotations

import re
from dataclasses import replace

from kb.entries import Entry, Source
from kb.tags import TagTable, tag_table

__all__ = ["tag_entry", "framework_tag", "topic_tags"]


def framework_tag(source: Source) -> str:
    """The framework as a tag id: "ChatLearn" -> "chatlearn", "My Tool" -> "my-tool"."""
    return re.sub(r"[^a-z0-9]+", "-", source.framework.lower()).strip("-") or source.name.lower()


def topic_tags(entry: Entry, table: TagTable | None = None) -> tuple[str, ...]:
    """The topic tags matching the entry's section, question and answer (in every language
    it has), in table order; the table's fallback tag when none matches."""
    table = table or tag_table()
    text = "\n".join(part for e in entry.versions() for part in (e.section, e.question, e.answer))
    topics = (tag for tag in table.tags.values() if tag.id != table.fallback)
    return tuple(tag.id for tag in topics if tag.matches(text)) or (table.fallback,)


def tag_entry(entry: Entry, source: Source) -> Entry:
    """The entry with tags = (framework tag, topic tags...)."""
    tags = dict.fromkeys((framework_tag(source), *topic_tags(entry)))
    return replace(entry, tags=tuple(tags))
