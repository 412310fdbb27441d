"""The insights database in PostgreSQL (`KB_DATABASE_URL`), shared by every worker and replica, through a pool.

Statements arrive written for SQLite and are translated (`kb.insights.sql`). Connections
come from a psycopg pool that checks each one before lending it, so a server restarted in
between costs no failed request once it is back. While the server cannot be reached a
write waits at most `timeout` seconds for a connection, then fails with
`psycopg.OperationalError` (the writer keeps its records and tries again).
"""

from __future__ import annotations

import logging
from contextlib import contextmanager
from typing import Any, Iterator, Sequence

import psycopg
from psycopg_pool import ConnectionPool

from .sql import redact, to_postgres

__all__ = ["PostgresDatabase", "TIMEOUT"]

TIMEOUT = 5.0  # seconds to wait for a connection (and to make one)
POOL_SIZE = 4  # connections per process: the writer thread and a few readers of /insights
MIGRATION_LOCK = 0x6B62_696E  # the advisory lock held while the schema is upgraded


POOL_NAME = "kb-insights"


class _ReportedByTheWriter(logging.Filter):
    """Drops the pool's line for each failed attempt to reconnect: the insights writer logs one line per outage."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not (
            str(record.msg).startswith("error connecting in")
            and isinstance(record.args, tuple)
            and record.args
            and record.args[0] == POOL_NAME
        )


logging.getLogger("psycopg.pool").addFilter(_ReportedByTheWriter())


class _Cursor:
    """A cursor taking statements written for SQLite."""

    def __init__(self, cursor: psycopg.Cursor[Any]):
        self._cursor = cursor

    def execute(self, sql: str, params: Sequence[Any] = ()) -> psycopg.Cursor[Any]:
        return self._cursor.execute(to_postgres(sql), params)

    def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        self._cursor.executemany(to_postgres(sql), rows)


class PostgresDatabase:
    """A PostgreSQL database at `url`; raises psycopg.OperationalError when it cannot be reached."""

    dialect = "postgres"
    errors: tuple[type[BaseException], ...] = (psycopg.Error,)

    def __init__(self, url: str, timeout: float = TIMEOUT, size: int = POOL_SIZE):
        self.path = None
        self.busy_timeout = timeout  # for new pools only: this one keeps the timeout it was made with
        self.location = redact(url)
        self._pool = ConnectionPool(
            url,
            min_size=1,
            max_size=size,
            timeout=timeout,
            open=False,
            name=POOL_NAME,
            kwargs={"autocommit": True, "connect_timeout": max(int(timeout), 1)},
            check=ConnectionPool.check_connection,
        )
        try:
            self._pool.open(wait=True, timeout=timeout)
        except BaseException:
            self._pool.close()
            raise

    def rows(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        with self._pool.connection() as conn:
            return conn.execute(to_postgres(sql), params).fetchall()

    @contextmanager
    def transaction(self, exclusive: bool = False) -> Iterator[_Cursor]:
        """One transaction; `exclusive` holds the migration lock, so one process upgrades and the others wait."""
        with self._pool.connection() as conn, conn.transaction(), conn.cursor() as cursor:
            if exclusive:
                cursor.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))
            yield _Cursor(cursor)

    def unreachable(self, exc: BaseException) -> bool:
        """Whether `exc` says the server is gone (down, restarting, out of connections) rather than a bad statement."""
        return isinstance(exc, (psycopg.OperationalError, psycopg.InterfaceError))

    def close(self) -> None:
        self._pool.close()
