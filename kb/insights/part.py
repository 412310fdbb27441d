"""One part of the insights store: the database it shares with the other parts, and a write in one transaction.

`InsightsStore` (kb/insights/store.py) is composed of the parts, one for each thing it keeps, each
an attribute of the store: `store.questions` (`questions.py`), `store.votes` (`votes.py`),
`store.gaps`, the dismissed ones (`gaps.py`), `store.links`, the taught links (`links.py`),
`store.pending`, the answers waiting for a maintainer (`pending.py`), `store.drafts`, the harvested
drafts (`harvested.py`), `store.claims`, the claims on threads (`claims.py`), and `store.deliveries`
and `store.closes`, what the GitHub webhook keeps (`deliveries.py`). Each part reads and writes its
own tables through the `Database` the store opens (a SQLite file or PostgreSQL: `sqlite_db.py`,
`postgres_db.py`), which both kinds satisfy.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Any, Protocol, Sequence

__all__ = ["StorePart", "Database", "Transaction", "Result", "write"]


class Result(Protocol):
    """What a statement run in a transaction gives back: the rows it changed, and those it read."""

    @property
    def rowcount(self) -> int: ...

    def fetchone(self) -> Any: ...

    def fetchall(self) -> list[Any]: ...


class Transaction(Protocol):
    """Statements written for SQLite, run in one transaction (a SQLite connection, or a PostgreSQL cursor)."""

    def execute(self, sql: str, params: Sequence[Any] = (), /) -> Result: ...

    def executemany(self, sql: str, rows: Sequence[Sequence[Any]], /) -> object: ...


class Database(Protocol):
    """The insights database as the parts use it: `SqliteDatabase` or `PostgresDatabase`."""

    dialect: str
    errors: tuple[type[BaseException], ...]
    location: str
    busy_timeout: float

    def rows(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]: ...

    def transaction(self, exclusive: bool = False) -> AbstractContextManager[Transaction]: ...

    def unreachable(self, exc: BaseException) -> bool: ...

    def close(self) -> None: ...


def write(db: Database, *statements: tuple[str, Sequence[tuple[object, ...]]]) -> None:
    """Run each statement over its rows, all in one transaction (none when no statement has a row)."""
    if not any(rows for _, rows in statements):
        return
    with db.transaction() as t:
        for sql, rows in statements:
            if rows:
                t.executemany(sql, rows)


class StorePart:
    """What every part of the store has: the open database (`_db`, the store's) and `_write`."""

    def __init__(self, db: Database):
        self._db = db

    def _write(self, *statements: tuple[str, Sequence[tuple[object, ...]]]) -> None:
        """Run each statement over its rows, all in one transaction."""
        write(self._db, *statements)
