"""`kb insights`: the insights tables in a terminal: what was asked, what the FAQ lacks, what did not help.

`kbcli/cli.py` adds the subcommand with `add_parser(sub)`. The tables are those of the
/insights page and its CSV exports (`kb.insights.report`), read through the same
`kb.insights.book.InsightsBook` as the server's. Building the parser loads no numpy and no
embedder, so `kb --help` stays quick: grouping is imported when it runs.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict
from typing import Any

from kb.entries import ENTRY_STYLES
from kb.insights.book import InsightsBook
from kb.insights.records import LANGS
from kb.insights.report import (
    DEFAULT_SINCE,
    TABLES,
    Report,
    day,
    parse_since,
    table,
    to_csv,
)
from kb.settings import Settings
from server.channels import names

from .terminal import print_rows

__all__ = ["add_parser", "cmd_insights", "print_report", "print_rows", "report_json"]


def add_parser(sub: Any) -> None:
    """Add `insights` to the `kb` command's subparsers."""
    p = sub.add_parser("insights", help="what people asked, what the FAQ could not answer, which answers did not help")
    p.add_argument("--since", default=DEFAULT_SINCE, help=f"how far back: 24h, 7d, 2w ... (default {DEFAULT_SINCE})")
    p.add_argument("--limit", type=int, default=10, help="rows per table (default 10)")
    p.add_argument("--csv", choices=TABLES, help="print this table as CSV instead")
    p.add_argument("--json", action="store_true", help="print every table as JSON: each row an object, for scripts")
    p.add_argument("--drafts", action="store_true", help="print a Markdown FAQ entry draft for each unanswered topic")
    p.add_argument("--layout", choices=ENTRY_STYLES, default="headings", help="the drafts' layout (default headings)")
    p.set_defaults(run=cmd_insights)


def _entry_questions(settings: Settings) -> dict[str, str]:
    from kb.errors import IndexMissing
    from kb.index import read_index

    try:
        # The command speaks English: each entry by its English question where it has one.
        return {e.id: e.localized("en").question for e in read_index(settings.index_dir).entries}
    except IndexMissing:
        return {}  # entries are shown by id


def cmd_insights(settings: Settings, args: argparse.Namespace) -> int:
    from kb.embedding import open_embedder
    from kb.insights.gap_drafts import draft_entry
    from kb.insights.groups import GapFinder

    window = parse_since(args.since)
    with InsightsBook.open(settings, create=False) as book:  # no writer thread: nothing is pruned
        finder = GapFinder(open_embedder(settings.embed_model))
        report = book.report(finder, window, _entry_questions(settings), limit=max(args.limit, 1))
    if args.csv:
        sys.stdout.write(to_csv(table(report, args.csv)))
    elif args.json:
        print(json.dumps(report_json(report), ensure_ascii=False, indent=2))
    elif args.drafts:
        print("\n".join(draft_entry(gap, args.layout) for gap in report.gaps).rstrip() or "No unanswered questions.")
    else:
        print_report(report, args.since)
    return 0


def report_json(report: Report) -> dict[str, Any]:
    """The report for scripts: the window, the totals, and each of TABLES as a list of rows, each row an object
    keyed by the CSV export's column names, every value whole."""
    return {
        "since": day(report.since),
        "until": day(report.until),
        "totals": asdict(report.totals),
        "tables": {
            name: [dict(zip(t.columns, row)) for row in t.rows] for name in TABLES for t in [table(report, name)]
        },
    }


GONE = "(not in the index: removed, reworded or never built here)"


def _named(question: object) -> object:
    """An entry's question as a table shows it: never blank, an entry the index does not hold says so."""
    return question or GONE


def print_report(report: Report, since: str) -> None:
    t = report.totals
    share = f" ({100 * t.answered / t.questions:.0f}%)" if t.questions else ""
    print(f"Insights, last {since} ({day(report.since)} to {day(report.until)}, UTC)")
    print(
        f"{t.questions} questions, {t.answered} answered{share}, {t.questions - t.answered} not; "
        f"votes: {t.helpful} helpful, {t.unhelpful} not helpful"
    )
    gaps = table(report, "gaps")
    print_rows(
        "Questions the FAQ could not answer, by topic",
        ("asked", "topic", "languages", "channels", "other wordings"),
        [(r[1], r[0], r[3], r[4], " | ".join(str(r[7]).split(" | ")[1:])) for r in gaps.rows],
    )
    doubtful = table(report, "doubtful")
    print_rows(
        "Answers that may be wrong",
        ("answered", "again", "no", "close", "entry", "question", "examples"),
        [(r[2], r[3], r[4], r[5], r[0], _named(r[1]), r[6]) for r in doubtful.rows],
    )
    if report.dismissed:
        print(f"\n({len(report.dismissed)} dismissed topics left out; restore them on the /insights page)")
    bad = table(report, "unhelpful")
    print_rows(
        "Answers voted not helpful",
        ("no", "yes", "entry", "question", "reasons", "comments"),
        [(r[2], r[3], r[0], _named(r[1]), r[4], r[5]) for r in bad.rows],
    )
    hits = table(report, "entries")
    print_rows(
        "Entries by hits",
        ("answered", "yes", "no", "entry", "question"),
        [(r[2], r[3], r[4], r[0], _named(r[1])) for r in hits.rows],
    )
    channels = names()
    by_channel, by_lang = report.per_day("channel", channels), report.per_day("lang", LANGS)
    rows = []
    for i, date in enumerate(report.days()):
        total = sum(counts[i] for counts in by_channel.values())
        if total:
            rows.append((date, *(by_channel[k][i] for k in channels), *(by_lang[k][i] for k in LANGS), total))
    print_rows("Questions per day", ("day", *channels, *LANGS, "total"), rows)
