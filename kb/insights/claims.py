"""Claims on a channel's threads, as the insights store keeps them (table `claims`): which server process is
writing a thread's reply.

Replicas sharing one database (PostgreSQL, or one SQLite file for the workers of one machine) take turns on a
thread: a claim is a row keyed, as the answers waiting for a maintainer are (`pending.py`), by channel and thread
(the channel's own name for it, compared as it is given: a channel whose names ignore case folds them first), held
by one `holder` (a random id per claim) until `until` (Unix seconds, a short lease the holder renews while it
works). A claim is taken in one transaction that first clears expired claims (a process that died does not hold a
thread for ever) and then inserts the row unless another holds it; it is released by deleting the holder's own
row. `InsightsStore` keeps them in `Claims`, its part `store.claims`.
"""

from __future__ import annotations

from .part import StorePart

__all__ = ["Claims"]

_MINE = "channel = ? AND thread = ? AND holder = ?"


class Claims(StorePart):
    """The store's part for claims on threads (`store.claims`), one holder a thread of a channel."""

    def claim(self, channel: str, thread: str, holder: str, until: float, now: float) -> bool:
        """Whether `holder` now holds `thread` of `channel` until `until`: no one else held it past `now` (in any
        process)."""
        with self._db.transaction() as db:
            db.execute("DELETE FROM claims WHERE until < ?", (now,))
            taken = db.execute(
                "INSERT OR IGNORE INTO claims (channel, thread, holder, until) VALUES (?, ?, ?, ?)",
                (channel, thread, holder, until),
            ).rowcount
        return int(taken) == 1

    def renew(self, channel: str, thread: str, holder: str, until: float) -> bool:
        """The lease of `holder`'s claim on `thread` of `channel` moved to `until`; whether it still held it."""
        with self._db.transaction() as db:
            kept = db.execute(f"UPDATE claims SET until = ? WHERE {_MINE}", (until, channel, thread, holder)).rowcount
        return int(kept) == 1

    def release(self, channel: str, thread: str, holder: str) -> None:
        """`holder`'s claim on `thread` of `channel` given up (another's is left alone)."""
        with self._db.transaction() as db:
            db.execute(f"DELETE FROM claims WHERE {_MINE}", (channel, thread, holder))
