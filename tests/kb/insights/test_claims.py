"""Claims on a channel's threads in the insights store (SQLite and PostgreSQL): one holder at a time per thread,
across connections as across processes; a lease that ends frees the thread; a holder releases and renews only its
own; a database from before the claims were keyed by channel and thread keeps every claim on an issue."""

from __future__ import annotations

import sqlite3
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Iterator

import pytest

from kb.insights import SCHEMA_VERSION, InsightsStore, store_path
from kb.insights.migrations import MIGRATIONS
from kb.insights.sql import to_postgres


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def where(request: pytest.FixtureRequest, tmp_path: Path) -> str | Path:
    return request.getfixturevalue("database_url") if request.param == "postgres" else store_path(tmp_path)


@pytest.fixture
def store(where: str | Path) -> Iterator[InsightsStore]:
    opened = InsightsStore(where)
    yield opened
    opened.close()


def test_one_holder_at_a_time_until_it_releases(store: InsightsStore) -> None:
    assert store.claims.claim("tracker", "owner/repo#7", "first", until=130.0, now=100.0)
    assert not store.claims.claim("tracker", "owner/repo#7", "second", until=131.0, now=101.0)
    assert store.claims.claim("tracker", "owner/repo#8", "second", until=131.0, now=101.0)  # another thread is free
    assert store.claims.claim("chat", "owner/repo#7", "second", until=131.0, now=101.0)  # so is another channel's
    store.claims.release("tracker", "owner/repo#7", "second")  # not its claim: left alone
    assert not store.claims.claim("tracker", "owner/repo#7", "third", until=132.0, now=102.0)
    store.claims.release("tracker", "owner/repo#7", "first")
    assert store.claims.claim("tracker", "owner/repo#7", "third", until=132.0, now=102.0)


def test_a_thread_is_named_as_the_channel_gives_it(store: InsightsStore) -> None:
    """The store folds no case: a channel whose names ignore it folds them first (the GitHub bot does)."""
    assert store.claims.claim("chat", "C024BE91L", "first", until=130.0, now=100.0)
    assert store.claims.claim("chat", "c024be91l", "second", until=130.0, now=100.0)


def test_a_lease_that_ends_frees_the_thread_and_a_renewed_one_keeps_it(store: InsightsStore) -> None:
    assert store.claims.claim("tracker", "owner/repo#7", "gone", until=130.0, now=100.0)  # its process dies holding it
    assert not store.claims.claim("tracker", "owner/repo#7", "next", until=159.0, now=129.0)
    assert store.claims.claim("tracker", "owner/repo#7", "next", until=161.0, now=131.0)
    assert not store.claims.renew("tracker", "owner/repo#7", "gone", until=200.0)  # the lease was lost
    assert store.claims.renew("tracker", "owner/repo#7", "next", until=200.0)
    assert not store.claims.claim("tracker", "owner/repo#7", "other", until=230.0, now=190.0)


def test_of_many_connections_claiming_at_once_one_holds_the_thread(where: str | Path) -> None:
    stores = [InsightsStore(where) for _ in range(6)]
    try:
        with ThreadPoolExecutor(max_workers=6) as pool:
            taken = list(
                pool.map(
                    lambda n: stores[n].claims.claim("tracker", "owner/repo#9", f"holder-{n}", 130.0, 100.0), range(6)
                )
            )
    finally:
        for store in stores:
            store.close()
    assert sorted(taken) == [False] * 5 + [True]


# The claims on issues as version 10 kept them (migration 8's table, written by the GitHub bot, the name lower-cased):
# one held until 200, one whose lease ended at 120.
V10_CLAIMS = "INSERT INTO issue_claims (repo, number, holder, until) VALUES ('owner/repo', 7, 'held', 200.0), " + (
    "('owner/repo', 8, 'lapsed', 120.0)"
)


@pytest.fixture
def version_10(request: pytest.FixtureRequest, where: str | Path) -> str | Path:
    """A database as the release before the claims were keyed by channel and thread wrote it (migration 8's
    `issue_claims` among its tables), two claims in it."""
    schema = [statement for migration in MIGRATIONS[:10] for statement in migration.split(";\n")]
    schema += ["CREATE TABLE schema_version (version INTEGER NOT NULL)", "INSERT INTO schema_version VALUES (10)"]
    if isinstance(where, Path):
        with sqlite3.connect(where) as db:
            db.executescript(";\n".join([*schema, V10_CLAIMS]))
        return where
    postgres: Any = request.getfixturevalue("postgres")
    name = where.rpartition("/")[2]
    for statement in schema:
        postgres.execute(to_postgres(statement), name)
    postgres.execute(V10_CLAIMS, name)
    return where


def test_an_upgraded_database_keeps_each_claim_on_an_issue_as_the_github_channels(version_10: str | Path) -> None:
    store = InsightsStore(version_10)
    try:
        assert store.schema_version() == SCHEMA_VERSION == 11
        assert sorted(store.db.rows("SELECT channel, thread, holder, until FROM claims")) == [
            ("github", "owner/repo#7", "held", 200.0),
            ("github", "owner/repo#8", "lapsed", 120.0),
        ]
        assert not store.claims.claim("github", "owner/repo#7", "another", until=230.0, now=150.0)  # still held
        assert store.claims.renew("github", "owner/repo#7", "held", until=260.0)  # by its holder, who renews it
        assert store.claims.claim("github", "owner/repo#8", "another", until=230.0, now=150.0)  # its lease had ended
        store.claims.release("github", "owner/repo#7", "held")
        assert store.claims.claim("github", "owner/repo#7", "another", until=230.0, now=150.0)
        with pytest.raises(store.database_errors):
            store.db.rows("SELECT count(*) FROM issue_claims")  # the old table is gone
    finally:
        store.close()
