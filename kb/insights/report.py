"""The insights report: the tables the /insights page, `kb insights` and the CSV exports show.

`gather()` reads a time window from the store, groups the unanswered questions (leaving
out the gaps a maintainer dismissed, and the questions linked to an entry since) and finds the answers that may be wrong;
`table()` turns one part of a report into plain rows, which `to_csv()` writes and the
command prints, so all three show the same numbers. Days are UTC dates (`day`), as the
store counts them.
"""

from __future__ import annotations

import csv
import io
import re
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Literal, Mapping, Sequence

from ..errors import QueryError, shown
from ..text import question_key
from .doubts import DoubtfulAnswer, doubtful_answers
from .records import Comment, DailyCount, EntryHits, EntryVotes, Totals
from .store import InsightsStore

if TYPE_CHECKING:  # grouping needs numpy and the embedder; the report's tables and `kb --help` do not
    from .groups import Gap, GapFinder

__all__ = ["Report", "Table", "TABLES", "gather", "table", "to_csv", "parse_since", "day", "DEFAULT_SINCE"]

TABLES = ("gaps", "doubtful", "unhelpful", "entries", "daily")
DEFAULT_SINCE = "30d"
_UNITS = {"h": 3600, "d": 86400, "w": 7 * 86400}
_SINCE = re.compile(r"^\s*(\d{1,5})\s*([hdw])\s*$", re.IGNORECASE)


@dataclass(frozen=True)
class Report:
    since: float  # Unix seconds
    until: float
    totals: Totals
    gaps: list[Gap]
    dismissed: list[Gap]  # gaps a maintainer dismissed, still asked in the window
    doubtful: list[DoubtfulAnswer]
    unhelpful: list[EntryVotes]
    entries: list[EntryHits]
    daily: list[DailyCount]
    entry_questions: Mapping[str, str]  # entry id -> its question, for the entries the index still has

    def question_of(self, entry_id: str) -> str:
        return self.entry_questions.get(entry_id, "")

    def days(self) -> list[str]:
        """Every day of the window, first to last."""
        return [day(n * 86400) for n in range(int(self.since // 86400), int(self.until // 86400) + 1)]

    def per_day(self, by: Literal["channel", "lang"], keys: Sequence[str]) -> dict[str, list[int]]:
        """Questions on each of `days()` by channel or by language: `keys` first (zeros if none), then any other."""
        index = {d: i for i, d in enumerate(self.days())}
        counts = {key: [0] * len(index) for key in keys}
        for row in self.daily:
            if row.day in index:
                counts.setdefault(getattr(row, by), [0] * len(index))[index[row.day]] += row.count
        return counts


def day(seconds: float) -> str:
    """The UTC date of a Unix time, YYYY-MM-DD."""
    return time.strftime("%Y-%m-%d", time.gmtime(seconds))


@dataclass(frozen=True)
class Table:
    name: str
    columns: tuple[str, ...]
    rows: list[tuple[object, ...]]


def parse_since(text: str) -> float:
    """A window like `7d`, `24h` or `2w`, in seconds."""
    match = _SINCE.match(text or "")
    if not match or int(match[1]) == 0:
        raise QueryError("since", f"{shown(text)} is not a time window; use a number and h, d or w, like 24h, 7d or 2w")
    return int(match[1]) * _UNITS[match[2].lower()]


def gather(
    store: InsightsStore,
    finder: GapFinder,
    window: float,
    entry_questions: Mapping[str, str],
    now: float | None = None,
    limit: int = 50,
) -> Report:
    """What was asked and voted in the last `window` seconds (grouping embeds the unanswered questions)."""
    until = time.time() if now is None else now
    since = until - window
    hidden = store.gaps.dismissed()
    # A question linked to an entry since (a written answer saved for it, or "Answered by…") is no gap any more;
    # one marked not covered still is.
    linked = store.links.linked_to_entries()
    groups = finder.group([q for q in store.questions.unanswered(since) if question_key(q.text) not in linked])
    dismissed = [g for g in groups if any(question_key(q.text) in hidden for q in g.questions)]
    return Report(
        since=since,
        until=until,
        totals=store.totals(since),
        gaps=[g for g in groups if g not in dismissed][:limit],
        dismissed=dismissed[:limit],
        doubtful=doubtful_answers(store, finder, since, limit),
        unhelpful=store.votes.unhelpful(since, limit),
        entries=store.questions.entry_hits(since, limit),
        daily=store.questions.daily(since),
        entry_questions=entry_questions,
    )


def _comments(comments: Sequence[Comment]) -> str:
    """A line for each vote that says something (its question, reason or comment); a bare
    vote, as from a Slack button, adds no empty line."""
    lines = (" / ".join(part for part in (c.question, c.reason or "", c.comment or "") if part) for c in comments)
    return "\n".join(line for line in lines if line)


def table(report: Report, name: str) -> Table:
    """One of `TABLES` as plain rows."""
    rows = _ROWS.get(name)
    if rows is None:
        raise QueryError("table", f"no table {shown(name)}; expected one of {', '.join(TABLES)}")
    columns, make = rows
    return Table(name, columns, make(report))


def _gaps(report: Report) -> list[tuple[object, ...]]:
    return [
        (
            g.label,
            g.count,
            len(g.questions),
            " ".join(g.langs),
            " ".join(g.channels),
            day(g.first_asked),
            day(g.last_asked),
            " | ".join(g.examples),
        )
        for g in report.gaps
    ]


def _doubtful(report: Report) -> list[tuple[object, ...]]:
    return [
        (
            d.entry_id,
            report.question_of(d.entry_id),
            d.answered,
            d.asked_again,
            d.unhelpful,
            d.low_margin,
            " | ".join(d.examples),
        )
        for d in report.doubtful
    ]


def _unhelpful(report: Report) -> list[tuple[object, ...]]:
    return [
        (
            v.entry_id,
            report.question_of(v.entry_id),
            v.unhelpful,
            v.helpful,
            "; ".join(f"{reason}: {n}" for reason, n in v.reasons),
            _comments(v.comments),
        )
        for v in report.unhelpful
    ]


def _entries(report: Report) -> list[tuple[object, ...]]:
    return [(e.entry_id, report.question_of(e.entry_id), e.hits, e.helpful, e.unhelpful) for e in report.entries]


def _daily(report: Report) -> list[tuple[object, ...]]:
    return [(d.day, d.channel, d.lang, d.count) for d in report.daily]


# Each table's columns (the CSV export's header) and its rows, by name.
_ROWS: dict[str, tuple[tuple[str, ...], Callable[[Report], list[tuple[object, ...]]]]] = {
    "gaps": (
        ("topic", "questions", "wordings", "languages", "channels", "first_asked", "last_asked", "examples"),
        _gaps,
    ),
    "doubtful": (
        ("entry_id", "entry_question", "answered", "asked_again", "not_helpful", "low_margin", "examples"),
        _doubtful,
    ),
    "unhelpful": (("entry_id", "entry_question", "not_helpful", "helpful", "reasons", "comments"), _unhelpful),
    "entries": (("entry_id", "entry_question", "answered", "helpful", "not_helpful"), _entries),
    "daily": (("day", "channel", "lang", "questions"), _daily),
}


def _cell(value: object) -> object:
    # A cell starting with = + - @ is a formula to a spreadsheet; questions are typed by anyone.
    if isinstance(value, str) and value[:1] in ("=", "+", "-", "@", "\t", "\r"):
        return "'" + value
    return value


def to_csv(data: Table) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(data.columns)
    writer.writerows([tuple(_cell(v) for v in row) for row in data.rows])
    return out.getvalue()
