"""The votes on answers, as the insights store keeps them (table `votes`): one per voter and entry, with its reason.

A voter is a pseudonym (`InsightsStore.pseudonym`), never a session id or a user name.
"""

from __future__ import annotations

from typing import Iterable

from .part import StorePart
from .records import MAX_TEXT, Comment, EntryVotes, Vote

__all__ = ["Votes"]


class Votes(StorePart):
    """The store's part for votes (`store.votes`): recorded, and the entries voted not helpful read back."""

    def add(self, votes: Iterable[Vote]) -> int:
        """Record votes: one per voter per entry, so a later vote (for whichever question) replaces the earlier.

        The same vote written by two servers at once (the same session on two replicas) stays one row.
        """
        latest = {(v.voter, v.entry_id): v for v in votes}.values()
        rows = [
            (
                v.voted_at,
                v.entry_id,
                v.question[:MAX_TEXT],
                int(v.helpful),
                v.voter,
                v.channel,
                v.reason,
                v.comment and v.comment[:MAX_TEXT],
            )
            for v in latest
        ]
        self._write(
            ("DELETE FROM votes WHERE voter = ? AND entry_id = ?", [(v.voter, v.entry_id) for v in latest]),
            (
                "INSERT INTO votes (voted_at, entry_id, question, helpful, voter, channel, reason, comment) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (voter, entry_id, question) DO UPDATE SET "
                "voted_at = excluded.voted_at, helpful = excluded.helpful, channel = excluded.channel, "
                "reason = excluded.reason, comment = excluded.comment",
                rows,
            ),
        )
        return len(rows)

    def unhelpful(self, since: float, limit: int = 50, comments: int = 20) -> list[EntryVotes]:
        """Entries voted not helpful, most such votes first, with their reasons and latest comments."""
        found = self._db.rows(
            "SELECT entry_id, sum(1 - helpful) AS bad, sum(helpful) FROM votes WHERE voted_at >= ? "
            "GROUP BY entry_id HAVING sum(1 - helpful) > 0 ORDER BY bad DESC, entry_id LIMIT ?",
            (since, limit),
        )
        result = []
        for entry_id, bad, good in found:
            reasons = self._db.rows(
                "SELECT reason, count(*) AS n FROM votes WHERE entry_id = ? AND helpful = 0 AND voted_at >= ? "
                "AND reason IS NOT NULL GROUP BY reason ORDER BY n DESC, reason",
                (entry_id, since),
            )
            notes = self._db.rows(
                "SELECT question, reason, comment, voted_at, channel FROM votes WHERE entry_id = ? AND helpful = 0 "
                "AND voted_at >= ? ORDER BY voted_at DESC LIMIT ?",
                (entry_id, since, comments),
            )
            result.append(
                EntryVotes(entry_id, bad, good, tuple((r, n) for r, n in reasons), tuple(Comment(*n) for n in notes))
            )
        return result
