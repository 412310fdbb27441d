"""One part of the insights store: the database it shares with the other parts, and a write in one transaction.

`InsightsStore` (kb/insights/store.py) is composed of the parts, one for each thing it keeps:
the questions asked (`questions.py`), the votes (`votes.py`), the dismissed gaps (`gaps.py`),
the taught links (`links.py`), the answers waiting for a maintainer (`pending.py`) and the
harvested drafts (`harvested.py`). Each part reads and writes its own tables through `_db`,
which the store opens (a SQLite file or PostgreSQL: `sqlite_db.py`, `postgres_db.py`).
"""

from __future__ import annotations

from typing import Any, Sequence

__all__ = ["StorePart"]


class StorePart:
    """What every part of the store has: the open database (`_db`, set by `InsightsStore`) and `_write`."""

    _db: Any

    def _write(self, *statements: tuple[str, Sequence[tuple[object, ...]]]) -> None:
        """Run each statement over its rows, all in one transaction."""
        if not any(rows for _, rows in statements):
            return
        with self._db.transaction() as db:
            for sql, rows in statements:
                if rows:
                    db.executemany(sql, rows)
