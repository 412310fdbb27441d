"""Ingest: FAQ Markdown documents and Q&A files in, tagged question-and-answer entries out, then the index."""

from .manifest import load_manifest
from .markdown_faq import parse_source
from .pipeline import BuildReport, build_index, index_is_stale
from .sources import parse_sources, read_sources
from .table_faq import parse_table
from .tags import tag_entry

__all__ = [
    "BuildReport",
    "build_index",
    "index_is_stale",
    "load_manifest",
    "parse_source",
    "parse_sources",
    "parse_table",
    "read_sources",
    "tag_entry",
]
