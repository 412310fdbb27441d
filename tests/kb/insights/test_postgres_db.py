"""The insights store on a real PostgreSQL (tests/support/postgres.py): the same migrations as SQLite, upgrades that keep
rows, several servers opening and writing one database at once, and errors that name the database."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from kb.errors import SettingsError
from kb.insights import SCHEMA_VERSION, InsightsStore, InsightsUnavailable, Question, Vote
from kb.insights.migrations import MIGRATIONS
from kb.insights.sql import redact, to_postgres
from kb.settings import Settings
from tests.support.insights import assert_upgraded_store_counts_old_rows_and_takes_new_fields

T0 = 1_750_000_000.123456  # a fraction of a second that float4 would lose


def question(text: str, at: float = T0, **more: Any) -> Question:
    return Question(
        text=text,
        lang="en",
        channel="web",
        answered=False,
        top_entry=None,
        top_score=None,
        latency_ms=1.5,
        asked_at=at,
        **more,
    )


def columns(postgres: Any, url: str, table: str) -> list[tuple[str, str]]:
    return [
        tuple(row)
        for row in postgres.execute(  # type: ignore[misc]
            f"SELECT column_name, data_type FROM information_schema.columns WHERE table_name = '{table}' "
            "ORDER BY ordinal_position",
            url.rpartition("/")[2],
        )
    ]


def test_a_new_database_has_the_current_schema_with_8_byte_times(postgres: Any, database_url: str) -> None:
    store = InsightsStore(database_url)
    assert store.dialect == "postgres" and store.schema_version() == SCHEMA_VERSION == 11
    assert store.path is None and store.location == database_url
    assert columns(postgres, database_url, "questions") == [
        ("id", "bigint"),
        ("asked_at", "double precision"),
        ("text", "text"),
        ("lang", "text"),
        ("channel", "text"),
        ("top_entry", "text"),
        ("top_score", "double precision"),
        ("answered", "integer"),
        ("latency_ms", "double precision"),
        ("kind", "text"),
        ("chat_workspace", "text"),
        ("chat_conversation", "text"),
        ("margin", "double precision"),
        ("previous", "text"),
    ]
    assert [c for c, _ in columns(postgres, database_url, "votes")] == [
        "id",
        "voted_at",
        "entry_id",
        "question",
        "helpful",
        "voter",
        "channel",
        "reason",
        "comment",
    ]
    harvested = dict(columns(postgres, database_url, "harvested_drafts"))
    assert (
        harvested["closed_at"] == harvested["harvested_at"] == "double precision" and harvested["number"] == "integer"
    )
    pending = dict(columns(postgres, database_url, "pending_answers"))
    assert pending["drafted_at"] == pending["claimed_at"] == pending["confidence"] == "double precision"
    assert pending["platform"] == pending["thread"] == "text"
    store.questions.add([question("how do I resume training")])
    [(asked_at,)] = postgres.execute("SELECT asked_at FROM questions", database_url.rpartition("/")[2])
    assert asked_at == T0
    assert store.questions.unanswered(0)[0].first_asked == T0
    store.close()


def test_a_version_1_database_is_upgraded_keeping_every_row(postgres: Any, database_url: str) -> None:
    name = database_url.rpartition("/")[2]
    for statement in MIGRATIONS[0].split(";\n"):  # the first release's schema, as the store would have made it
        postgres.execute(to_postgres(statement), name)
    postgres.execute(
        "CREATE TABLE schema_version (version INTEGER NOT NULL); INSERT INTO schema_version VALUES (1);"
        "INSERT INTO questions (asked_at, text, lang, channel, top_entry, top_score, answered, latency_ms) "
        "VALUES (1750000000, '如何续训', 'zh', 'web', NULL, NULL, 0, 9.5), "
        "(1750000100, 'OOM', 'en', 'slack', 'slime-1', 0.41, 1, 11.0);"
        "INSERT INTO votes (voted_at, entry_id, question, helpful, voter, channel) "
        "VALUES (1750000200, 'slime-1', 'OOM', 0, 'voter-a', 'web')",
        name,
    )
    store = InsightsStore(database_url)
    assert store.schema_version() == 11
    assert postgres.execute("SELECT id, text, kind, chat_workspace FROM questions ORDER BY id", name) == [
        (1, "如何续训", "search", None),
        (2, "OOM", "search", None),
    ]
    assert_upgraded_store_counts_old_rows_and_takes_new_fields(store)
    store.close()
    InsightsStore(database_url).close()  # opening again changes nothing
    assert postgres.execute("SELECT version FROM schema_version", name) == [(11,)]


def test_a_database_from_a_newer_version_is_refused_untouched(postgres: Any, database_url: str) -> None:
    name = database_url.rpartition("/")[2]
    postgres.execute(
        "CREATE TABLE schema_version (version INTEGER NOT NULL); INSERT INTO schema_version VALUES (12)", name
    )
    with pytest.raises(InsightsUnavailable, match=r"schema version 12 is newer than this kb's 11"):
        InsightsStore(database_url)
    assert postgres.execute("SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'", name) == [
        ("schema_version",)
    ]


def test_servers_opening_a_new_database_at_once_build_it_once_and_share_one_key(database_url: str) -> None:
    stores: list[InsightsStore] = []
    errors: list[BaseException] = []
    start = threading.Barrier(6)

    def open_one() -> None:
        start.wait()
        try:
            stores.append(InsightsStore(database_url))
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=open_one) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert len({s.pseudonym("session:one") for s in stores}) == 1  # a session signed by one is valid on all
    # The same vote from two servers at once stays one vote.
    vote = Vote("slime-1", True, "OOM", stores[0].pseudonym("session:one"), "web")
    writers = [threading.Thread(target=s.votes.add, args=([vote],)) for s in stores]
    for t in writers:
        t.start()
    for t in writers:
        t.join()
    assert stores[0].count("votes") == 1 and stores[0].totals(0).helpful == 1
    for s in stores:
        s.close()


def test_an_unreachable_server_is_named_without_its_password(postgres: Any) -> None:
    url = f"postgresql://kb:s3cret@127.0.0.1:{postgres.port + 1}/kb"  # nothing listens there
    with pytest.raises(InsightsUnavailable) as caught:
        InsightsStore(url, busy_timeout=1)
    assert "postgresql://kb:***@127.0.0.1" in str(caught.value) and "s3cret" not in str(caught.value)
    assert "cannot be opened" in str(caught.value)
    assert redact("postgresql://u@h/db") == "postgresql://u@h/db"


def test_kb_database_url_must_be_a_postgresql_url() -> None:
    assert Settings.from_env({"KB_DATABASE_URL": "postgresql://u@h/db"}).database_url == "postgresql://u@h/db"
    assert Settings.from_env({}).database_url == ""
    with pytest.raises(SettingsError, match=r"KB_DATABASE_URL.*mysql://u:\*\*\*@h/db.*postgresql:// URL"):
        Settings.from_env({"KB_DATABASE_URL": "mysql://u:pw@h/db"})


def test_without_postgresql_the_tests_fail_in_ci_and_are_skipped_elsewhere(monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.support import postgres

    monkeypatch.setattr(postgres, "find_binaries", lambda: None)
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match=r"PostgreSQL is not installed .*apt-get install postgresql"):
        postgres.PostgresServer()
    monkeypatch.delenv("CI")
    with pytest.raises(pytest.skip.Exception, match=r"PostgreSQL is not installed"):
        postgres.PostgresServer()
