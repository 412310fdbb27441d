"""`kb link` and `kb links`: link questions people asked to the entries that answer them, and keep the links.

    kb link "QUESTION" ENTRY_ID [--lang zh|en]   link a question to the entry that answers it
    kb link --not-covered "QUESTION"             mark a question not covered by the FAQ
    kb links list [--all] [--json]               the active links (--all: the removed ones too), every value whole
    kb links remove ID / kb links restore ID     undo a link / bring it back
    kb links export [--sources DIR]              write the links into the FAQ folder's learned-question files
    kb links import [--sources DIR]              add the learned questions of those files to the database

`kbcli/cli.py` adds both subcommands with `add_parser(sub)`. Links are kept in the insights
database (the SQLite file in KB_DATA_DIR, or KB_DATABASE_URL), read and written through
`kb.insights.book.InsightsBook`, as the server's `Insights` does; exported to the FAQ folder
and imported from it by `kb.insights.link_files`. Building the parser loads no numpy and no
embedder: they are imported when a command runs.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable

from kb.errors import EntryNotFound, IndexMissing, LinkNotFound, QueryError, SourceError
from kb.insights.book import InsightsBook
from kb.insights.link_files import import_learned, plan_export, write_export
from kb.insights.records import LANGS
from kb.learning.questions import load_learned
from kb.settings import Settings
from kb.text import question_key

from .package import refuse_package
from .terminal import print_rows

if TYPE_CHECKING:
    from kb.entries import Entry
    from kb.insights.taught_links import Link

__all__ = [
    "add_parser",
    "cmd_link",
    "cmd_links_list",
    "cmd_links_remove",
    "cmd_links_restore",
    "cmd_links_export",
    "cmd_links_import",
]


def add_parser(sub: Any) -> None:
    """Add `link` and `links` to the `kb` command's subparsers."""
    p = sub.add_parser("link", help="link a question to the FAQ entry that answers it, or mark it not covered")
    p.add_argument("question", metavar="QUESTION", help="the question as people ask it")
    p.add_argument("entry", metavar="ENTRY_ID", nargs="?", help="the id of the entry that answers it")
    p.add_argument("--not-covered", action="store_true", help="the FAQ does not answer the question")
    p.add_argument("--lang", choices=LANGS, help="the question's language (default: detected)")
    p.set_defaults(run=cmd_link)

    p = sub.add_parser("links", help="the links: list, undo, restore; export to the FAQ folder, import from it")
    actions = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    a = actions.add_parser("list", help="the active links, each with its entry")
    a.add_argument("--all", action="store_true", help="the removed links too, marked as such")
    a.add_argument("--json", action="store_true", help="print the links as JSON, for scripts")
    a.set_defaults(run=cmd_links_list)
    a = actions.add_parser("remove", help="undo a link (its row is kept: `kb links restore` brings it back)")
    a.add_argument("id", metavar="ID", type=int, help="the link's id, as `kb links list` shows it")
    a.set_defaults(run=cmd_links_remove)
    a = actions.add_parser("restore", help="bring back a removed link")
    a.add_argument("id", metavar="ID", type=int, help="the link's id, as `kb links list --all` shows it")
    a.set_defaults(run=cmd_links_restore)
    for name, run, what in (
        ("export", cmd_links_export, "write the active links into the FAQ folder's alternates and not-covered files"),
        ("import", cmd_links_import, "add the learned questions of the FAQ folder's files that the database lacks"),
    ):
        a = actions.add_parser(name, help=what)
        a.add_argument("--sources", metavar="DIR", help="the FAQ folder (default: KB_SOURCES_DIR)")
        a.set_defaults(run=run)


# Where links and entries come from


def _entries(settings: Settings) -> dict[str, Entry]:
    """The entries of the index, by id (IndexMissing when there is no index)."""
    from kb.index import read_index

    return {e.id: e for e in read_index(settings.index_dir).entries}


def _entries_if_any(settings: Settings) -> dict[str, Entry]:
    try:
        return _entries(settings)
    except IndexMissing:
        return {}  # entries are shown by id


def _folder(settings: Settings, args: argparse.Namespace) -> Path:
    folder = Path(args.sources) if args.sources else settings.sources_dir
    if not folder.is_dir():
        raise SourceError(folder, "is not a directory")
    return folder


def _target(link: Link, entries: dict[str, Entry]) -> str:
    if link.entry is None:
        return "not covered by the FAQ"
    entry = entries.get(link.entry)
    return f"{link.entry} {entry.question!r}" if entry else f"{link.entry} (not in the index)"


def _day(seconds: float) -> str:
    return time.strftime("%Y-%m-%d", time.gmtime(seconds))


def _others(links: Iterable[Link], question: str, but: int | None = None) -> list[Link]:
    """The links of `question` (case and surrounding spaces aside), but the one with id `but`."""
    key = question_key(question)
    return [link for link in links if link.id != but and question_key(link.question) == key]


# kb link


def cmd_link(settings: Settings, args: argparse.Namespace) -> int:
    from kb.embedding import open_embedder
    from kb.search import searched_text
    from kb.text import detect_lang

    question = args.question.strip()
    if not question:
        raise QueryError("QUESTION", "is empty")
    if args.not_covered == (args.entry is not None):
        raise QueryError("ENTRY_ID", "give the id of the entry that answers the question, or --not-covered (not both)")
    entries: dict[str, Entry] = {}
    if args.entry is not None:
        entries = _entries(settings)
        if args.entry not in entries:
            raise EntryNotFound(args.entry)
    lang = args.lang or detect_lang(question)
    embedder = open_embedder(settings.embed_model)
    vector = embedder.embed_query(searched_text(question) or question)  # what a search of it embeds
    with InsightsBook.open(settings) as book:
        moved = _others(book.store.links.all(), question)
        link = book.store.links.add(question, lang, args.entry, vector, embedder.model)
    print(f"linked #{link.id} [{link.lang}] {link.question!r} → {_target(link, entries)}")
    for old in moved:
        print(f"(it replaces link #{old.id} → {_target(old, entries)}; `kb links restore {old.id}` brings that back)")
    return 0


# kb links ...


def cmd_links_list(settings: Settings, args: argparse.Namespace) -> int:
    """The links as a table, every value whole (wrapped on a terminal); `--json`: as a list of objects."""
    links: list[Link] = []
    if InsightsBook.exists(settings):
        with InsightsBook.open(settings, create=False) as book:
            links = book.store.links.all(include_removed=args.all)
    entries = _entries_if_any(settings)
    if args.json:
        print(json.dumps([_link_json(link, entries) for link in links], ensure_ascii=False, indent=2))
        return 0
    if not links:
        print("No links yet.")
        return 0
    active = sum(link.active for link in links)
    title = f"{active} active link{'s' if active != 1 else ''}"
    if args.all:
        title += f", {len(links) - active} removed"
    columns = ("id", "date", "lang", "question", "entry", "its question")
    rows: list[tuple[object, ...]] = []
    for link in links:
        if link.entry is None:
            target: tuple[str, str] = ("not covered", "")
        else:
            entry = entries.get(link.entry)
            target = ("→ " + link.entry, entry.question if entry else "(not in the index)")
        row: tuple[object, ...] = (link.id, _day(link.made_at), link.lang, link.question, *target)
        if args.all:
            row += (f"removed {_day(link.removed_at)}" if link.removed_at is not None else "",)
        rows.append(row)
    print_rows(title, columns + (("removed",) if args.all else ()), rows)
    return 0


def _link_json(link: Link, entries: dict[str, Entry]) -> dict[str, object]:
    entry = entries.get(link.entry) if link.entry is not None else None
    return {
        "id": link.id,
        "made_at": _moment(link.made_at),
        "lang": link.lang,
        "question": link.question,
        "entry": link.entry,  # null: not covered by the FAQ
        "entry_question": entry.question if entry else None,  # null: not covered, or not in the index
        "origin": link.origin,
        "url": link.url,
        "active": link.active,
        "removed_at": _moment(link.removed_at) if link.removed_at is not None else None,
    }


def _moment(seconds: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(seconds))


def _changed(settings: Settings, link_id: int, change: str) -> tuple[Link | None, Link, list[Link]]:
    """(the link before, after, the links its restoring removed) for `change`: "remove" or "restore"."""
    if not InsightsBook.exists(settings):
        raise LinkNotFound(link_id)
    with InsightsBook.open(settings, create=False) as book:
        before = book.store.links.get(link_id)
        if before is None:
            raise LinkNotFound(link_id)
        active = book.store.links.all()
        # LinkNotFound too when the row went in between (only by hand)
        after = book.undo_link(link_id) if change == "remove" else book.restore_link(link_id)
    displaced = [] if change == "remove" or before.active else _others(active, after.question, but=link_id)
    return before, after, displaced


def cmd_links_remove(settings: Settings, args: argparse.Namespace) -> int:
    before, link, _ = _changed(settings, args.id, "remove")
    target = _target(link, _entries_if_any(settings))
    if before is not None and not before.active:
        print(f"link #{link.id} {link.question!r} → {target} was already removed")
    else:
        print(f"removed link #{link.id} {link.question!r} → {target} (`kb links restore {link.id}` brings it back)")
    return 0


def cmd_links_restore(settings: Settings, args: argparse.Namespace) -> int:
    before, link, displaced = _changed(settings, args.id, "restore")
    entries = _entries_if_any(settings)
    if before is not None and before.active:
        print(f"link #{link.id} {link.question!r} → {_target(link, entries)} is active")
        return 0
    print(f"restored link #{link.id} {link.question!r} → {_target(link, entries)}")
    for old in displaced:
        print(f"(it replaces link #{old.id} → {_target(old, entries)})")
    return 0


def cmd_links_export(settings: Settings, args: argparse.Namespace) -> int:
    folder = _folder(settings, args)
    refuse_package(
        folder,
        "kb links export writes the learned questions into",
        "export into a FAQ folder of your own with --sources DIR (or KB_SOURCES_DIR)",
    )
    links: list[Link] = []
    if InsightsBook.exists(settings):
        with InsightsBook.open(settings, create=False) as book:
            links = book.store.links.all()
    if not links:
        print("No links to export.")
        return 0
    entries = _entries(settings) if any(link.entry is not None for link in links) else {}
    plan = plan_export(links, entries, folder)
    for link in plan.left_out:
        print(
            f"warning: link #{link.id} {link.question!r}: no entry {link.entry!r} in the index; left out",
            file=sys.stderr,
        )
    written = 0
    for done in write_export(plan):
        written += done.added
        print(f"{done.added:>5} written to {done.path}" + (f" ({done.there} already there)" if done.there else ""))
    print(
        f"{written} learned question{'s' if written != 1 else ''} written from {len(links)} active link{'s' if len(links) != 1 else ''}"
    )
    return 0


def cmd_links_import(settings: Settings, args: argparse.Namespace) -> int:
    """Add what the files hold and the database lacks: no link, active or removed, with the same question and
    entry (so a link undone in the database is not brought back, and linking again is never undone)."""
    folder = _folder(settings, args)
    learned, warnings = load_learned(folder, known=_entries(settings))
    for warning in warnings:
        print(f"warning: {warning}", file=sys.stderr)
    with InsightsBook.open(settings) as book:
        missing = import_learned(book, learned, settings.embed_model)
    print(
        f"{len(missing)} of {len(learned)} learned questions in {folder} added as links"
        + (f" ({len(learned) - len(missing)} already there)" if len(learned) > len(missing) else "")
    )
    return 0
