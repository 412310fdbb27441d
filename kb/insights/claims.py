"""Claims on GitHub issues, as the insights store keeps them: which server process is writing an issue's bot comment.

Replicas sharing one database (PostgreSQL, or one SQLite file for the workers of one machine) take turns on an
issue: a claim is a row keyed by repository and issue number, held by one `holder` (a random id per claim) until
`until` (Unix seconds, a short lease the holder renews while it works). A claim is taken in one transaction that
first clears expired claims (a process that died does not hold an issue for ever) and then inserts the row unless
another holds it; it is released by deleting the holder's own row. `InsightsStore` keeps them in `IssueClaims`,
its part `store.claims`.
"""

from __future__ import annotations

from .part import StorePart

__all__ = ["IssueClaims"]


class IssueClaims(StorePart):
    """The store's part for claims on issues (`store.claims`)."""

    def claim(self, repo: str, number: int, holder: str, until: float, now: float) -> bool:
        """Whether `holder` now holds `repo`#`number` until `until`: no one else held it past `now` (in any process)."""
        with self._db.transaction() as db:
            db.execute("DELETE FROM issue_claims WHERE until < ?", (now,))
            taken = db.execute(
                "INSERT OR IGNORE INTO issue_claims (repo, number, holder, until) VALUES (?, ?, ?, ?)",
                (repo.lower(), number, holder, until),
            ).rowcount
        return int(taken) == 1

    def renew(self, repo: str, number: int, holder: str, until: float) -> bool:
        """The lease of `holder`'s claim on `repo`#`number` moved to `until`; whether it still held it."""
        with self._db.transaction() as db:
            kept = db.execute(
                "UPDATE issue_claims SET until = ? WHERE repo = ? AND number = ? AND holder = ?",
                (until, repo.lower(), number, holder),
            ).rowcount
        return int(kept) == 1

    def release(self, repo: str, number: int, holder: str) -> None:
        """`holder`'s claim on `repo`#`number` given up (another's is left alone)."""
        with self._db.transaction() as db:
            db.execute(
                "DELETE FROM issue_claims WHERE repo = ? AND number = ? AND holder = ?", (repo.lower(), number, holder)
            )
