"""`kb export`: the knowledge base as one Q&A file that `kb ingest` reads back into the same entries.

    kb export FILE [--source NAME] [--learned]

FILE ends in `.xlsx`, `.csv`, `.tsv` or `.jsonl` (`ingest/export.py` writes it). The entries
and learned questions are those of the index `kb ingest` built, with the pairs of entries it marked as meant to be alike; `--learned` adds the active
links of the insights database (alternates, and questions marked not covered). `--source`
exports one source's entries and alternates alone (not-covered questions belong to no source).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from kb.errors import KBError
from kb.settings import Settings

from .terminal import counted

__all__ = ["add_parser", "cmd_export"]


def add_parser(sub: Any) -> None:
    """Add `export` to the `kb` command's subparsers."""
    p = sub.add_parser(
        "export", help="write the knowledge base to one .xlsx, .csv, .tsv or .jsonl file, one row an entry"
    )
    p.add_argument("file", metavar="FILE", help="the file to write; its suffix names the format")
    p.add_argument("--source", metavar="NAME", help="only this source's entries and alternates")
    p.add_argument(
        "--learned",
        action="store_true",
        help="add the links of the insights database: alternates, not-covered questions",
    )
    p.set_defaults(run=cmd_export)


def cmd_export(settings: Settings, args: argparse.Namespace) -> int:
    from ingest.export import export_rows, write_export
    from kb.duplicates import Duplicate
    from kb.index import read_index
    from kb.insights.book import InsightsBook

    index = read_index(settings.index_dir)
    entries = index.entries
    learned = list(index.learned.questions)
    if args.source:
        names = list(dict.fromkeys(e.source for e in entries))
        if args.source not in names:
            raise KBError(f"--source: no source {args.source!r} in the index; it holds {', '.join(names)}")
        entries = [e for e in entries if e.source == args.source]
    links = 0
    if args.learned and InsightsBook.exists(settings):
        with InsightsBook.open(settings, create=False) as book:
            active = book.store.links.all()
        links = len(active)
        learned += [link.learned() for link in active]
    if args.source:
        learned = [q for q in learned if q.entry is not None]
    export = export_rows(entries, learned, [Duplicate.from_dict(d) for d in index.meta.duplicates])
    write_export(Path(args.file), export)
    sources = len({e.source for e in entries})
    print(
        f"wrote {counted(export.entries, 'entry', 'entries')} of {counted(sources, 'source')}, "
        f"{export.alternates} alternate questions and {export.not_covered} questions the FAQ does not cover "
        f"to {args.file}" + (f" ({links} links of the insights database among them)" if args.learned else "")
    )
    return 0
