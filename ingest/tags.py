"""Tagging: each entry gets its framework's tag and the topic tags whose words it contains."""

from __future__ import annotations

from dataclasses import replace

from kb.entries import Entry, Source
from kb.tags import framework_tag as _framework_tag
from kb.tags import topic_tags

__all__ = ["tag_entry", "framework_tag", "topic_tags"]


def framework_tag(source: Source) -> str:
    """The framework as a tag id: "ChatLearn" -> "chatlearn", "My Tool" -> "my-tool"."""
    return _framework_tag(source.framework, source.name)


def tag_entry(entry: Entry, source: Source) -> Entry:
    """The entry with tags = (framework tag, topic tags...)."""
    tags = dict.fromkeys((framework_tag(source), *topic_tags(entry)))
    return replace(entry, tags=tuple(tags))
