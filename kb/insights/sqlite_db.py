"""The insights database as a SQLite file: WAL mode, one connection per thread, writes that wait for a lock."""

from __future__ import annotations

import sqlite3
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator, Sequence

__all__ = ["SqliteDatabase"]


class SqliteDatabase:
    """A SQLite file; each thread gets its own connection, closed once the thread is gone."""

    dialect = "sqlite"
    errors: tuple[type[BaseException], ...] = (sqlite3.Error, OSError)

    def __init__(self, path: Path, busy_timeout: float):
        self.path = Path(path)
        self.location = str(self.path)
        self.busy_timeout = busy_timeout
        self._local = threading.local()
        self._all: dict[int, sqlite3.Connection] = {}  # by thread id, to close them all
        self._lock = threading.Lock()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._db().execute("PRAGMA journal_mode=WAL")

    def _db(self) -> sqlite3.Connection:
        db: sqlite3.Connection | None = getattr(self._local, "db", None)
        if db is None:
            # Autocommit mode: each write opens and commits its own transaction.
            db = sqlite3.connect(self.path, timeout=self.busy_timeout, isolation_level=None, check_same_thread=False)
            db.execute("PRAGMA synchronous=NORMAL")  # safe with WAL; a crash loses at most the last commits
            self._local.db = db
            with self._lock:
                # Threads come and go (a server's thread pool): close the connections of those gone.
                alive = {t.ident for t in threading.enumerate()}
                for ident in [i for i in self._all if i not in alive or i == threading.get_ident()]:
                    self._all.pop(ident).close()
                self._all[threading.get_ident()] = db
        return db

    def rows(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        return self._db().execute(sql, params).fetchall()

    @contextmanager
    def transaction(self, exclusive: bool = False) -> Iterator[sqlite3.Connection]:
        """One transaction, taking the file's write lock at once (another process waits, then sees it whole)."""
        db = self._db()
        db.execute("BEGIN IMMEDIATE")
        try:
            yield db
            db.execute("COMMIT")
        except BaseException:
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise

    def unreachable(self, exc: BaseException) -> bool:
        return False  # a file is always there: its troubles are locks and disks, each worth its own message

    def close(self) -> None:
        """Close the connections no other thread is using; another live thread's closes once that thread lets go.

        Closing a connection while another thread runs a statement on it crashes the process (a worker thread still
        reading when the server shuts down), so those are only let go: the statement running holds its connection,
        which closes when the statement ends."""
        with self._lock:
            connections, self._all = self._all, {}
            self._local = threading.local()  # each thread's own reference goes with the old one
        alive = {t.ident for t in threading.enumerate()}
        for ident, db in connections.items():
            if ident == threading.get_ident() or ident not in alive:
                db.close()
