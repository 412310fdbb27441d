"""`kb tune`: fit the query adapter to what the knowledge base knows and put it in the index.

It reads the index's entries and learned questions, the links in the insights database,
and any labelled query files given; fits the adapter (`kb.adapter`, `kb.tuning`); and swaps
in a new build that carries it, as `kb ingest` swaps one in: a running server picks it up
at its next check, and the old adapter serves until then.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

from kb.errors import KBError
from kb.settings import Settings

from .terminal import progress_bar

__all__ = ["add_parser"]


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "tune",
        help="fit the query adapter to the entries, learned questions, links and FILEs, into the index",
    )
    p.add_argument("files", nargs="*", help="labelled JSONL query sets to learn from too (never the one you report)")
    p.add_argument("--no-links", action="store_true", help="leave out the links in the insights database")
    p.add_argument("--output", metavar="PATH", help="also write the adapter to this file (KB_QUERY_ADAPTER=PATH)")
    p.add_argument("--remove", action="store_true", help="swap in the index without an adapter instead")
    p.set_defaults(run=cmd_tune)


def cmd_tune(settings: Settings, args: argparse.Namespace) -> int:
    from kb.evaluate import check_expected, load_queries
    from kb.index import read_adapter, write_adapted
    from kb.insights.book import InsightsBook
    from kb.knowledge import KnowledgeBase
    from kb.tuning import learned_kinds, tune

    if args.remove:
        write_adapted(settings.index_dir, None)
        print(f"the index serves without a query adapter: build {settings.index_dir.resolve().name}")
        return 0
    files = [(path, load_queries(Path(path))) for path in args.files]
    started = time.perf_counter()
    kb = KnowledgeBase.open(settings, refit=True)
    if not args.no_links and InsightsBook.exists(settings):
        with InsightsBook.open(settings, create=False) as book:
            links = book.store.links.all()
        kb = kb.taught(links)
    if not kb.entries:
        raise KBError("nothing to learn from: the index has no entries")
    check_expected([(path, q) for path, queries in files for q in queries], kb.entries)
    files = [(Path(path).name, queries) for path, queries in files]
    previous = read_adapter(settings.index_dir)
    with progress_bar() as progress:
        adapter = tune(kb.searcher, files, previous, lambda done, total: progress("fit", done, total))
    if args.output:
        adapter.save(Path(args.output))
    write_adapted(settings.index_dir, adapter)
    kinds = ", ".join(f"{n} {kind}" for kind, n in sorted(adapter.about["kinds"].items(), key=lambda kv: -kv[1]))
    print(
        f"fitted a query adapter on {adapter.about['questions']} questions ({kinds}) "
        f"in {time.perf_counter() - started:.1f} s -> {settings.index_dir} (build {settings.index_dir.resolve().name})"
    )
    repeats = {
        kind: held - adapter.about["kinds"].get(kind, 0)
        for kind, held in learned_kinds(kb.searcher).items()
        if held > adapter.about["kinds"].get(kind, 0)
    }
    if repeats:
        counts = ", ".join(f"{n} {kind}" for kind, n in repeats.items())
        print(
            f"learned each question once: {counts} of the learned questions kb ingest counted repeat another's "
            "question or an entry's own (case and spaces aside), so the figures above leave them out"
        )
    if args.output:
        print(f"also written to {args.output}")
    return 0
