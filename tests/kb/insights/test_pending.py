"""The answers waiting for a maintainer in the insights store, on a SQLite file and on a real PostgreSQL
(tests/support/postgres.py): one a thread of a channel, replaced when drafted again, read newest first, claimed once,
settled or released, dropped; the channel's ids kept as given; a version 8 database's suggested answers upgraded
into them, every row kept."""

from __future__ import annotations

import sqlite3
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Iterator

import pytest

from kb.insights import SCHEMA_VERSION, InsightsStore, PendingAnswer, store_path
from kb.insights.migrations import MIGRATIONS
from kb.insights.sql import to_postgres

T0 = 1_750_000_000.123456  # a fraction of a second that float4 would lose


def pending(number: int, at: float, **more: Any) -> PendingAnswer:
    values: dict[str, Any] = {
        "channel": "tracker",
        "thread": f"Owner/Repo#{number}",
        "question": f"Issue {number}: training stopped",
        "answer": "<!-- kb-faq-bot -->\nThe FAQ answers this: **如何续训？**",
        "entry_id": "slime-b0ab398d",
        "confidence": 0.93,
        "url": f"https://tracker.example.com/Owner/Repo/{number}",
        "platform": {"node": f"I_{number}", "installation": 42, "labels": ["训练", "bug"]},
        "drafted_at": at,
    }
    return PendingAnswer(**(values | more))


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def where(request: pytest.FixtureRequest, tmp_path: Path) -> Path | str:
    return request.getfixturevalue("database_url") if request.param == "postgres" else store_path(tmp_path)


@pytest.fixture
def store(where: Path | str) -> Iterator[InsightsStore]:
    opened = InsightsStore(where)
    yield opened
    opened.close()


def test_one_answer_a_thread_replaced_when_drafted_again_and_dropped(store: InsightsStore) -> None:
    first, second = pending(1, T0), pending(2, T0 + 60)
    store.pending.keep(first)
    store.pending.keep(second)
    assert store.pending.waiting("tracker") == [second, first]  # newest first, every field as kept (8-byte times)
    edited = pending(1, T0 + 120, question="Issue 1, edited", entry_id="roll-1", confidence=0.91, platform={})
    store.pending.keep(edited)
    assert store.pending.waiting("tracker") == [edited, second]
    assert store.pending.get("tracker", "Owner/Repo#1") == edited
    assert store.pending.get("tracker", "Owner/Repo#3") is None
    assert store.pending.drop("tracker", "Owner/Repo#1") is True
    assert store.pending.drop("tracker", "Owner/Repo#1") is False
    assert store.pending.waiting("tracker") == [second]


def test_each_channel_has_its_own_threads(store: InsightsStore) -> None:
    ours, theirs = pending(1, T0), pending(1, T0 + 1, channel="chat", platform={"team": "T1"})
    store.pending.keep(ours)
    store.pending.keep(theirs)  # the same thread name in another channel: a second answer
    assert store.pending.waiting("tracker") == [ours] and store.pending.waiting("chat") == [theirs]
    assert store.pending.drop("chat", "Owner/Repo#1") and store.pending.waiting("tracker") == [ours]


def test_pending_answers_outlive_the_connection(store: InsightsStore, where: Path | str) -> None:
    kept = pending(7, T0, platform={"kind": "discussion", "node": "D_7", "installation": 0, "note": "“引号”"})
    store.pending.keep(kept)
    again = InsightsStore(where)
    try:
        assert again.pending.waiting("tracker") == [kept]
        assert again.pending.waiting("tracker")[0].platform == kept.platform  # handed back as given
    finally:
        again.close()


def test_an_answer_is_claimed_once_across_connections_then_released_or_settled(
    store: InsightsStore, where: Path | str
) -> None:
    kept = pending(8, T0)
    store.pending.keep(kept)
    others = [InsightsStore(where) for _ in range(6)]  # as six workers, each with its own connections
    try:
        with ThreadPoolExecutor(max_workers=6) as pool:
            claimed = list(pool.map(lambda other: other.pending.claim("tracker", "Owner/Repo#8"), others))
        [taken] = [c for c in claimed if c is not None]
        assert (taken.state, taken.drafted_at) == ("claimed", T0) and taken.claimed_at is not None
        assert store.pending.waiting("tracker") == []  # off the list while a Post or Dismiss acts on it
        assert store.pending.claim("tracker", "Owner/Repo#8") is None
        store.pending.release(taken)  # the post failed: back on the list
        assert store.pending.waiting("tracker") == [kept]
        taken = store.pending.claim("tracker", "Owner/Repo#8")
        assert taken is not None
        store.pending.settle(taken)  # posted: gone
        assert store.pending.waiting("tracker") == [] and store.pending.get("tracker", "Owner/Repo#8") is None
    finally:
        for other in others:
            other.close()


def test_a_thread_drafted_again_while_claimed_keeps_the_newer_answer(store: InsightsStore) -> None:
    store.pending.keep(pending(9, T0))
    claimed = store.pending.claim("tracker", "Owner/Repo#9")
    assert claimed is not None
    newer = pending(9, T0 + 60, question="Issue 9, edited")
    store.pending.keep(newer)  # the thread was edited while the claimed one was being posted
    store.pending.release(claimed)
    assert store.pending.waiting("tracker") == [newer]
    store.pending.settle(claimed)
    assert store.pending.waiting("tracker") == [newer]


def test_a_claim_past_its_lease_puts_the_answer_back_on_the_list(
    store: InsightsStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A Post whose process died before it settled: once the lease is over the answer is listed and claimed again."""
    import time

    from kb.insights import pending as pending_module

    kept = pending(10, T0)
    store.pending.keep(kept)
    assert store.pending.claim("tracker", "Owner/Repo#10") is not None
    assert store.pending.waiting("tracker") == [] and store.pending.claim("tracker", "Owner/Repo#10") is None
    monkeypatch.setattr(pending_module, "CLAIM_LEASE", 0.01)
    time.sleep(0.05)
    [listed] = store.pending.waiting("tracker")
    assert (listed.thread, listed.state) == ("Owner/Repo#10", "claimed")
    again = store.pending.claim("tracker", "Owner/Repo#10")
    assert again is not None and again.claimed_at is not None and again.claimed_at > (listed.claimed_at or 0)
    monkeypatch.setattr(pending_module, "CLAIM_LEASE", 120.0)
    assert store.pending.claim("tracker", "Owner/Repo#10") is None and store.pending.waiting("tracker") == []
    store.pending.settle(listed)  # the first claim, settled late, leaves the second claimer's answer alone
    assert store.pending.get("tracker", "Owner/Repo#10") == again
    store.pending.settle(again)
    assert store.pending.get("tracker", "Owner/Repo#10") is None


# Two suggested answers as version 8 kept them: an issue through an App installation, a Discussion without one.
V8_ROWS = (
    "INSERT INTO suggested_answers (repo, number, kind, title, url, node_id, installation, entry_id, confidence, "
    "comment, suggested_at) VALUES "
    "('Owner/Repo', 12, 'issue', '训练中断后如何续训？', 'https://github.com/Owner/Repo/issues/12', 'I_12', 42, "
    "'slime-b0ab398d', 0.93, 'The FAQ answers this: **如何续训？** it''s 100%', 1750000000.123456), "
    "('Owner/Repo', 3, 'discussion', 'OOM', 'https://github.com/Owner/Repo/discussions/3', 'D_3', 0, "
    "'roll-1', 0.81, 'Try a smaller batch.', 1750000060.5)"
)
UPGRADED = [
    PendingAnswer(
        "github",
        "Owner/Repo#3",
        "OOM",
        "Try a smaller batch.",
        "roll-1",
        0.81,
        "https://github.com/Owner/Repo/discussions/3",
        {"repo": "Owner/Repo", "number": 3, "kind": "discussion", "node_id": "D_3", "installation": 0},
        1750000060.5,
    ),
    PendingAnswer(
        "github",
        "Owner/Repo#12",
        "训练中断后如何续训？",
        "The FAQ answers this: **如何续训？** it's 100%",
        "slime-b0ab398d",
        0.93,
        "https://github.com/Owner/Repo/issues/12",
        {"repo": "Owner/Repo", "number": 12, "kind": "issue", "node_id": "I_12", "installation": 42},
        1750000000.123456,
    ),
]


def test_a_version_8_sqlite_file_keeps_every_suggested_answer_as_a_pending_answer(tmp_path: Path) -> None:
    path = store_path(tmp_path)
    with sqlite3.connect(path) as db:  # a file as the release before pending answers wrote it
        db.executescript(
            ";\n".join(MIGRATIONS[:8]) + ";\nCREATE TABLE schema_version (version INTEGER NOT NULL);"
            f"INSERT INTO schema_version VALUES (8);{V8_ROWS};"
        )
    store = InsightsStore(path)
    try:
        assert store.schema_version() == SCHEMA_VERSION == 11
        assert store.pending.waiting("github") == UPGRADED
    finally:
        store.close()
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT name FROM sqlite_master WHERE name = 'suggested_answers'").fetchall() == []


@pytest.mark.postgres
def test_a_version_8_postgresql_database_keeps_every_suggested_answer_as_a_pending_answer(
    postgres: Any, database_url: str
) -> None:
    name = database_url.rpartition("/")[2]
    for migration in MIGRATIONS[:8]:  # the schema as the release before pending answers made it
        for statement in migration.split(";\n"):
            postgres.execute(to_postgres(statement), name)
    postgres.execute(
        "CREATE TABLE schema_version (version INTEGER NOT NULL); INSERT INTO schema_version VALUES (8)", name
    )
    postgres.execute(V8_ROWS, name)
    store = InsightsStore(database_url)
    try:
        assert store.schema_version() == 11
        assert store.pending.waiting("github") == UPGRADED
    finally:
        store.close()
