"""The insights store: the questions people asked and their votes, in a SQLite file or in PostgreSQL.

By default one file in the data directory (`insights.sqlite`, `kb/insights/sqlite_db.py`);
with `KB_DATABASE_URL` a PostgreSQL database that every worker and replica shares
(`kb/insights/postgres_db.py`). The statements below are written once and translated for
PostgreSQL (`kb/insights/sql.py`). The schema is built by numbered migrations and a
version table (`kb/insights/migrations.py`): opening an older database upgrades it in one
transaction, keeping every row; one from a newer version is refused. Nothing here knows
about HTTP: the server and the `kb insights` command both read and write through
`InsightsStore`. What a row holds is described in `kb/insights/records.py`.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Mapping, Sequence

from ..errors import InsightsUnavailable
from ..text import question_key
from .claims import IssueClaims
from .harvested import HarvestedDrafts
from .migrations import SCHEMA_VERSION, upgrade, version_of
from .records import (
    LANGS,
    MAX_TEXT,
    AskedQuestion,
    Comment,
    DailyCount,
    EntryHits,
    EntryVotes,
    Question,
    SuggestedAnswer,
    Totals,
    Vote,
)
from .sql import is_database_url, redact
from .sqlite_db import SqliteDatabase

if TYPE_CHECKING:  # numpy and the links are imported when a link is read or written, so `kb --help` stays quick
    import numpy as np

    from .taught_links import Link

__all__ = ["InsightsStore", "RecentQuestion", "store_path", "BUSY_TIMEOUT"]

BUSY_TIMEOUT = 5.0  # seconds a write waits for another writer (another worker process)


RECENT_ROWS_PER_QUESTION = 5  # rows `recent_questions` reads per question it returns (repeats are counted once)


@dataclass(frozen=True)
class RecentQuestion:
    """A question as it was last asked (`InsightsStore.recent_questions`)."""

    text: str
    lang: str
    channel: str
    answered: bool
    top_entry: str | None
    asked_at: float  # Unix seconds, the last time
    times: int = 1  # how often, among the recent rows read

    def again(self) -> "RecentQuestion":
        return replace(self, times=self.times + 1)


def store_path(data_dir: Path) -> Path:
    """Where the insights database lives in a data directory (without `KB_DATABASE_URL`)."""
    return data_dir / "insights.sqlite"


def _database(postgres: bool) -> Any:
    """The class that talks to one kind of database (psycopg is imported only for PostgreSQL)."""
    if postgres:
        from .postgres_db import PostgresDatabase

        return PostgresDatabase
    return SqliteDatabase


class InsightsStore(HarvestedDrafts, IssueClaims):
    """The insights database: a SQLite file at a path, or PostgreSQL at a `postgresql://` URL; created or upgraded on open."""

    def __init__(self, where: Path | str, busy_timeout: float = BUSY_TIMEOUT):
        self.path: Path | None = None if is_database_url(where) else Path(where)
        self.location = redact(str(where)) if self.path is None else str(self.path)
        self._db: Any = None
        try:
            database = _database(self.path is None)
        except ImportError as exc:
            raise InsightsUnavailable(self.location, f"needs psycopg ({exc}): pip install 'kb[pg]'") from None
        try:
            self._db = database(self.path or str(where), busy_timeout)
            self._migrate()
            self._key = self._secret()
        except database.errors as exc:
            self.close()
            raise InsightsUnavailable(self.location, f"cannot be opened ({type(exc).__name__}: {exc})") from None
        except BaseException:
            self.close()
            raise

    @property
    def busy_timeout(self) -> float:
        """Seconds a write waits for a lock (SQLite) or a connection (PostgreSQL); a change applies to new connections."""
        return float(self._db.busy_timeout)

    @busy_timeout.setter
    def busy_timeout(self, seconds: float) -> None:
        self._db.busy_timeout = seconds

    @property
    def dialect(self) -> str:
        """`sqlite` or `postgres`."""
        return str(self._db.dialect)

    def unreachable(self, exc: BaseException) -> bool:
        """Whether `exc` says the database server cannot be reached (it may come back), not that a write was wrong."""
        return bool(self._db.unreachable(exc))

    def _migrate(self) -> None:
        with self._db.transaction(
            exclusive=True
        ) as db:  # one process upgrades; the others wait, then see the new version
            version = version_of(db)
            if version > SCHEMA_VERSION:
                raise InsightsUnavailable(
                    self.location, f"schema version {version} is newer than this kb's {SCHEMA_VERSION}"
                )
            upgrade(db, version)

    def _secret(self) -> bytes:
        with self._db.transaction() as db:
            db.execute("INSERT OR IGNORE INTO meta VALUES ('voter_key', ?)", (secrets.token_hex(32),))
        return bytes.fromhex(self._db.rows("SELECT value FROM meta WHERE key = 'voter_key'")[0][0])

    def schema_version(self) -> int:
        return int(self._db.rows("SELECT max(version) FROM schema_version")[0][0])

    def pseudonym(self, identity: str) -> str:
        """A keyed hash of a session id or Slack user: the same for the same identity, and not reversible."""
        return hmac.new(self._key, identity.encode("utf-8"), hashlib.sha256).hexdigest()[:32]

    # Writes

    def add_questions(self, questions: Iterable[Question]) -> int:
        rows = [
            (
                q.asked_at,
                q.text[:MAX_TEXT],
                q.lang,
                q.channel,
                q.kind,
                q.top_entry,
                q.top_score,
                int(q.answered),
                q.latency_ms,
                q.chat_workspace,
                q.chat_conversation,
                q.margin,
                q.previous and q.previous[:MAX_TEXT],
            )
            for q in questions
        ]
        self._write(
            (
                "INSERT INTO questions (asked_at, text, lang, channel, kind, top_entry, top_score, answered, "
                "latency_ms, chat_workspace, chat_conversation, margin, previous) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                rows,
            )
        )
        return len(rows)

    def add_votes(self, votes: Iterable[Vote]) -> int:
        """Record votes: one per voter per entry, so a later vote (for whichever question) replaces the earlier.

        The same vote written by two servers at once (the same session on two replicas) stays one row.
        """
        latest = {(v.voter, v.entry_id): v for v in votes}.values()
        rows = [
            (
                v.voted_at,
                v.entry_id,
                v.question[:MAX_TEXT],
                int(v.helpful),
                v.voter,
                v.channel,
                v.reason,
                v.comment and v.comment[:MAX_TEXT],
            )
            for v in latest
        ]
        self._write(
            ("DELETE FROM votes WHERE voter = ? AND entry_id = ?", [(v.voter, v.entry_id) for v in latest]),
            (
                "INSERT INTO votes (voted_at, entry_id, question, helpful, voter, channel, reason, comment) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (voter, entry_id, question) DO UPDATE SET "
                "voted_at = excluded.voted_at, helpful = excluded.helpful, channel = excluded.channel, "
                "reason = excluded.reason, comment = excluded.comment",
                rows,
            ),
        )
        return len(rows)

    def _write(self, *statements: tuple[str, Sequence[tuple[object, ...]]]) -> None:
        """Run each statement over its rows, all in one transaction."""
        if not any(rows for _, rows in statements):
            return
        with self._db.transaction() as db:
            for sql, rows in statements:
                if rows:
                    db.executemany(sql, rows)

    def dismiss_gap(self, texts: Iterable[str], at: float | None = None) -> None:
        """Hide the unanswered questions with these texts (case and spacing aside) from the gaps, for good."""
        when = time.time() if at is None else at
        self._write(
            (
                "INSERT INTO dismissed_gaps VALUES (?, ?) ON CONFLICT (text) DO UPDATE SET dismissed_at = excluded.dismissed_at",
                [(question_key(t), when) for t in texts],
            )
        )

    def restore_gap(self, texts: Iterable[str]) -> None:
        self._write(("DELETE FROM dismissed_gaps WHERE text = ?", [(question_key(t),) for t in texts]))

    def dismissed(self) -> set[str]:
        """The dismissed question texts, lower-cased and trimmed."""
        return {row[0] for row in self._db.rows("SELECT text FROM dismissed_gaps")}

    def prune(self, before: float) -> tuple[int, int]:
        """Delete questions and votes older than `before` (Unix seconds); (questions, votes) deleted.

        Links are kept, however old: they are what a maintainer taught the knowledge base."""
        with self._db.transaction() as db:
            questions = db.execute("DELETE FROM questions WHERE asked_at < ?", (before,)).rowcount
            votes = db.execute("DELETE FROM votes WHERE voted_at < ?", (before,)).rowcount
        return questions, votes

    # Reads, each for what happened since a time (Unix seconds)

    def totals(self, since: float) -> Totals:
        asked, answered = self._db.rows(
            "SELECT count(*), coalesce(sum(answered), 0) FROM questions WHERE asked_at >= ?", (since,)
        )[0]
        helpful, unhelpful = self._db.rows(
            "SELECT coalesce(sum(helpful), 0), coalesce(sum(1 - helpful), 0) FROM votes WHERE voted_at >= ?", (since,)
        )[0]
        return Totals(asked, answered, helpful, unhelpful)

    def unanswered(self, since: float, limit: int = 2000) -> list[AskedQuestion]:
        """Questions the FAQ had no confident answer for, most asked first (each at most `MAX_TEXT` characters)."""
        rows = self._db.rows(
            "SELECT min(substr(trim(text), 1, ?)), min(lang), count(*) AS n, min(asked_at), max(asked_at), "
            "group_concat(DISTINCT channel) FROM questions "
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
        found = self._db.rows(
            "SELECT entry_id, sum(1 - helpful) AS bad, sum(helpful) FROM votes WHERE voted_at >= ? "
            "GROUP BY entry_id HAVING sum(1 - helpful) > 0 ORDER BY bad DESC, entry_id LIMIT ?",
            (since, limit),
        )
        result = []
        for entry_id, bad, good in found:
            reasons = self._db.rows(
                "SELECT reason, count(*) AS n FROM votes WHERE entry_id = ? AND helpful = 0 AND voted_at >= ? "
                "AND reason IS NOT NULL GROUP BY reason ORDER BY n DESC, reason",
                (entry_id, since),
            )
            notes = self._db.rows(
                "SELECT question, reason, comment, voted_at, channel FROM votes WHERE entry_id = ? AND helpful = 0 "
                "AND voted_at >= ? ORDER BY voted_at DESC LIMIT ?",
                (entry_id, since, comments),
            )
            result.append(
                EntryVotes(entry_id, bad, good, tuple((r, n) for r, n in reasons), tuple(Comment(*n) for n in notes))
            )
        return result

    def entry_hits(self, since: float, limit: int = 50) -> list[EntryHits]:
        """Entries given as the answer, most often first, with their votes."""
        rows = self._db.rows(
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
        rows: list[tuple[str, str]] = self._db.rows(
            "SELECT top_entry, trim(text) FROM questions WHERE answered = 1 AND top_entry IS NOT NULL "
            "AND margin < ? AND asked_at >= ? ORDER BY asked_at DESC",
            (below, since),
        )
        return rows

    def asked_again(self, since: float, within: float) -> list[tuple[str, str, str, str, str]]:
        """(entry, its question, its language, the next question, its language): an answer followed within
        `within` seconds by another question in the same conversation or search box, newest first."""
        rows: list[tuple[str, str, str, str, str]] = self._db.rows(
            "SELECT min(a.top_entry), min(trim(a.text)), min(a.lang), trim(b.text), b.lang FROM questions AS b "
            "JOIN questions AS a ON a.text = b.previous AND a.channel = b.channel AND a.answered = 1 "
            "AND a.top_entry IS NOT NULL AND a.asked_at BETWEEN b.asked_at - ? AND b.asked_at "
            "WHERE b.previous IS NOT NULL AND b.asked_at >= ? GROUP BY b.id, b.text, b.lang, b.asked_at "
            "ORDER BY b.asked_at DESC",
            (within, since),
        )
        return rows

    def daily(self, since: float) -> list[DailyCount]:
        """Questions per day (UTC) by channel and language."""
        rows = self._db.rows(
            "SELECT date(asked_at, 'unixepoch') AS day, channel, lang, count(*) FROM questions WHERE asked_at >= ? "
            "GROUP BY day, channel, lang ORDER BY day, channel, lang",
            (since,),
        )
        return [DailyCount(*row) for row in rows]

    def recent_questions(self, limit: int = 200) -> list[RecentQuestion]:
        """The last `limit` questions asked, newest first, each text once (case and surrounding spaces aside),
        as asked the last time, with how often it was among the rows read (each at most `MAX_TEXT` characters)."""
        rows = self._db.rows(
            "SELECT substr(trim(text), 1, ?), lang, channel, answered, top_entry, asked_at FROM questions "
            "ORDER BY asked_at DESC, id DESC LIMIT ?",
            (MAX_TEXT, limit * RECENT_ROWS_PER_QUESTION),
        )
        found: dict[str, RecentQuestion] = {}
        for text, lang, channel, answered, top_entry, asked_at in rows:
            key = question_key(text)
            if key in found:
                found[key] = found[key].again()
            elif len(found) < limit:
                found[key] = RecentQuestion(text, lang, channel, bool(answered), top_entry, asked_at)
        return list(found.values())

    # Links: questions a maintainer tied to the entry that answers them, or marked not covered
    # (`kb.insights.taught_links`). Written one at a time, across processes and replicas alike (the
    # exclusive transaction), so a question never has two active links.

    _LINK_COLUMNS = "id, made_at, question, lang, entry_id, origin, url, model, vector, removed_at"

    def add_link(
        self,
        question: str,
        lang: str,
        entry: str | None,
        vector: np.ndarray,
        model: str,
        origin: str = "asked",
        url: str = "",
        at: float | None = None,
    ) -> Link:
        """Link `question` to `entry` (None: not covered by the FAQ), with its vector made by `model`.

        An active link of the same question (case and surrounding spaces aside) is removed in the
        same transaction: linking a question again moves it."""
        from ..learning.questions import ORIGINS
        from .taught_links import Link, vector_bytes, vector_of

        text = question.strip()[:MAX_TEXT].rstrip()
        if not text:
            raise ValueError("a link's question is empty")
        if lang not in LANGS:
            raise ValueError(f"unknown lang {lang!r} (expected one of {', '.join(LANGS)})")
        if origin not in ORIGINS:
            raise ValueError(f"unknown origin {origin!r} (expected one of {', '.join(ORIGINS)})")
        when = time.time() if at is None else at
        data = vector_bytes(vector)
        with self._db.transaction(exclusive=True) as db:
            self._unlink(db, text, when)
            link_id = db.execute(
                "INSERT INTO links (made_at, question, lang, entry_id, origin, url, model, vector) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
                (when, text, lang, entry, origin, url, model, data),
            ).fetchone()[0]
        return Link(int(link_id), when, text, lang, entry, origin, url, model, vector_of(data))

    @staticmethod
    def _unlink(db: Any, question: str, at: float, keep: int | None = None) -> None:
        """Remove the active links of `question` (by `question_key`), but `keep`, in the caller's transaction."""
        key = question_key(question)
        # Compared here, as `question_key` does (SQL's lower() may leave non-ASCII letters be), among the
        # few of the same length: lower() keeps a text's length but for one letter, İ, made i and U+0307.
        if "\u0307" in key:
            active = db.execute("SELECT id, question FROM links WHERE removed_at IS NULL").fetchall()
        else:
            active = db.execute(
                "SELECT id, question FROM links WHERE removed_at IS NULL AND length(question) = ?", (len(key),)
            ).fetchall()
        ids = [(at, link_id) for link_id, text in active if link_id != keep and question_key(text) == key]
        if ids:
            db.executemany("UPDATE links SET removed_at = ? WHERE id = ?", ids)

    def remove_link(self, link_id: int, at: float | None = None) -> Link | None:
        """Undo a link: it stops counting but its row is kept (`restore_link`); None when there is no such link."""
        when = time.time() if at is None else at
        with self._db.transaction(exclusive=True) as db:
            db.execute("UPDATE links SET removed_at = ? WHERE id = ? AND removed_at IS NULL", (when, link_id))
        return self.link(link_id)

    def restore_link(self, link_id: int) -> Link | None:
        """Make a removed link active again, removing any other active link of its question; None when there is none."""
        with self._db.transaction(exclusive=True) as db:
            row = db.execute("SELECT question, removed_at FROM links WHERE id = ?", (link_id,)).fetchone()
            if row is None:
                return None
            if row[1] is not None:
                self._unlink(db, row[0], time.time(), keep=link_id)
                db.execute("UPDATE links SET removed_at = NULL WHERE id = ?", (link_id,))
        return self.link(link_id)

    def link(self, link_id: int) -> Link | None:
        """One link, active or removed; None when there is none with this id."""
        found = self._links(f"SELECT {self._LINK_COLUMNS} FROM links WHERE id = ?", (link_id,))
        return found[0] if found else None

    def links(self, include_removed: bool = False) -> list[Link]:
        """The active links (and the removed ones too, with `include_removed`), oldest first."""
        where = "" if include_removed else " WHERE removed_at IS NULL"
        return self._links(f"SELECT {self._LINK_COLUMNS} FROM links{where} ORDER BY id")

    def _links(self, sql: str, params: Sequence[Any] = ()) -> list[Link]:
        from .taught_links import Link, vector_of

        return [
            Link(int(i), made_at, question, lang, entry, origin, url, model, vector_of(data), removed_at)
            for i, made_at, question, lang, entry, origin, url, model, data, removed_at in self._db.rows(sql, params)
        ]

    def linked_to_entries(self) -> set[str]:
        """The questions an active link ties to an entry ("Answered by…", a written answer saved for them), as
        `question_key` gives them: answered now, whatever the search said when they were asked."""
        rows = self._db.rows("SELECT question FROM links WHERE removed_at IS NULL AND entry_id IS NOT NULL")
        return {question_key(text) for (text,) in rows}

    def links_state(self) -> tuple[int, int, int]:
        """A fingerprint of the active links, cheap to read: (the highest id, how many are active, the sum of
        their ids). It changes whenever a link is added, removed or restored, so a server polls it and reloads
        the links only then."""
        highest, active, total = self._db.rows(
            "SELECT (SELECT coalesce(max(id), 0) FROM links), count(*), coalesce(sum(id), 0) FROM links "
            "WHERE removed_at IS NULL"
        )[0]
        return int(highest), int(active), int(total)

    def move_entries(self, moved: Mapping[str, str]) -> None:
        """Give the votes, answered questions and links of each old id (of an entry reworded upstream, `kb sync`)
        to its new id, in one transaction; a voter's vote already on the new id keeps that one."""
        rows = [(new, old) for old, new in moved.items()]
        self._write(
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
            self._db.rows(
                f"SELECT entry_id, count(*) FROM links WHERE removed_at IS NULL AND entry_id IN ({marks}) "
                "GROUP BY entry_id",
                wanted,
            )
        )
        votes = dict(
            self._db.rows(f"SELECT entry_id, count(*) FROM votes WHERE entry_id IN ({marks}) GROUP BY entry_id", wanted)
        )
        return {i: (int(links.get(i, 0)), int(votes.get(i, 0))) for i in wanted if links.get(i) or votes.get(i)}

    # Suggested answers: the GitHub bot's in `suggest` mode, one an issue or Discussion, until posted or dismissed.

    _SUGGESTED_COLUMNS = (
        "repo, number, kind, title, url, entry_id, confidence, comment, node_id, installation, suggested_at"
    )

    def suggest(self, answer: SuggestedAnswer) -> None:
        """Keep `answer` for its issue, in place of the one suggested for it before (the issue edited)."""
        kept = ("kind", "title", "url", "entry_id", "confidence", "comment", "node_id", "installation", "suggested_at")
        self._write(
            (
                f"INSERT INTO suggested_answers ({self._SUGGESTED_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
                "ON CONFLICT (repo, number) DO UPDATE SET " + ", ".join(f"{c} = excluded.{c}" for c in kept),
                [_suggested_row(answer)],
            )
        )

    def suggestions(self) -> list[SuggestedAnswer]:
        """The suggested answers waiting for a maintainer, newest first."""
        rows = self._db.rows(
            f"SELECT {self._SUGGESTED_COLUMNS} FROM suggested_answers ORDER BY suggested_at DESC, repo, number"
        )
        return [SuggestedAnswer(*row) for row in rows]

    def suggestion(self, repo: str, number: int) -> SuggestedAnswer | None:
        """The answer suggested for `repo`#`number`, or None."""
        rows = self._db.rows(
            f"SELECT {self._SUGGESTED_COLUMNS} FROM suggested_answers WHERE repo = ? AND number = ?", (repo, number)
        )
        return SuggestedAnswer(*rows[0]) if rows else None

    def drop_suggestion(self, repo: str, number: int) -> bool:
        """Forget the answer suggested for `repo`#`number` (posted, dismissed, or the issue closed); whether there was one."""
        with self._db.transaction() as db:
            gone = db.execute("DELETE FROM suggested_answers WHERE repo = ? AND number = ?", (repo, number)).rowcount
        return bool(gone)

    def claim_suggestion(self, repo: str, number: int) -> SuggestedAnswer | None:
        """The answer suggested for `repo`#`number`, taken off the list for the one caller that gets it (None for
        the others, in any process): what a Post or a Dismiss acts on, once. `restore_suggestion` puts it back."""
        found = self.suggestion(repo, number)
        if found is None:
            return None
        with self._db.transaction() as db:
            taken = db.execute(
                "DELETE FROM suggested_answers WHERE repo = ? AND number = ? AND suggested_at = ?",
                (repo, number, found.suggested_at),
            ).rowcount
        return found if taken == 1 else None

    def restore_suggestion(self, answer: SuggestedAnswer) -> None:
        """A claimed answer put back (it could not be posted), unless a newer one was suggested for its issue since."""
        self._write(
            (
                f"INSERT INTO suggested_answers ({self._SUGGESTED_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
                "ON CONFLICT (repo, number) DO NOTHING",
                [_suggested_row(answer)],
            )
        )

    def count(self, table: str) -> int:
        """Rows in `questions` or `votes` (for tests and benchmarks)."""
        if table not in ("questions", "votes"):
            raise ValueError(f"no table {table!r}; expected questions or votes")
        return int(self._db.rows(f"SELECT count(*) FROM {table}")[0][0])

    def close(self) -> None:
        if self._db is not None:
            self._db.close()


def _suggested_row(answer: SuggestedAnswer) -> tuple[Any, ...]:
    """A suggested answer's values, in the order of `_SUGGESTED_COLUMNS`."""
    return (
        answer.repo,
        answer.number,
        answer.kind,
        answer.title[:MAX_TEXT],
        answer.url,
        answer.entry_id,
        answer.confidence,
        answer.comment,
        answer.node_id,
        answer.installation,
        answer.suggested_at,
    )
