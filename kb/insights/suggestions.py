"""The GitHub bot's suggested answers, as the insights store keeps them (table `suggested_answers`).

In `suggest` mode the bot keeps one answer per issue or Discussion until a maintainer posts or
dismisses it on /insights; a Post or a Dismiss claims it first, so it is acted on once.
"""

from __future__ import annotations

from typing import Any

from .part import StorePart
from .records import MAX_TEXT, SuggestedAnswer

__all__ = ["Suggestions"]


class Suggestions(StorePart):
    """The store's part for the suggested answers, one an issue or Discussion, until posted or dismissed."""

    _SUGGESTED_COLUMNS = (
        "repo, number, kind, title, url, entry_id, confidence, comment, node_id, installation, suggested_at"
    )

    def suggest(self, answer: SuggestedAnswer) -> None:
        """Keep `answer` for its issue, in place of the one suggested for it before (the issue edited)."""
        kept = ("kind", "title", "url", "entry_id", "confidence", "comment", "node_id", "installation", "suggested_at")
        self._write(
            (
                f"INSERT INTO suggested_answers ({self._SUGGESTED_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
                "ON CONFLICT (repo, number) DO UPDATE SET " + ", ".join(f"{c} = excluded.{c}" for c in kept),
                [_suggested_row(answer)],
            )
        )

    def suggestions(self) -> list[SuggestedAnswer]:
        """The suggested answers waiting for a maintainer, newest first."""
        rows = self._db.rows(
            f"SELECT {self._SUGGESTED_COLUMNS} FROM suggested_answers ORDER BY suggested_at DESC, repo, number"
        )
        return [SuggestedAnswer(*row) for row in rows]

    def suggestion(self, repo: str, number: int) -> SuggestedAnswer | None:
        """The answer suggested for `repo`#`number`, or None."""
        rows = self._db.rows(
            f"SELECT {self._SUGGESTED_COLUMNS} FROM suggested_answers WHERE repo = ? AND number = ?", (repo, number)
        )
        return SuggestedAnswer(*rows[0]) if rows else None

    def drop_suggestion(self, repo: str, number: int) -> bool:
        """Forget the answer suggested for `repo`#`number` (posted, dismissed, or the issue closed); whether there was one."""
        with self._db.transaction() as db:
            gone = db.execute("DELETE FROM suggested_answers WHERE repo = ? AND number = ?", (repo, number)).rowcount
        return bool(gone)

    def claim_suggestion(self, repo: str, number: int) -> SuggestedAnswer | None:
        """The answer suggested for `repo`#`number`, taken off the list for the one caller that gets it (None for
        the others, in any process): what a Post or a Dismiss acts on, once. `restore_suggestion` puts it back."""
        found = self.suggestion(repo, number)
        if found is None:
            return None
        with self._db.transaction() as db:
            taken = db.execute(
                "DELETE FROM suggested_answers WHERE repo = ? AND number = ? AND suggested_at = ?",
                (repo, number, found.suggested_at),
            ).rowcount
        return found if taken == 1 else None

    def restore_suggestion(self, answer: SuggestedAnswer) -> None:
        """A claimed answer put back (it could not be posted), unless a newer one was suggested for its issue since."""
        self._write(
            (
                f"INSERT INTO suggested_answers ({self._SUGGESTED_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
                "ON CONFLICT (repo, number) DO NOTHING",
                [_suggested_row(answer)],
            )
        )


def _suggested_row(answer: SuggestedAnswer) -> tuple[Any, ...]:
    """A suggested answer's values, in the order of `_SUGGESTED_COLUMNS`."""
    return (
        answer.repo,
        answer.number,
        answer.kind,
        answer.title[:MAX_TEXT],
        answer.url,
        answer.entry_id,
        answer.confidence,
        answer.comment,
        answer.node_id,
        answer.installation,
        answer.suggested_at,
    )
