"""The GitHub bot's suggested answers in the insights store, on a SQLite file and on a real PostgreSQL
(tests/support/postgres.py): one an issue, replaced when suggested again, read newest first, dropped."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator

import pytest

from kb.insights import InsightsStore, SuggestedAnswer, store_path

T0 = 1_750_000_000.123456  # a fraction of a second that float4 would lose


def suggestion(number: int, at: float, **more: Any) -> SuggestedAnswer:
    values: dict[str, Any] = {
        "repo": "Owner/Repo",
        "number": number,
        "kind": "issue",
        "title": f"Issue {number}: training stopped",
        "url": f"https://github.com/Owner/Repo/issues/{number}",
        "entry_id": "slime-b0ab398d",
        "confidence": 0.93,
        "comment": "<!-- kb-faq-bot -->\nThe FAQ answers this: **如何续训？**",
        "node_id": f"I_{number}",
        "installation": 42,
        "suggested_at": at,
    }
    return SuggestedAnswer(**(values | more))


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[InsightsStore]:
    where = request.getfixturevalue("database_url") if request.param == "postgres" else store_path(tmp_path)
    opened = InsightsStore(where)
    yield opened
    opened.close()


def test_one_suggestion_an_issue_replaced_when_suggested_again_and_dropped(store: InsightsStore) -> None:
    first, second = suggestion(1, T0), suggestion(2, T0 + 60)
    store.suggest(first)
    store.suggest(second)
    assert store.suggestions() == [second, first]  # newest first, every field as kept (8-byte times)
    edited = suggestion(1, T0 + 120, title="Issue 1, edited", entry_id="roll-1", confidence=0.91)
    store.suggest(edited)
    assert store.suggestions() == [edited, second]
    assert store.suggestion("Owner/Repo", 1) == edited and store.suggestion("Owner/Repo", 3) is None
    assert store.drop_suggestion("Owner/Repo", 1) is True
    assert store.drop_suggestion("Owner/Repo", 1) is False
    assert store.suggestions() == [second]


def test_suggestions_outlive_the_connection(store: InsightsStore, request: pytest.FixtureRequest) -> None:
    kept = suggestion(7, T0, kind="discussion", node_id="D_7", installation=0)
    store.suggest(kept)
    where = store.path or request.getfixturevalue("database_url")
    again = InsightsStore(where)
    try:
        assert again.suggestions() == [kept]
    finally:
        again.close()


def test_a_suggestion_is_claimed_once_across_connections_and_put_back_unless_a_newer_one_came(
    store: InsightsStore, request: pytest.FixtureRequest
) -> None:
    from concurrent.futures import ThreadPoolExecutor

    kept = suggestion(8, T0)
    store.suggest(kept)
    where = store.path or request.getfixturevalue("database_url")
    others = [InsightsStore(where) for _ in range(6)]  # as six workers, each with its own connections
    try:
        with ThreadPoolExecutor(max_workers=6) as pool:
            claimed = list(pool.map(lambda other: other.claim_suggestion("Owner/Repo", 8), others))
        assert [c for c in claimed if c is not None] == [kept] and store.suggestions() == []
        store.restore_suggestion(kept)  # the post failed: back on the list
        assert store.suggestions() == [kept]
        assert store.claim_suggestion("Owner/Repo", 8) == kept
        newer = suggestion(8, T0 + 60, title="Issue 8, edited")
        store.suggest(newer)  # the issue was edited while the claimed one was being posted
        store.restore_suggestion(kept)
        assert store.suggestions() == [newer]
    finally:
        for other in others:
            other.close()
