"""Ingest: FAQ Markdown documents in, tagged question-and-answer entries out."""

from .manifest import load_manifest
from .markdown_faq import parse_source
from .sources import parse_sources
from .tags import tag_entry

__all__ = ["load_manifest", "parse_source", "parse_sources", "tag_entry"]
