"""The answers waiting for a maintainer, as the insights store keeps them (table `pending_answers`).

A channel that drafts answers for a maintainer to post or dismiss on /insights keeps one a thread,
keyed by (channel, thread): the question, the draft answer, the entry and confidence it answers with,
its state and times, and the channel's own ids in `platform` (JSON the library stores and hands back,
never reads). Drafting again for a thread replaces its answer. A Post or a Dismiss first claims the
answer (`waiting` to `claimed`, in one statement that only one caller in any process wins), then
settles it (the row deleted) or releases it back to the list when it could not be posted. A claim
older than `CLAIM_LEASE` counts as waiting again (the process holding it died before it settled).
"""

from __future__ import annotations

import json
import time
from dataclasses import replace
from typing import Any

from .part import StorePart
from .records import MAX_TEXT, PendingAnswer

__all__ = ["PendingAnswers", "CLAIM_LEASE"]

# Seconds a claim keeps an answer off the list: far longer than a Post may take (the channel bounds its calls).
CLAIM_LEASE = 120.0

_COLUMNS = "channel, thread, question, answer, entry_id, confidence, url, platform, drafted_at, state, claimed_at"
_KEPT = ("question", "answer", "entry_id", "confidence", "url", "platform", "drafted_at", "state", "claimed_at")
_INSERT = f"INSERT INTO pending_answers ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
_MINE = "channel = ? AND thread = ? AND drafted_at = ? AND state = 'claimed' AND claimed_at = ?"  # this claim
_OPEN = "(state = 'waiting' OR claimed_at < ?)"  # on the list: waiting, or claimed by a process long gone


class PendingAnswers(StorePart):
    """The store's part for the answers waiting for a maintainer (`store.pending`), one a thread of a channel."""

    def keep(self, answer: PendingAnswer) -> None:
        """Keep `answer` for its thread, waiting, in place of the one kept for it before (the thread edited)."""
        waiting = _row(answer)[:-2] + ("waiting", None)
        self._write(
            (
                _INSERT
                + "ON CONFLICT (channel, thread) DO UPDATE SET "
                + ", ".join(f"{c} = excluded.{c}" for c in _KEPT),
                [waiting],
            )
        )

    def waiting(self, channel: str) -> list[PendingAnswer]:
        """`channel`'s answers waiting for a maintainer (a claim past its lease included), newest first."""
        rows = self._db.rows(
            f"SELECT {_COLUMNS} FROM pending_answers WHERE channel = ? AND {_OPEN} ORDER BY drafted_at DESC, thread",
            (channel, time.time() - CLAIM_LEASE),
        )
        return [_answer(row) for row in rows]

    def get(self, channel: str, thread: str) -> PendingAnswer | None:
        """The answer kept for `thread` of `channel`, waiting or claimed; None when there is none."""
        rows = self._db.rows(
            f"SELECT {_COLUMNS} FROM pending_answers WHERE channel = ? AND thread = ?", (channel, thread)
        )
        return _answer(rows[0]) if rows else None

    def claim(self, channel: str, thread: str) -> PendingAnswer | None:
        """The waiting answer of `thread`, claimed for the one caller that gets it (None for the others, in any
        process): what a Post or a Dismiss acts on, once. `settle` or `release` ends the claim."""
        found, now = self.get(channel, thread), time.time()
        if found is None or not (found.state == "waiting" or (found.claimed_at or now) < now - CLAIM_LEASE):
            return None
        with self._db.transaction() as db:
            taken = db.execute(
                "UPDATE pending_answers SET state = 'claimed', claimed_at = ? "
                f"WHERE channel = ? AND thread = ? AND drafted_at = ? AND {_OPEN}",
                (now, channel, thread, found.drafted_at, now - CLAIM_LEASE),
            ).rowcount
        if taken != 1:
            return None
        return replace(found, state="claimed", claimed_at=now)

    def release(self, answer: PendingAnswer) -> None:
        """A claimed answer back on the list (it could not be posted), unless a newer one was drafted since."""
        with self._db.transaction() as db:
            db.execute(
                f"UPDATE pending_answers SET state = 'waiting', claimed_at = NULL WHERE {_MINE}",
                (answer.channel, answer.thread, answer.drafted_at, answer.claimed_at),
            )

    def settle(self, answer: PendingAnswer) -> None:
        """A claimed answer done with (posted or dismissed): forgotten, unless a newer one was drafted since."""
        with self._db.transaction() as db:
            db.execute(
                f"DELETE FROM pending_answers WHERE {_MINE}",
                (answer.channel, answer.thread, answer.drafted_at, answer.claimed_at),
            )

    def drop(self, channel: str, thread: str) -> bool:
        """Forget the answer kept for `thread` (the thread closed, or no longer answered); whether there was one."""
        with self._db.transaction() as db:
            gone = db.execute(
                "DELETE FROM pending_answers WHERE channel = ? AND thread = ?", (channel, thread)
            ).rowcount
        return bool(gone)


def _row(answer: PendingAnswer) -> tuple[Any, ...]:
    """A pending answer's values, in the order of `_COLUMNS`."""
    return (
        answer.channel,
        answer.thread,
        answer.question[:MAX_TEXT],
        answer.answer,
        answer.entry_id,
        answer.confidence,
        answer.url,
        json.dumps(dict(answer.platform), ensure_ascii=False, sort_keys=True),
        answer.drafted_at,
        answer.state,
        answer.claimed_at,
    )


def _answer(row: tuple[Any, ...]) -> PendingAnswer:
    """A row of `_COLUMNS` as the answer it keeps (`platform` handed back as stored)."""
    values = list(row)
    values[7] = json.loads(values[7])
    return PendingAnswer(*values)
