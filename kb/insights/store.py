"""The insights store: what people asked and voted, the links taught and the answers waiting, in SQLite or PostgreSQL.

By default one file in the data directory (`insights.sqlite`, `kb/insights/sqlite_db.py`);
with `KB_DATABASE_URL` a PostgreSQL database that every worker and replica shares
(`kb/insights/postgres_db.py`). The statements are written once and translated for
PostgreSQL (`kb/insights/sql.py`). The schema is built by numbered migrations and a
version table (`kb/insights/migrations.py`): opening an older database upgrades it in one
transaction, keeping every row; one from a newer version is refused. Nothing here knows
about HTTP: the server and the `kb insights` command both read and write through
`InsightsStore`. What a row holds is described in `kb/insights/records.py`.

`InsightsStore` opens the database and is composed of one part for each thing it keeps, each an
attribute (`store.questions`, `store.votes`, `store.links`, ...; `kb/insights/part.py` lists them);
what spans several tables (the totals, pruning, an entry's new id, what a removed entry leaves
behind) is written here.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from pathlib import Path
from typing import Callable, Iterable, Mapping

from ..errors import InsightsUnavailable
from .claims import Claims
from .deliveries import CloseQueue, Deliveries
from .gaps import DismissedGaps
from .harvested import HarvestedDrafts
from .links import Links
from .migrations import SCHEMA_VERSION, upgrade, version_of
from .part import Database, write
from .pending import PendingAnswers
from .questions import Questions, RecentQuestion
from .records import Totals
from .sql import is_database_url, redact
from .sqlite_db import SqliteDatabase
from .votes import Votes

__all__ = ["InsightsStore", "RecentQuestion", "store_path", "BUSY_TIMEOUT"]

BUSY_TIMEOUT = 5.0  # seconds a write waits for another writer (another worker process)


def store_path(data_dir: Path) -> Path:
    """Where the insights database lives in a data directory (without `KB_DATABASE_URL`)."""
    return data_dir / "insights.sqlite"


def _opener(where: Path | str, busy_timeout: float) -> tuple[Callable[[], Database], tuple[type[BaseException], ...]]:
    """How to open the database at `where`, and what opening it raises when it cannot (psycopg is imported only for
    PostgreSQL)."""
    if isinstance(where, Path):
        return (lambda: SqliteDatabase(where, busy_timeout)), SqliteDatabase.errors
    from .postgres_db import PostgresDatabase

    return (lambda: PostgresDatabase(where, busy_timeout)), PostgresDatabase.errors


class InsightsStore:
    """The insights database: a SQLite file at a path, or PostgreSQL at a `postgresql://` URL; created or upgraded on open.

    Each thing it keeps is a part of its own: `questions`, `votes`, `gaps` (dismissed), `links`, `pending`
    (answers waiting for a maintainer), `drafts` (harvested), `claims` (on threads), `deliveries` and `closes`."""

    questions: Questions
    votes: Votes
    gaps: DismissedGaps
    links: Links
    pending: PendingAnswers
    drafts: HarvestedDrafts
    claims: Claims
    deliveries: Deliveries
    closes: CloseQueue

    def __init__(self, where: Path | str, busy_timeout: float = BUSY_TIMEOUT):
        self.path: Path | None = None if is_database_url(where) else Path(where)
        self.location = redact(str(where)) if self.path is None else str(self.path)
        self._db: Database | None = None
        try:
            opener, errors = _opener(self.path or str(where), busy_timeout)
        except ImportError as exc:
            raise InsightsUnavailable(self.location, f"needs psycopg ({exc}): pip install 'kb[pg]'") from None
        try:
            self._db = db = opener()
            self._migrate()
            self._key = self._secret()
        except errors as exc:
            self.close()
            raise InsightsUnavailable(self.location, f"cannot be opened ({type(exc).__name__}: {exc})") from None
        except BaseException:
            self.close()
            raise
        self._parts(db)

    def _parts(self, db: Database) -> None:
        self.questions, self.votes, self.gaps = Questions(db), Votes(db), DismissedGaps(db)
        self.links, self.pending, self.drafts = Links(db), PendingAnswers(db), HarvestedDrafts(db)
        self.claims, self.deliveries, self.closes = Claims(db), Deliveries(db), CloseQueue(db)

    @property
    def db(self) -> Database:
        """The open database the parts share."""
        assert self._db is not None, "the store was not opened"
        return self._db

    @property
    def busy_timeout(self) -> float:
        """Seconds a write waits for a lock (SQLite) or a connection (PostgreSQL); a change applies to new connections."""
        return float(self.db.busy_timeout)

    @busy_timeout.setter
    def busy_timeout(self, seconds: float) -> None:
        self.db.busy_timeout = seconds

    @property
    def dialect(self) -> str:
        """`sqlite` or `postgres`."""
        return str(self.db.dialect)

    def unreachable(self, exc: BaseException) -> bool:
        """Whether `exc` says the database server cannot be reached (it may come back), not that a write was wrong."""
        return bool(self.db.unreachable(exc))

    @property
    def database_errors(self) -> tuple[type[BaseException], ...]:
        """What the database raises when a statement fails (a claim not taken, a delivery not remembered)."""
        return tuple(self.db.errors)

    def _migrate(self) -> None:
        with self.db.transaction(
            exclusive=True
        ) as db:  # one process upgrades; the others wait, then see the new version
            version = version_of(db)
            if version > SCHEMA_VERSION:
                raise InsightsUnavailable(
                    self.location, f"schema version {version} is newer than this kb's {SCHEMA_VERSION}"
                )
            upgrade(db, version)

    def _secret(self) -> bytes:
        with self.db.transaction() as db:
            db.execute("INSERT OR IGNORE INTO meta VALUES ('voter_key', ?)", (secrets.token_hex(32),))
        return bytes.fromhex(self.db.rows("SELECT value FROM meta WHERE key = 'voter_key'")[0][0])

    def schema_version(self) -> int:
        return int(self.db.rows("SELECT max(version) FROM schema_version")[0][0])

    def pseudonym(self, identity: str) -> str:
        """A keyed hash of a session id or Slack user: the same for the same identity, and not reversible."""
        return hmac.new(self._key, identity.encode("utf-8"), hashlib.sha256).hexdigest()[:32]

    def prune(self, before: float) -> tuple[int, int]:
        """Delete questions and votes older than `before` (Unix seconds); (questions, votes) deleted.

        Links are kept, however old: they are what a maintainer taught the knowledge base."""
        with self.db.transaction() as db:
            questions = db.execute("DELETE FROM questions WHERE asked_at < ?", (before,)).rowcount
            votes = db.execute("DELETE FROM votes WHERE voted_at < ?", (before,)).rowcount
        return questions, votes

    def totals(self, since: float) -> Totals:
        asked, answered = self.db.rows(
            "SELECT count(*), coalesce(sum(answered), 0) FROM questions WHERE asked_at >= ?", (since,)
        )[0]
        helpful, unhelpful = self.db.rows(
            "SELECT coalesce(sum(helpful), 0), coalesce(sum(1 - helpful), 0) FROM votes WHERE voted_at >= ?", (since,)
        )[0]
        return Totals(asked, answered, helpful, unhelpful)

    def move_entries(self, moved: Mapping[str, str]) -> None:
        """Give the votes, answered questions and links of each old id (of an entry reworded upstream, `kb sync`)
        to its new id, in one transaction; a voter's vote already on the new id keeps that one."""
        rows = [(new, old) for old, new in moved.items()]
        write(
            self.db,
            (
                "UPDATE votes SET entry_id = ? WHERE entry_id = ? AND NOT EXISTS (SELECT 1 FROM votes AS v "
                "WHERE v.voter = votes.voter AND v.question = votes.question AND v.entry_id = ?)",
                [(new, old, new) for new, old in rows],
            ),
            ("UPDATE questions SET top_entry = ? WHERE top_entry = ?", rows),
            ("UPDATE links SET entry_id = ? WHERE entry_id = ?", rows),
        )

    def curation(self, entry_ids: Iterable[str]) -> dict[str, tuple[int, int]]:
        """(active links, votes) of each of `entry_ids` that has any: what a removed entry leaves without an entry."""
        wanted = sorted(set(entry_ids))
        if not wanted:
            return {}
        marks = ", ".join("?" * len(wanted))
        links = dict(
            self.db.rows(
                f"SELECT entry_id, count(*) FROM links WHERE removed_at IS NULL AND entry_id IN ({marks}) "
                "GROUP BY entry_id",
                wanted,
            )
        )
        votes = dict(
            self.db.rows(f"SELECT entry_id, count(*) FROM votes WHERE entry_id IN ({marks}) GROUP BY entry_id", wanted)
        )
        return {i: (int(links.get(i, 0)), int(votes.get(i, 0))) for i in wanted if links.get(i) or votes.get(i)}

    def count(self, table: str) -> int:
        """Rows in `questions` or `votes` (for tests and benchmarks)."""
        if table not in ("questions", "votes"):
            raise ValueError(f"no table {table!r}; expected questions or votes")
        return int(self.db.rows(f"SELECT count(*) FROM {table}")[0][0])

    def close(self) -> None:
        if self._db is not None:
            self.db.close()
