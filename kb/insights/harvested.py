"""The drafts `kb harvest` made from the tracker, as the insights store keeps them (SQLite or PostgreSQL).

A draft is kept per thread (repository and number) with its state: `new` (waiting on `/insights`),
`accepted` (a written answer, or alternate questions of an entry, now), `dismissed`. Harvesting the
same thread again refreshes a new draft and leaves a decided one alone, so a dismissed thread is
not offered again. New drafts untouched for `KB_HARVEST_EXPIRE_DAYS` are deleted (`store.drafts.expire`).
`InsightsStore` keeps them in `HarvestedDrafts`, its part `store.drafts` (`kb/insights/part.py`).
"""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING, Any, Iterable, Sequence

from .part import StorePart

if TYPE_CHECKING:
    from ..harvest.drafts import Draft, ThreadQuestion

__all__ = ["HarvestedDrafts", "STATES", "KeptDraft"]

STATES = ("new", "accepted", "dismissed")
_COLUMNS = (
    "repo, number, kind, url, question, answer, signals, alternates, asked, entry_id, answer_author, closed_at, "
    "harvested_at, status, decided_at, written_id"
)


class KeptDraft:
    """A draft as the store keeps it: the harvest's `Draft`, and what a maintainer decided."""

    __slots__ = ("draft", "harvested_at", "status", "decided_at", "written_id")

    def __init__(self, draft: Draft, harvested_at: float, status: str, decided_at: float | None, written_id: str):
        self.draft, self.harvested_at, self.status = draft, harvested_at, status
        self.decided_at, self.written_id = decided_at, written_id

    @property
    def key(self) -> str:
        """`owner/name#number`, as the page names a draft."""
        return f"{self.draft.repo}#{self.draft.number}"


def _alternate(asked: ThreadQuestion) -> dict[str, Any]:
    """One of a draft's other threads as its row's `alternates` JSON holds it."""
    return {"question": asked.question, "url": asked.url, "number": asked.number, "closed_at": asked.closed_at}


def _row(draft: Draft, at: float) -> tuple[Any, ...]:
    alternates = [_alternate(a) for a in draft.alternates]
    return (
        draft.repo,
        draft.number,
        draft.kind,
        draft.url,
        draft.question,
        draft.answer,
        json.dumps(draft.signals, ensure_ascii=False),
        json.dumps(alternates, ensure_ascii=False),
        draft.asked,
        draft.entry_id,
        draft.answer_author,
        draft.closed_at,
        at,
    )


def _kept(row: Sequence[Any]) -> KeptDraft:
    from ..harvest.drafts import Draft, ThreadQuestion

    (repo, number, kind, url, question, answer, signals, alternates, _asked, entry_id, author, closed_at,
     harvested_at, status, decided_at, written_id) = row  # fmt: skip
    asked = tuple(
        ThreadQuestion(a["question"], a["url"], int(a["number"]), a.get("closed_at")) for a in json.loads(alternates)
    )
    draft = Draft(
        repo, int(number), url, kind, question, answer, json.loads(signals), closed_at, asked, entry_id, author
    )
    return KeptDraft(draft, harvested_at, status, decided_at, written_id)


class HarvestedDrafts(StorePart):
    """The store's part for harvested drafts (`store.drafts`)."""

    def keep(self, drafts: Iterable[Draft], at: float | None = None) -> int:
        """Keep `drafts`, each in place of its thread's new draft; a thread a maintainer decided is left as it is.
        How many were given."""
        when = time.time() if at is None else at
        rows = [_row(d, when) for d in drafts]
        kept = ("kind", "url", "question", "answer", "signals", "alternates", "asked", "entry_id", "answer_author",
                "closed_at", "harvested_at")  # fmt: skip
        self._write(
            (
                f"INSERT INTO harvested_drafts ({_COLUMNS.rsplit(', status', 1)[0]}) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (repo, number) DO UPDATE SET "
                + ", ".join(f"{c} = excluded.{c}" for c in kept)
                + " WHERE harvested_drafts.status = 'new'",
                rows,
            )
        )
        return len(rows)

    def all(self, status: str = "new", limit: int = 200) -> list[KeptDraft]:
        """The drafts in `status`, the most asked first, then the most recently closed."""
        if status not in STATES:
            raise ValueError(f"unknown draft state {status!r}; expected one of {', '.join(STATES)}")
        rows = self._db.rows(
            f"SELECT {_COLUMNS} FROM harvested_drafts WHERE status = ? "
            "ORDER BY asked DESC, coalesce(closed_at, 0) DESC, repo, number LIMIT ?",
            (status, limit),
        )
        return [_kept(row) for row in rows]

    def get(self, repo: str, number: int) -> KeptDraft | None:
        """The draft of `repo`#`number`, whatever its state; None when there is none."""
        rows = self._db.rows(f"SELECT {_COLUMNS} FROM harvested_drafts WHERE repo = ? AND number = ?", (repo, number))
        return _kept(rows[0]) if rows else None

    def decide(self, repo: str, number: int, status: str, written_id: str = "", at: float | None = None) -> bool:
        """Mark the new draft of `repo`#`number` `accepted` (with the written answer it became) or `dismissed`;
        whether there was a new draft to decide (a second click finds none)."""
        if status not in ("accepted", "dismissed"):
            raise ValueError(f"a draft is decided as accepted or dismissed, not {status!r}")
        when = time.time() if at is None else at
        with self._db.transaction() as db:
            changed = db.execute(
                "UPDATE harvested_drafts SET status = ?, decided_at = ?, written_id = ? "
                "WHERE repo = ? AND number = ? AND status = 'new'",
                (status, when, written_id, repo, number),
            ).rowcount
        return bool(changed)

    def join(self, repo: str, number: int, asked: ThreadQuestion, at: float | None = None) -> bool:
        """Add the thread `asked` to the new draft of `repo`#`number`, as one more thread asking it (in place of an
        earlier reading of the same thread); whether there was a new draft to join."""
        when = time.time() if at is None else at
        with self._db.transaction(exclusive=True) as db:  # read, then write: one joiner at a time
            rows = db.execute(
                "SELECT alternates FROM harvested_drafts WHERE repo = ? AND number = ? AND status = 'new'",
                (repo, number),
            ).fetchall()
            if not rows:
                return False
            alternates = [a for a in json.loads(rows[0][0]) if a["url"] != asked.url]
            alternates.append(_alternate(asked))
            db.execute(
                "UPDATE harvested_drafts SET alternates = ?, asked = ?, harvested_at = ? "
                "WHERE repo = ? AND number = ? AND status = 'new'",
                (json.dumps(alternates, ensure_ascii=False), 1 + len(alternates), when, repo, number),
            )
        return True

    def expire(self, before: float) -> int:
        """Delete the new drafts harvested before `before` (Unix seconds); how many."""
        with self._db.transaction() as db:
            gone = db.execute(
                "DELETE FROM harvested_drafts WHERE status = 'new' AND harvested_at < ?", (before,)
            ).rowcount
        return int(gone or 0)

    def state(self) -> tuple[Any, ...]:
        """A fingerprint of the drafts: it changes when one is harvested, refreshed, decided or expired."""
        rows = self._db.rows("SELECT count(*), max(harvested_at), max(decided_at) FROM harvested_drafts")
        return tuple(rows[0]) if rows else ()

    def counts(self) -> dict[str, int]:
        """How many drafts are in each state."""
        counts = dict(self._db.rows("SELECT status, count(*) FROM harvested_drafts GROUP BY status"))
        return {state: int(counts.get(state, 0)) for state in STATES}
