"""`kb ingest`: parse the FAQ sources, embed them, and write the index, then say what it holds.

    kb ingest [--sources DIR ...] [--with-shipped]

The build is `ingest.pipeline.build_index`; this module prints its report: the sources, the
learned questions, the near-duplicate entries, the warnings, and the machine translations that no
one has reviewed yet.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

from kb.settings import SHIPPED_SOURCES, Settings

from .terminal import counted, progress_bar

if TYPE_CHECKING:
    from ingest.pipeline import BuildReport
    from kb.entries import Entry

__all__ = ["add_parser", "cmd_ingest"]


def add_parser(sub: Any) -> None:
    """Add `ingest` to the `kb` command's subparsers."""
    p = sub.add_parser("ingest", help="parse the FAQ sources, embed them, write the index")
    p.add_argument(
        "--sources",
        metavar="DIR",
        action="append",
        help="a directory of FAQ Markdown or Q&A files (.csv, .tsv, .xlsx, .jsonl); repeat for several "
        "(default: KB_SOURCES_DIR)",
    )
    p.add_argument("--with-shipped", action="store_true", help="index the FAQs shipped with kb as well as --sources")
    p.set_defaults(run=cmd_ingest)


def cmd_ingest(settings: Settings, args: argparse.Namespace) -> int:
    from ingest.pipeline import build_index

    dirs = [Path(d) for d in args.sources] if args.sources else [settings.sources_dir]
    shipped = SHIPPED_SOURCES.resolve() in {d.resolve() for d in dirs}
    if args.with_shipped and not shipped:
        dirs.insert(0, SHIPPED_SOURCES)
    with progress_bar(lines="kb ingest") as progress:
        report = build_index(settings, dirs, progress=progress)
    print(
        f"indexed {counted(report.entries, 'entry', 'entries')} in {counted(report.passages, 'passage')} "
        f"({report.embedded} embedded, "
        f"{report.passages - report.embedded} from cache) in {report.seconds:.1f} s -> {settings.index_dir}"
    )
    count = counted(len(report.sources), "source")
    print(f"the index holds {count}, from {', '.join(str(d) for d in dirs)}:")
    names = max(len(s.name) for s in report.sources)
    for s in report.sources:
        noun = "entry  " if s.entries == 1 else "entries"
        print(f"  {s.name:<{names}}  {s.entries:>4} {noun}  {'+'.join(s.languages):<5}  {s.title}")
    if report.replaced is not None:
        print("it replaces an index of " + ", ".join(f"{s.name} ({s.entries})" for s in report.replaced))
        dropped = [s.name for s in report.replaced if s.name not in {n.name for n in report.sources}]
        if dropped:
            print(f"no longer in the index: {', '.join(dropped)}")
            if not (shipped or args.with_shipped):
                print("(to keep the shipped FAQs beside yours: kb ingest --with-shipped --sources DIR)")
    if report.alternates or report.not_covered:
        print(
            f"learned: {report.alternates} alternate questions, {report.not_covered} questions the FAQ does not cover"
        )
    if report.adapter:
        print(f"query adapter: {report.adapter}")
    _print_duplicates(report)
    for warning in report.warnings:
        print(f"warning: {warning}")
    for line in _unreviewed(dirs):
        print(line)
    return 0


def _print_duplicates(report: BuildReport) -> None:
    """The near-duplicate entries the build found: each pair not marked intended with both
    entries' places, then how many are marked."""
    found = [d for d in report.duplicates if not d.intended]
    if found:
        print(
            f"near-duplicate entries: {len(found)} pair{'s' if len(found) != 1 else ''} so alike that a question "
            "for one may get the other (merge them, or mark a pair in sources.toml as [[intended_duplicates]]):"
        )
    for d in found:
        print(f"  {d.score:.2f}  " + "\n        ".join(_entry_line(report.paired[i]) for i in (d.first, d.second)))
    marked = len(report.duplicates) - len(found)
    if marked:
        print(f"{marked} near-duplicate pair{'s' if marked != 1 else ''} marked as intended in sources.toml")


def _entry_line(entry: Entry) -> str:
    place = entry.file_place
    link = f"  {entry.url}" if entry.url else ""
    return f"{entry.id}  {place}  {entry.question}{link}"


def _unreviewed(dirs: Sequence[Path]) -> list[str]:
    """A line for each machine translation in the manifests of `dirs` that no one has reviewed yet."""
    from ingest.manifest import load_manifest

    lines = []
    for directory in dirs:
        for source in load_manifest(directory, errors=[]):
            version = source.translation
            if version is not None and version.translated_by == "machine" and not version.reviewed:
                lines.append(
                    f"{source.name}  {version.file}  machine translation, not reviewed: "
                    "set reviewed = true in sources.toml once checked"
                )
    return lines
