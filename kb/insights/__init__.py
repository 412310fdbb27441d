"""Insights: the questions people asked and their votes, recorded, grouped into gaps, and reported.

- `store`, `migrations`, `records`: the database, its schema and the rows it holds; the
  store talks to a SQLite file (`sqlite_db`) or to PostgreSQL (`postgres_db`, with `sql`
  translating the statements), and is composed of one part (`part`) for each thing it keeps,
  each an attribute of the store: `questions`, `votes`, `gaps` (the dismissed ones), `links`,
  `pending` (a channel's draft answers waiting for a maintainer), `drafts` (those `kb harvest`
  made, `harvested`), `claims` (on threads) and `deliveries` and `closes` (the GitHub webhook's);
- `recorder`, `writer`: the listener to what is asked and voted (`kb.events`), and the
  thread that writes;
- `groups`, `drafts`, `doubts`: unanswered questions grouped by meaning, a draft FAQ entry
  for each group, the answers that may be wrong;
- `report`: the tables the /insights page, its CSV exports and `kb insights` (`kbcli.insights`) show;
- `taught_links`, `teach`: the links that teach the knowledge base (a question tied to the
  entry that answers it, or marked not covered), and making, undoing and restoring them;
- `link_files`: the links written into the FAQ folder's learned-question files, and read back;
- `book`: `InsightsBook`, one store opened, the report, and undoing and restoring links, called
  directly: the `kb` command's `insights`, `link` and `links` go through it;
- `offload`, `service`: `off_loop`, any part's method in a worker thread; `Insights`, the one
  object the /insights page, its CSV exports and the links' admin API go through (the report,
  dismissing and restoring gaps, the links, `Insights.run` for a part's method), with the errors
  a server answers.

Grouping needs numpy and the embedder, and recording needs the search's types: their names
(`GapFinder`, `Gap`, `draft_entry`, `Recorder`, ...) load on first use, so that importing
the package, as `kb --help` does, stays quick.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ..errors import InsightsUnavailable
from ..text import question_key
from .book import InsightsBook
from .doubts import ASKED_AGAIN_WITHIN, LOW_MARGIN, REPHRASED, DoubtfulAnswer, doubtful_answers
from .migrations import SCHEMA_VERSION
from .records import (
    KINDS,
    LANGS,
    MAX_TEXT,
    PENDING_STATES,
    REASONS,
    Channel,
    Comment,
    DailyCount,
    EntryHits,
    EntryVotes,
    PendingAnswer,
    Question,
    QuestionCount,
    Reason,
    Totals,
    Vote,
)
from .report import DEFAULT_SINCE, TABLES, Report, Table, day, gather, parse_since, table, to_csv
from .store import InsightsStore, store_path

if TYPE_CHECKING:
    # `X as X`: exported, as the names in __all__ are.
    from .gap_drafts import LAYOUTS as LAYOUTS
    from .gap_drafts import draft_entries as draft_entries
    from .gap_drafts import draft_entry as draft_entry
    from .groups import CROSS_LANGUAGE as CROSS_LANGUAGE
    from .groups import THRESHOLD as THRESHOLD
    from .groups import Gap as Gap
    from .groups import GapFinder as GapFinder
    from .recorder import LIVE_QUIET as LIVE_QUIET
    from .recorder import Recorder as Recorder
    from .recorder import related_typing as related_typing

_LATER = {
    "Gap": "groups",
    "GapFinder": "groups",
    "THRESHOLD": "groups",
    "CROSS_LANGUAGE": "groups",
    "draft_entry": "gap_drafts",
    "draft_entries": "gap_drafts",
    "LAYOUTS": "gap_drafts",
    "Recorder": "recorder",
    "related_typing": "recorder",
    "LIVE_QUIET": "recorder",
}

__all__ = [
    "InsightsStore",
    "InsightsBook",
    "InsightsUnavailable",
    "store_path",
    "SCHEMA_VERSION",
    "Question",
    "Vote",
    "QuestionCount",
    "Comment",
    "EntryVotes",
    "EntryHits",
    "DailyCount",
    "Totals",
    "PendingAnswer",
    "PENDING_STATES",
    "Channel",
    "Reason",
    "KINDS",
    "REASONS",
    "LANGS",
    "MAX_TEXT",
    "question_key",
    "Report",
    "Table",
    "TABLES",
    "DEFAULT_SINCE",
    "gather",
    "table",
    "to_csv",
    "parse_since",
    "day",
    "DoubtfulAnswer",
    "doubtful_answers",
    "LOW_MARGIN",
    "ASKED_AGAIN_WITHIN",
    "REPHRASED",
    *_LATER,
]


def __getattr__(name: str) -> Any:
    if name in _LATER:
        return getattr(importlib.import_module(f".{_LATER[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
