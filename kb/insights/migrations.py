"""The insights database's schema: numbered migrations, from an empty database to the current version.

Each migration takes the file from the version before it to its own number (1-based); its
statements are separated by ";\n". `upgrade` runs inside the caller's transaction, with the
update of the version table, so a file is upgraded whole or not at all. A migration adds
(tables, columns, indexes) or renames a column: rows written by an older version are kept. The same
list builds SQLite and PostgreSQL: the statements are SQLite's, translated for PostgreSQL
(`kb.insights.sql.to_postgres`) by the connection they run on.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .part import Transaction

__all__ = ["MIGRATIONS", "SCHEMA_VERSION", "version_of", "upgrade"]

MIGRATIONS: tuple[str, ...] = (
    # 1: questions and votes
    """
    CREATE TABLE questions (
        id INTEGER PRIMARY KEY,
        asked_at REAL NOT NULL,
        text TEXT NOT NULL,
        lang TEXT NOT NULL,
        channel TEXT NOT NULL,
        top_entry TEXT,
        top_score REAL,
        answered INTEGER NOT NULL,
        latency_ms REAL NOT NULL
    );
    CREATE INDEX questions_asked_at ON questions (asked_at);
    CREATE TABLE votes (
        id INTEGER PRIMARY KEY,
        voted_at REAL NOT NULL,
        entry_id TEXT NOT NULL,
        question TEXT NOT NULL,
        helpful INTEGER NOT NULL,
        voter TEXT NOT NULL,
        channel TEXT NOT NULL,
        UNIQUE (voter, entry_id, question)
    );
    CREATE INDEX votes_voted_at ON votes (voted_at)
    """,
    # 2: search or chat; Slack team and channel (when KB_INSIGHTS_SLACK_IDS is on); why a vote
    # was cast; the key that turns session ids into pseudonyms
    """
    ALTER TABLE questions ADD COLUMN kind TEXT NOT NULL DEFAULT 'search';
    ALTER TABLE questions ADD COLUMN slack_team TEXT;
    ALTER TABLE questions ADD COLUMN slack_channel TEXT;
    ALTER TABLE votes ADD COLUMN reason TEXT;
    ALTER TABLE votes ADD COLUMN comment TEXT;
    CREATE INDEX questions_unanswered ON questions (answered, asked_at);
    CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)
    """,
    # 3: how far the best entry led the second (a low margin is a doubtful answer); the question
    # asked just before in the same conversation or search box; gaps a maintainer dismissed
    """
    ALTER TABLE questions ADD COLUMN margin REAL;
    ALTER TABLE questions ADD COLUMN previous TEXT;
    CREATE TABLE dismissed_gaps (text TEXT PRIMARY KEY, dismissed_at REAL NOT NULL)
    """,
    # 4: questions a maintainer linked to the entry that answers them (entry_id NULL: not covered by
    # the FAQ), with the question's vector (float32, little-endian) and the model that made it; a
    # link undone keeps its row, with the time it was removed. links_active finds the active links
    # without reading their vectors: those of a question's length (a question linked again), their ids
    # (the links' fingerprint)
    """
    CREATE TABLE links (
        id INTEGER PRIMARY KEY,
        made_at REAL NOT NULL,
        question TEXT NOT NULL,
        lang TEXT NOT NULL,
        entry_id TEXT,
        origin TEXT NOT NULL DEFAULT 'asked',
        url TEXT NOT NULL DEFAULT '',
        model TEXT NOT NULL,
        vector BLOB NOT NULL,
        removed_at REAL
    );
    CREATE INDEX links_made_at ON links (made_at);
    CREATE INDEX links_active ON links (removed_at, length(question))
    """,
    # 5: the team chat's ids (KB_INSIGHTS_CHAT_IDS) are any chat's, not only Slack's: its workspace
    # (Slack team, Feishu tenant, DingTalk organisation) and its conversation (channel, chat, group)
    """
    ALTER TABLE questions RENAME COLUMN slack_team TO chat_workspace;
    ALTER TABLE questions RENAME COLUMN slack_channel TO chat_conversation
    """,
    # 6: the GitHub bot's suggested answers (suggest mode): one an issue or Discussion, until a maintainer
    # posts or dismisses it, or the issue is closed
    """
    CREATE TABLE suggested_answers (
        repo TEXT NOT NULL,
        number INTEGER NOT NULL,
        kind TEXT NOT NULL,
        title TEXT NOT NULL,
        url TEXT NOT NULL,
        node_id TEXT NOT NULL,
        installation INTEGER NOT NULL,
        entry_id TEXT NOT NULL,
        confidence REAL NOT NULL,
        comment TEXT NOT NULL,
        suggested_at REAL NOT NULL,
        PRIMARY KEY (repo, number)
    )
    """,
    # 7: drafts harvested from the tracker (`kb harvest`): a closed issue or answered Discussion and its
    # maintainer's answer, until a maintainer accepts (as a written answer, or as alternates of an entry),
    # dismisses it, or it expires; accepted and dismissed ones are kept so a harvest does not offer them again
    """
    CREATE TABLE harvested_drafts (
        repo TEXT NOT NULL,
        number INTEGER NOT NULL,
        kind TEXT NOT NULL,
        url TEXT NOT NULL,
        question TEXT NOT NULL,
        answer TEXT NOT NULL,
        signals TEXT NOT NULL,
        alternates TEXT NOT NULL,
        asked INTEGER NOT NULL,
        entry_id TEXT NOT NULL DEFAULT '',
        answer_author TEXT NOT NULL DEFAULT '',
        closed_at REAL,
        harvested_at REAL NOT NULL,
        status TEXT NOT NULL DEFAULT 'new',
        decided_at REAL,
        written_id TEXT NOT NULL DEFAULT '',
        PRIMARY KEY (repo, number)
    );
    CREATE INDEX harvested_drafts_status ON harvested_drafts (status, harvested_at)
    """,
    # 8: which server process is writing an issue's bot comment (GitHub bot), until its lease ends, so that
    # replicas sharing the database write one comment per issue
    """
    CREATE TABLE issue_claims (
        repo TEXT NOT NULL,
        number INTEGER NOT NULL,
        holder TEXT NOT NULL,
        until REAL NOT NULL,
        PRIMARY KEY (repo, number)
    )
    """,
    # 9: the answers waiting for a maintainer belong to any channel: one a thread of a channel, the channel's own ids
    # in `platform` (JSON the library keeps and never reads). The suggested answers of version 6 are copied, each
    # under the channel `github` and its thread `owner/name#number`, with its repository, number, kind, node id and
    # installation as that channel's ids
    """
    CREATE TABLE pending_answers (
        channel TEXT NOT NULL,
        thread TEXT NOT NULL,
        question TEXT NOT NULL,
        answer TEXT NOT NULL,
        entry_id TEXT NOT NULL,
        confidence REAL NOT NULL,
        url TEXT NOT NULL DEFAULT '',
        platform TEXT NOT NULL DEFAULT '{}',
        drafted_at REAL NOT NULL,
        state TEXT NOT NULL DEFAULT 'waiting',
        claimed_at REAL,
        PRIMARY KEY (channel, thread)
    );
    CREATE INDEX pending_answers_waiting ON pending_answers (channel, state, drafted_at);
    INSERT INTO pending_answers (channel, thread, question, answer, entry_id, confidence, url, platform, drafted_at)
    SELECT 'github', repo || '#' || number, title, comment, entry_id, confidence, url,
        json_object('repo', repo, 'number', number, 'kind', kind, 'node_id', node_id, 'installation', installation),
        suggested_at
    FROM suggested_answers;
    DROP TABLE suggested_answers
    """,
    # 10: the GitHub webhook's deliveries seen, so that the processes sharing the database act once on each; the
    # closes acknowledged and waiting for their harvest, taken by one process at a time (deliveries.py)
    """
    CREATE TABLE github_deliveries (key TEXT PRIMARY KEY, seen_at REAL NOT NULL);
    CREATE INDEX github_deliveries_seen_at ON github_deliveries (seen_at);
    CREATE TABLE close_queue (
        repo TEXT NOT NULL,
        number INTEGER NOT NULL,
        issue TEXT NOT NULL,
        queued_at REAL NOT NULL,
        tries INTEGER NOT NULL DEFAULT 0,
        due REAL NOT NULL,
        holder TEXT NOT NULL DEFAULT '',
        until REAL NOT NULL DEFAULT 0,
        last_error TEXT NOT NULL DEFAULT '',
        PRIMARY KEY (repo, number)
    );
    CREATE INDEX close_queue_due ON close_queue (due)
    """,
    # 11: claims on any channel's threads, keyed as the pending answers are, by channel and thread (claims.py). The
    # claims on issues of version 8 are copied, each under the channel `github` and its thread `owner/name#number`
    """
    CREATE TABLE claims (
        channel TEXT NOT NULL,
        thread TEXT NOT NULL,
        holder TEXT NOT NULL,
        until REAL NOT NULL,
        PRIMARY KEY (channel, thread)
    );
    INSERT INTO claims (channel, thread, holder, until)
    SELECT 'github', repo || '#' || number, holder, until FROM issue_claims;
    DROP TABLE issue_claims
    """,
)
SCHEMA_VERSION = len(MIGRATIONS)


def version_of(db: Transaction) -> int:
    """The file's schema version (0 for a new file)."""
    db.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)")
    return int(db.execute("SELECT max(version) FROM schema_version").fetchone()[0] or 0)


def upgrade(db: Transaction, version: int) -> None:
    """Apply the migrations after `version`, in the caller's transaction."""
    for number in range(version + 1, SCHEMA_VERSION + 1):
        for statement in MIGRATIONS[number - 1].split(";\n"):
            db.execute(statement)
        db.execute("DELETE FROM schema_version")
        db.execute("INSERT INTO schema_version VALUES (?)", (number,))
