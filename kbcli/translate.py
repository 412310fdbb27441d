"""`kb translate`: draft a source's version in the other language with the LLM, and describe it in sources.toml.

    kb translate SOURCE --to en|zh [--sources DIR] [--force]

The draft is `ingest.translate.translate`'s; entries that fail a check are left out and listed.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from kb.settings import Settings

from .package import refuse_package
from .terminal import counted, progress_bar

__all__ = ["add_parser", "cmd_translate"]


def add_parser(sub: Any) -> None:
    """Add `translate` to the `kb` command's subparsers."""
    p = sub.add_parser("translate", help="draft a source's version in the other language with the LLM (KB_LLM_*)")
    p.add_argument("source", help="a source's name in the folder, or the path of its Markdown file")
    p.add_argument("--to", required=True, choices=("en", "zh"), help="the language of the draft")
    p.add_argument("--sources", metavar="DIR", help="the folder of FAQ Markdown (default: KB_SOURCES_DIR)")
    p.add_argument("--force", action="store_true", help="replace a translation written by people")
    p.set_defaults(run=cmd_translate)


def cmd_translate(settings: Settings, args: argparse.Namespace) -> int:
    """Draft the other language's version of a source with the LLM; entries that fail a check are left out."""
    from ingest.translate import translate

    folder = Path(args.sources) if args.sources else None
    named = Path(args.source)
    refuse_package(
        named.parent if named.is_file() else folder or settings.sources_dir,
        "kb translate writes the draft and sources.toml into",
        "copy the folder and give --sources DIR (or KB_SOURCES_DIR)",
    )
    with progress_bar() as progress:
        report = translate(settings, args.source, args.to, folder, force=args.force, progress=progress)
    if report.frame.startswith("kept"):
        print(f"{report.draft.name}: the title and headings before the first question were {report.frame}")
    for failure in report.failures:
        print(failure)
    left_out = f"; {len(report.failures)} left out, listed in skipped" if report.failures else ""
    of = counted(report.entries, "entry", "entries")
    print(f"wrote {report.draft}: {report.translated} of {of} translated{left_out}")
    described = "written, describing every source of the folder" if report.new_manifest else "updated"
    print(
        f'{report.manifest} {described}: [source.translation] of {report.source} says translated_by = "machine", '
        "reviewed = false (set reviewed = true once a maintainer has checked the draft)"
    )
    return 0
