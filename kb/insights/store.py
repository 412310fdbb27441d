"""The insights store: the questions people asked and their votes, in a SQLite file.

One file in the data directory (`insights.sqlite`), in WAL mode so readers never wait for
the writer, with one connection per thread. The schema is built by numbered migrations
and a version table (`kb/insights/migrations.py`): opening an older file upgrades it in
one transaction, keeping every row; a file from a newer version is refused. Nothing here
knows about HTTP: the server and the `kb insights` command both read and write through
`InsightsStore`. What a row holds is described in `kb/insights/records.py`.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import sqlite3
import threading
import time
from pathlib import Path
from typing import Iterable, Sequence

from ..errors import InsightsUnavailable
from .migrations import SCHEMA_VERSION, upgrade, version_of
from .records import (
    MAX_TEXT, AskedQuestion, Comment, DailyCount, EntryHits, EntryVotes, Question, Totals, Vote, question_key,
)

__all__ = ["InsightsStore", "store_path", "BUSY_TIMEOUT"]

BUSY_TIMEOUT = 5.0  # seconds a write waits for another writer (another worker process)


def store_path(data_dir: Path) -> Path:
    """Where the insights database lives in a data directory."""
    return data_dir / "insights.sqlite"


class InsightsStore:
    """The insights database at `path`: created or upgraded on open, one connection per thread."""

    def __init__(self, path: Path, busy_timeout: float = BUSY_TIMEOUT):
        self.path = Path(path)
        self.busy_timeout = busy_timeout
        self._local = threading.local()
        self._all: dict[int, sqlite3.Connection] = {}  # by thread id, to close them all
        self._lock = threading.Lock()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            db = self._db()
            db.execute("PRAGMA journal_mode=WAL")
            self._migrate(db)
            self._key = self._secret(db)
        except (sqlite3.Error, OSError) as exc:
            self.close()
            raise InsightsUnavailable(self.path, f"cannot be opened ({type(exc).__name__}: {exc})") from None

    def _db(self) -> sqlite3.Connection:
        db: sqlite3.Connection | None = getattr(self._local, "db", None)
        if db is None:
            # Autocommit mode: each write below opens and commits its own transaction.
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

    def _migrate(self, db: sqlite3.Connection) -> None:
        db.execute("BEGIN IMMEDIATE")  # one process upgrades; the others wait, then see the new version
        try:
            version = version_of(db)
            if version > SCHEMA_VERSION:
                raise InsightsUnavailable(self.path, f"schema version {version} is newer than this kb's {SCHEMA_VERSION}")
            upgrade(db, version)
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise

    def _secret(self, db: sqlite3.Connection) -> bytes:
        db.execute("INSERT OR IGNORE INTO meta VALUES ('voter_key', ?)", (secrets.token_hex(32),))
        return bytes.fromhex(db.execute("SELECT value FROM meta WHERE key = 'voter_key'").fetchone()[0])

    def schema_version(self) -> int:
        return int(self._db().execute("SELECT max(version) FROM schema_version").fetchone()[0])

    def pseudonym(self, identity: str) -> str:
        """A keyed hash of a session id or Slack user: the same for the same identity, and not reversible."""
        return hmac.new(self._key, identity.encode("utf-8"), hashlib.sha256).hexdigest()[:32]

    # Writes

    def add_questions(self, questions: Iterable[Question]) -> int:
        rows = [
            (q.asked_at, q.text[:MAX_TEXT], q.lang, q.channel, q.kind, q.top_entry, q.top_score, int(q.answered),
             q.latency_ms, q.slack_team, q.slack_channel, q.margin, q.previous and q.previous[:MAX_TEXT])
            for q in questions
        ]
        self._write((
            "INSERT INTO questions (asked_at, text, lang, channel, kind, top_entry, top_score, answered, "
            "latency_ms, slack_team, slack_channel, margin, previous) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            rows,
        ))
        return len(rows)

    def add_votes(self, votes: Iterable[Vote]) -> int:
        """Record votes: one per voter per entry, so a later vote (for whichever question) replaces the earlier."""
        latest = {(v.voter, v.entry_id): v for v in votes}.values()
        rows = [
            (v.voted_at, v.entry_id, v.question[:MAX_TEXT], int(v.helpful), v.voter, v.channel, v.reason,
             v.comment and v.comment[:MAX_TEXT])
            for v in latest
        ]
        self._write(
            ("DELETE FROM votes WHERE voter = ? AND entry_id = ?", [(v.voter, v.entry_id) for v in latest]),
            ("INSERT INTO votes (voted_at, entry_id, question, helpful, voter, channel, reason, comment) "
             "VALUES (?, ?, ?, ?, ?, ?, ?, ?)", rows),
        )
        return len(rows)

    def _write(self, *statements: tuple[str, Sequence[tuple[object, ...]]]) -> None:
        """Run each statement over its rows, all in one transaction."""
        if not any(rows for _, rows in statements):
            return
        db = self._db()
        db.execute("BEGIN IMMEDIATE")
        try:
            for sql, rows in statements:
                db.executemany(sql, rows)
            db.execute("COMMIT")
        except BaseException:
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise

    def dismiss_gap(self, texts: Iterable[str], at: float | None = None) -> None:
        """Hide the unanswered questions with these texts (case and spacing aside) from the gaps, for good."""
        when = time.time() if at is None else at
        self._write(("INSERT OR REPLACE INTO dismissed_gaps VALUES (?, ?)", [(question_key(t), when) for t in texts]))

    def restore_gap(self, texts: Iterable[str]) -> None:
        self._write(("DELETE FROM dismissed_gaps WHERE text = ?", [(question_key(t),) for t in texts]))

    def dismissed(self) -> set[str]:
        """The dismissed question texts, lower-cased and trimmed."""
        return {row[0] for row in self._db().execute("SELECT text FROM dismissed_gaps")}

    def prune(self, before: float) -> tuple[int, int]:
        """Delete questions and votes older than `before` (Unix seconds); (questions, votes) deleted."""
        db = self._db()
        db.execute("BEGIN IMMEDIATE")
        try:
            questions = db.execute("DELETE FROM questions WHERE asked_at < ?", (before,)).rowcount
            votes = db.execute("DELETE FROM votes WHERE voted_at < ?", (before,)).rowcount
            db.execute("COMMIT")
        except BaseException:
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise
        return questions, votes

    # Reads, each for what happened since a time (Unix seconds)

    def totals(self, since: float) -> Totals:
        db = self._db()
        asked, answered = db.execute(
            "SELECT count(*), coalesce(sum(answered), 0) FROM questions WHERE asked_at >= ?", (since,)
        ).fetchone()
        helpful, unhelpful = db.execute(
            "SELECT coalesce(sum(helpful), 0), coalesce(sum(1 - helpful), 0) FROM votes WHERE voted_at >= ?", (since,)
        ).fetchone()
        return Totals(asked, answered, helpful, unhelpful)

    def unanswered(self, since: float, limit: int = 2000) -> list[AskedQuestion]:
        """Questions the FAQ had no confident answer for, most asked first (each at most `MAX_TEXT` characters)."""
        rows = self._db().execute(
            "SELECT substr(trim(text), 1, ?), lang, count(*) AS n, min(asked_at), max(asked_at), group_concat(DISTINCT channel) "
            "FROM questions "
            "WHERE answered = 0 AND asked_at >= ? GROUP BY lower(trim(text)) ORDER BY n DESC, max(asked_at) DESC "
            "LIMIT ?",
            (MAX_TEXT, since, limit),
        )
        return [
            AskedQuestion(text, lang, n, first, last, tuple(sorted(channels.split(","))))
            for text, lang, n, first, last, channels in rows
        ]

    def unhelpful(self, since: float, limit: int = 50, comments: int = 20) -> list[EntryVotes]:
        """Entries voted not helpful, most such votes first, with their reasons and latest comments."""
        db = self._db()
        found = db.execute(
            "SELECT entry_id, sum(1 - helpful) AS bad, sum(helpful) FROM votes WHERE voted_at >= ? "
            "GROUP BY entry_id HAVING bad > 0 ORDER BY bad DESC, entry_id LIMIT ?",
            (since, limit),
        ).fetchall()
        result = []
        for entry_id, bad, good in found:
            reasons = db.execute(
                "SELECT reason, count(*) AS n FROM votes WHERE entry_id = ? AND helpful = 0 AND voted_at >= ? "
                "AND reason IS NOT NULL GROUP BY reason ORDER BY n DESC, reason",
                (entry_id, since),
            ).fetchall()
            notes = db.execute(
                "SELECT question, reason, comment, voted_at, channel FROM votes WHERE entry_id = ? AND helpful = 0 "
                "AND voted_at >= ? ORDER BY voted_at DESC LIMIT ?",
                (entry_id, since, comments),
            ).fetchall()
            result.append(
                EntryVotes(entry_id, bad, good, tuple((r, n) for r, n in reasons), tuple(Comment(*n) for n in notes))
            )
        return result

    def entry_hits(self, since: float, limit: int = 50) -> list[EntryHits]:
        """Entries given as the answer, most often first, with their votes."""
        rows = self._db().execute(
            "SELECT h.top_entry, h.n, coalesce(v.good, 0), coalesce(v.bad, 0) FROM "
            "(SELECT top_entry, count(*) AS n FROM questions WHERE answered = 1 AND top_entry IS NOT NULL "
            " AND asked_at >= ? GROUP BY top_entry) AS h LEFT JOIN "
            "(SELECT entry_id, sum(helpful) AS good, sum(1 - helpful) AS bad FROM votes WHERE voted_at >= ? "
            " GROUP BY entry_id) AS v ON v.entry_id = h.top_entry ORDER BY h.n DESC, h.top_entry LIMIT ?",
            (since, since, limit),
        )
        return [EntryHits(*row) for row in rows]

    def low_margins(self, since: float, below: float) -> list[tuple[str, str]]:
        """(entry, question) for answers whose best entry led the second by less than `below`, newest first."""
        return self._db().execute(
            "SELECT top_entry, trim(text) FROM questions WHERE answered = 1 AND top_entry IS NOT NULL "
            "AND margin < ? AND asked_at >= ? ORDER BY asked_at DESC",
            (below, since),
        ).fetchall()

    def asked_again(self, since: float, within: float) -> list[tuple[str, str, str, str, str]]:
        """(entry, its question, its language, the next question, its language): an answer followed within
        `within` seconds by another question in the same conversation or search box, newest first."""
        return self._db().execute(
            "SELECT a.top_entry, trim(a.text), a.lang, trim(b.text), b.lang FROM questions AS b "
            "JOIN questions AS a ON a.text = b.previous AND a.channel = b.channel AND a.answered = 1 "
            "AND a.top_entry IS NOT NULL AND a.asked_at BETWEEN b.asked_at - ? AND b.asked_at "
            "WHERE b.previous IS NOT NULL AND b.asked_at >= ? GROUP BY b.id ORDER BY b.asked_at DESC",
            (within, since),
        ).fetchall()

    def daily(self, since: float) -> list[DailyCount]:
        """Questions per day (UTC) by channel and language."""
        rows = self._db().execute(
            "SELECT date(asked_at, 'unixepoch') AS day, channel, lang, count(*) FROM questions WHERE asked_at >= ? "
            "GROUP BY day, channel, lang ORDER BY day, channel, lang",
            (since,),
        )
        return [DailyCount(*row) for row in rows]

    def count(self, table: str) -> int:
        """Rows in `questions` or `votes` (for tests and benchmarks)."""
        if table not in ("questions", "votes"):
            raise ValueError(f"no table {table!r}; expected questions or votes")
        return int(self._db().execute(f"SELECT count(*) FROM {table}").fetchone()[0])

    def close(self) -> None:
        with self._lock:
            connections, self._all = list(self._all.values()), {}
        for db in connections:
            db.close()
        self._local = threading.local()
