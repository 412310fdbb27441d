"""What the GitHub webhook keeps in the insights store, so that every process sharing it acts once on a delivery and a
close acknowledged is harvested whatever stops in between.

**Deliveries seen** (`github_deliveries`): a delivery's key (a fixed-size hash of its `X-GitHub-Delivery` id, or of
its signed body) taken in one statement that inserts it unless it is there, after those older than the replay
window are cleared: of two processes given one delivery, one acts on it (one `/faq` comment, one answer).

**Closes waiting** (`close_queue`): an issue GitHub says closed, queued before the webhook answers 202, one row per
issue (a redelivered close refreshes it). A worker takes a row in the way the claims on threads are taken
(`claims.py`): a `holder` and a lease (`until`), so a process that dies frees its rows when the lease ends, or at
once for a process of this machine that is no longer running; a harvest done deletes the row, one that failed is
tried again later (`due`), at most a bounded number of times, then dropped with its last error. The queue holds at
most a bounded number of rows: past it a close is refused (the webhook says so), never dropped in silence.
`InsightsStore` keeps them in two parts: `Deliveries` (`store.deliveries`) and `CloseQueue` (`store.closes`).
"""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass
from typing import Any

from .part import StorePart

__all__ = ["Deliveries", "CloseQueue", "QueuedClose", "this_process", "holder_running"]


@dataclass(frozen=True)
class QueuedClose:
    """A close waiting to be harvested: its issue as the delivery gave it (JSON), and the tries made so far."""

    repo: str
    number: int
    issue: str
    tries: int
    holder: str


def this_process(tag: str) -> str:
    """A holder name for this process: its host and process id (so a restarted process on this host can tell that
    the holder is gone), and `tag`."""
    return f"{socket.gethostname()}:{os.getpid()}:{tag}"


def holder_running(holder: str) -> bool:
    """Whether the process a holder names may still be running: False only for one of this host that is not."""
    host, _, rest = holder.partition(":")
    pid = rest.partition(":")[0]
    if host != socket.gethostname() or not pid.isdigit():
        return True
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except OSError:  # running, as another user
        return True
    return True


class Deliveries(StorePart):
    """The store's part for the GitHub webhook's deliveries seen (`store.deliveries`)."""

    def first(self, key: str, now: float, window: float) -> bool:
        """Whether `key` is new within `window` seconds before `now` (and remember it), in any process."""
        with self._db.transaction() as db:
            db.execute("DELETE FROM github_deliveries WHERE seen_at < ?", (now - window,))
            taken = db.execute(
                "INSERT OR IGNORE INTO github_deliveries (key, seen_at) VALUES (?, ?)", (key, now)
            ).rowcount
        return int(taken) == 1

    def forget(self, keys: list[str]) -> None:
        """`keys` forgotten: their delivery was refused, and may be delivered again."""
        self._write(("DELETE FROM github_deliveries WHERE key = ?", [(k,) for k in keys]))


class CloseQueue(StorePart):
    """The store's part for the closes waiting to be harvested (`store.closes`)."""

    def queue(self, repo: str, number: int, issue: str, now: float, limit: int, due: float | None = None) -> bool:
        """Queue the close of `repo`#`number` (its issue as JSON), due at `due` (default `now`), or refresh its row;
        False (nothing queued) when `limit` rows are waiting already."""
        with self._db.transaction() as db:
            waiting = int(db.execute("SELECT count(*) FROM close_queue").fetchone()[0])
            there = db.execute("SELECT 1 FROM close_queue WHERE repo = ? AND number = ?", (repo, number)).fetchall()
            if waiting >= limit and not there:
                return False
            db.execute(
                "INSERT INTO close_queue (repo, number, issue, queued_at, tries, due, holder, until, last_error) "
                "VALUES (?, ?, ?, ?, 0, ?, '', 0, '') ON CONFLICT (repo, number) DO UPDATE SET issue = excluded.issue, "
                "queued_at = excluded.queued_at, tries = 0, due = excluded.due, last_error = ''",
                (repo, number, issue, now, now if due is None else due),
            )
        return True

    def take(
        self, holder: str, now: float, until: float, only: tuple[str, int] | None = None, before: float = 0.0
    ) -> QueuedClose | None:
        """The close due first that no running process holds (with `only`, that issue's, due or not; a close not yet
        tried that was queued before `before` is due), now held by `holder` until `until`; None when none."""
        if only is None:
            rows = self._db.rows(
                "SELECT repo, number, issue, tries, holder, until FROM close_queue "
                "WHERE due <= ? OR (tries = 0 AND queued_at < ?) ORDER BY due, queued_at LIMIT 50",
                (now, before),
            )
        else:
            rows = self._db.rows(
                "SELECT repo, number, issue, tries, holder, until FROM close_queue WHERE repo = ? AND number = ?", only
            )
        for repo, number, issue, tries, held_by, held_until in rows:
            if held_by and float(held_until) >= now and holder_running(str(held_by)):
                continue
            with self._db.transaction() as db:
                taken = db.execute(
                    "UPDATE close_queue SET holder = ?, until = ? WHERE repo = ? AND number = ? AND holder = ?",
                    (holder, until, repo, number, held_by),
                ).rowcount
            if int(taken) == 1:
                return QueuedClose(str(repo), int(number), str(issue), int(tries), holder)
        return None

    def renew(self, close: QueuedClose, until: float) -> bool:
        """The lease of a close taken moved to `until`; whether its holder still held it."""
        with self._db.transaction() as db:
            kept = db.execute(
                "UPDATE close_queue SET until = ? WHERE repo = ? AND number = ? AND holder = ?",
                (until, close.repo, close.number, close.holder),
            ).rowcount
        return int(kept) == 1

    def done(self, close: QueuedClose) -> None:
        """A close harvested (or found to need no harvest): its row deleted, unless it was queued again meanwhile."""
        with self._db.transaction() as db:
            db.execute(
                "DELETE FROM close_queue WHERE repo = ? AND number = ? AND holder = ? AND tries = ?",
                (close.repo, close.number, close.holder, close.tries),
            )

    def failed(self, close: QueuedClose, error: str, due: float, max_tries: int) -> bool:
        """A close whose harvest failed: tried again at `due`, or dropped once it has failed `max_tries` times;
        whether it was dropped."""
        with self._db.transaction() as db:
            if close.tries + 1 >= max_tries:
                db.execute(
                    "DELETE FROM close_queue WHERE repo = ? AND number = ? AND holder = ?",
                    (close.repo, close.number, close.holder),
                )
                return True
            db.execute(
                "UPDATE close_queue SET tries = tries + 1, due = ?, holder = '', until = 0, last_error = ? "
                "WHERE repo = ? AND number = ? AND holder = ?",
                (due, error[:500], close.repo, close.number, close.holder),
            )
        return False

    def waiting(self) -> int:
        """How many closes are queued."""
        rows: list[Any] = self._db.rows("SELECT count(*) FROM close_queue")
        return int(rows[0][0]) if rows else 0
