"""The questions people asked, as the insights store keeps them (table `questions`), and what is read back from them.

Each question is kept with its channel, language, the entry given as the answer and how sure the
search was; the reads are the report's: the unanswered questions, the entries given most often,
the answers with a low margin or asked again, the questions per day, the latest questions.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Iterable

from ..text import question_key
from .part import StorePart
from .records import MAX_TEXT, DailyCount, EntryHits, Question, QuestionCount

__all__ = ["Questions", "RecentQuestion", "RECENT_ROWS_PER_QUESTION"]

RECENT_ROWS_PER_QUESTION = 5  # rows `recent` reads per question it returns (repeats are counted once)


@dataclass(frozen=True)
class RecentQuestion:
    """A question as it was last asked (`store.questions.recent`)."""

    text: str
    lang: str
    channel: str
    answered: bool
    top_entry: str | None
    asked_at: float  # Unix seconds, the last time
    times: int = 1  # how often, among the recent rows read

    def again(self) -> "RecentQuestion":
        return replace(self, times=self.times + 1)


class Questions(StorePart):
    """The store's part for the questions asked (`store.questions`): recorded, then read for what happened since a time (Unix seconds)."""

    def add(self, questions: Iterable[Question]) -> int:
        rows = [
            (
                q.asked_at,
                q.text[:MAX_TEXT],
                q.lang,
                q.channel,
                q.kind,
                q.top_entry,
                q.top_score,
                int(q.answered),
                q.latency_ms,
                q.chat_workspace,
                q.chat_conversation,
                q.margin,
                q.previous and q.previous[:MAX_TEXT],
            )
            for q in questions
        ]
        self._write(
            (
                "INSERT INTO questions (asked_at, text, lang, channel, kind, top_entry, top_score, answered, "
                "latency_ms, chat_workspace, chat_conversation, margin, previous) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                rows,
            )
        )
        return len(rows)

    def unanswered(self, since: float, limit: int = 2000) -> list[QuestionCount]:
        """Questions the FAQ had no confident answer for, most asked first (each at most `MAX_TEXT` characters)."""
        rows = self._db.rows(
            "SELECT min(substr(trim(text), 1, ?)), min(lang), count(*) AS n, min(asked_at), max(asked_at), "
            "group_concat(DISTINCT channel) FROM questions "
            "WHERE answered = 0 AND asked_at >= ? GROUP BY lower(trim(text)) ORDER BY n DESC, max(asked_at) DESC "
            "LIMIT ?",
            (MAX_TEXT, since, limit),
        )
        return [
            QuestionCount(text, lang, n, first, last, tuple(sorted(channels.split(","))))
            for text, lang, n, first, last, channels in rows
        ]

    def entry_hits(self, since: float, limit: int = 50) -> list[EntryHits]:
        """Entries given as the answer, most often first, with their votes."""
        rows = self._db.rows(
            "SELECT h.top_entry, h.n, coalesce(v.good, 0), coalesce(v.bad, 0) FROM "
            "(SELECT top_entry, count(*) AS n FROM questions WHERE answered = 1 AND top_entry IS NOT NULL "
            " AND asked_at >= ? GROUP BY top_entry) AS h LEFT JOIN "
            "(SELECT entry_id, sum(helpful) AS good, sum(1 - helpful) AS bad FROM votes WHERE voted_at >= ? "
            " GROUP BY entry_id) AS v ON v.entry_id = h.top_entry ORDER BY h.n DESC, h.top_entry LIMIT ?",
            (since, since, limit),
        )
        return [EntryHits(*row) for row in rows]

    def low_margins(self, since: float, below: float) -> list[tuple[str, str]]:
        """(entry, question) for answers whose best entry led the second by less than `below`, newest first."""
        rows: list[tuple[str, str]] = self._db.rows(
            "SELECT top_entry, trim(text) FROM questions WHERE answered = 1 AND top_entry IS NOT NULL "
            "AND margin < ? AND asked_at >= ? ORDER BY asked_at DESC",
            (below, since),
        )
        return rows

    def asked_again(self, since: float, within: float) -> list[tuple[str, str, str, str, str]]:
        """(entry, its question, its language, the next question, its language): an answer followed within
        `within` seconds by another question in the same conversation or search box, newest first."""
        rows: list[tuple[str, str, str, str, str]] = self._db.rows(
            "SELECT min(a.top_entry), min(trim(a.text)), min(a.lang), trim(b.text), b.lang FROM questions AS b "
            "JOIN questions AS a ON a.text = b.previous AND a.channel = b.channel AND a.answered = 1 "
            "AND a.top_entry IS NOT NULL AND a.asked_at BETWEEN b.asked_at - ? AND b.asked_at "
            "WHERE b.previous IS NOT NULL AND b.asked_at >= ? GROUP BY b.id, b.text, b.lang, b.asked_at "
            "ORDER BY b.asked_at DESC",
            (within, since),
        )
        return rows

    def daily(self, since: float) -> list[DailyCount]:
        """Questions per day (UTC) by channel and language."""
        rows = self._db.rows(
            "SELECT date(asked_at, 'unixepoch') AS day, channel, lang, count(*) FROM questions WHERE asked_at >= ? "
            "GROUP BY day, channel, lang ORDER BY day, channel, lang",
            (since,),
        )
        return [DailyCount(*row) for row in rows]

    def recent(self, limit: int = 200, find: str = "") -> list[RecentQuestion]:
        """The last `limit` questions asked, newest first, each text once (case and surrounding spaces aside),
        as asked the last time, with how often it was among the rows read (each at most `MAX_TEXT` characters);
        of those, the ones holding `find` (case aside) when given."""
        rows = self._db.rows(
            "SELECT substr(trim(text), 1, ?), lang, channel, answered, top_entry, asked_at FROM questions "
            "ORDER BY asked_at DESC, id DESC LIMIT ?",
            (MAX_TEXT, limit * RECENT_ROWS_PER_QUESTION),
        )
        found: dict[str, RecentQuestion] = {}
        for text, lang, channel, answered, top_entry, asked_at in rows:
            key = question_key(text)
            if key in found:
                found[key] = found[key].again()
            elif len(found) < limit:
                found[key] = RecentQuestion(text, lang, channel, bool(answered), top_entry, asked_at)
        wanted = find.strip().lower()
        return [q for q in found.values() if wanted in q.text.lower()] if wanted else list(found.values())
