"""`kb sync`: bring the sources that name their upstream Git repository to the commit their ref names now.

    kb sync [SOURCE...] [--dry-run] [--sources DIR ...] [--with-shipped]

Each source of the sources folder's manifest that gives `repo`, `path` and `ref` is read at the
commit its ref names; the report lists the entries new, changed, reworded (with the evidence)
and removed, then the index is built and swapped in as `kb ingest` does, and the folder's files
and manifest are moved to the new commits (`ingest/sync.py`). `--dry-run` prints the report alone.
The build holds what the served index was built from (the shipped FAQs, every `--sources` folder of
`kb ingest`), or what `--sources` and `--with-shipped` name, as for `kb ingest`.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from kb.settings import SHIPPED_SOURCES, Settings

from .package import refuse_package
from .terminal import counted, progress_bar

__all__ = ["add_parser", "cmd_sync", "given_folders"]


def add_parser(sub: Any) -> None:
    """Add `sync` to the `kb` command's subparsers."""
    p = sub.add_parser(
        "sync",
        help="read the sources that name a Git repo at the commit their ref names now, report what changed, rebuild",
    )
    p.add_argument("sources", nargs="*", metavar="SOURCE", help="the sources to sync (default: every one with a repo)")
    p.add_argument("--dry-run", action="store_true", help="print what changed upstream; build and write nothing")
    p.add_argument(
        "--sources",
        dest="folders",
        metavar="DIR",
        action="append",
        help="a folder to build from, as `kb ingest --sources`; repeat for several (default: the folders the served "
        "index was built from)",
    )
    p.add_argument(
        "--with-shipped", action="store_true", help="build from the FAQs shipped with kb as well as --sources"
    )
    p.add_argument(
        "--no-wait",
        action="store_true",
        help="when another sync of the data directory is running, skip this one (the server's KB_SYNC_INTERVAL)",
    )
    p.set_defaults(run=cmd_sync)


def cmd_sync(settings: Settings, args: argparse.Namespace) -> int:
    from ingest.sync import report_lines, sync
    from kb.insights.book import InsightsBook
    from kb.staleness import build_folders, is_shipped  # numpy, which `kb --help` does without

    folders = given_folders(settings, args)
    if not args.dry_run:
        chosen = build_folders(settings, folders)
        for folder in [d for d in chosen if not is_shipped(d)] or chosen:  # the shipped FAQs are only read
            refuse_package(
                folder, "kb sync writes the new commits' files and pins into", "copy the folder and give KB_SOURCES_DIR"
            )
    book = InsightsBook.open(settings, create=False) if InsightsBook.exists(settings) else None
    try:
        with progress_bar(lines="kb sync") as progress:
            report = sync(
                settings,
                args.sources,
                dry_run=args.dry_run,
                store=book.store if book else None,
                wait=not args.no_wait,
                progress=None if args.no_wait else progress,
                folders=folders,
            )
    finally:
        if book is not None:
            book.close()
    if report is None:
        print("another sync of this data directory is running: skipped")
        return 0
    for line in report_lines(report):
        print(line)
    for line in report.review:
        print(f"review: {line}")
    for line in report.orphaned:
        print(f"left behind: {line}")
    if report.outcome == "unchanged":
        print("nothing new upstream: the served build is of these commits; nothing built")
    elif report.outcome == "dry run":
        print("dry run: nothing built, nothing written")
    elif report.build is not None:
        print(
            f"indexed {counted(report.build.entries, 'entry', 'entries')} in {report.build.seconds:.1f} s -> {settings.index_dir}"
        )
        for warning in report.build.warnings:
            print(f"warning: {warning}")
    return 0


def given_folders(settings: Settings, args: argparse.Namespace) -> list[Path] | None:
    """The folders `--sources` and `--with-shipped` name, as `kb ingest` reads them; None when neither is given."""
    from kb.staleness import is_shipped  # numpy, which `kb --help` does without

    if not args.folders and not args.with_shipped:
        return None
    folders = [Path(d) for d in args.folders] if args.folders else [settings.sources_dir]
    if args.with_shipped and not any(is_shipped(d) for d in folders):
        folders.insert(0, SHIPPED_SOURCES)
    return folders
