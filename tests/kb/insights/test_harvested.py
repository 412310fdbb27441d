"""Harvested drafts in the insights store, on a SQLite file and on a real PostgreSQL (tests/support/postgres.py):
kept per thread, refreshed while new, left alone once decided, decided once, expired when untouched."""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import pytest

from kb.harvest import Draft, ThreadQuestion
from kb.insights import InsightsStore, store_path
from kb.insights.migrations import SCHEMA_VERSION

T0 = 1_750_000_000.123456


def draft(number: int, asked: int = 1, closed_at: float = T0, answer: str = "Pass --load.") -> Draft:
    alternates = tuple(
        ThreadQuestion(f"again {i}", f"https://github.com/o/r/issues/{1000 + i}", 1000 + i, closed_at)
        for i in range(asked - 1)
    )
    return Draft(
        repo="o/r", number=number, url=f"https://github.com/o/r/issues/{number}", kind="issue",
        question=f"How do I resume training? ({number})", answer=answer,
        signals={"answer": "thanked", "by": "MEMBER"}, closed_at=closed_at, alternates=alternates, answer_author="m",
    )  # fmt: skip


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[InsightsStore]:
    where = request.getfixturevalue("database_url") if request.param == "postgres" else store_path(tmp_path)
    opened = InsightsStore(where)
    yield opened
    opened.close()


def test_drafts_are_kept_whole_and_ranked_by_how_many_asked_then_recency(store: InsightsStore) -> None:
    store.drafts.keep(
        [draft(1, asked=1, closed_at=T0 + 10), draft(2, asked=3), draft(3, asked=1, closed_at=T0 + 20)], at=T0
    )
    kept = store.drafts.all()
    assert [k.draft.number for k in kept] == [2, 3, 1]
    assert kept[0].draft == draft(2, asked=3) and kept[0].draft.asked == 3 and kept[0].harvested_at == T0
    assert store.schema_version() == SCHEMA_VERSION


def test_a_decided_thread_is_not_offered_again_and_is_decided_once(store: InsightsStore) -> None:
    store.drafts.keep([draft(1), draft(2)], at=T0)
    assert store.drafts.decide("o/r", 1, "dismissed", at=T0 + 1)
    assert not store.drafts.decide("o/r", 1, "accepted")  # a second click finds nothing to decide
    assert store.drafts.decide("o/r", 2, "accepted", written_id="written-abc", at=T0 + 2)
    store.drafts.keep([draft(1, answer="changed"), draft(2, answer="changed"), draft(3)], at=T0 + 3)  # harvested again
    assert [k.draft.number for k in store.drafts.all()] == [3]
    accepted = store.drafts.get("o/r", 2)
    assert accepted is not None and accepted.status == "accepted" and accepted.written_id == "written-abc"
    assert accepted.draft.answer == "Pass --load."
    assert store.drafts.counts() == {"new": 1, "accepted": 1, "dismissed": 1}


def test_a_new_draft_harvested_again_is_refreshed(store: InsightsStore) -> None:
    store.drafts.keep([draft(1)], at=T0)
    store.drafts.keep([draft(1, asked=2, answer="Newer answer.")], at=T0 + 5)
    [kept] = store.drafts.all()
    assert kept.draft.answer == "Newer answer." and kept.draft.asked == 2 and kept.harvested_at == T0 + 5


def test_untouched_drafts_expire_and_decided_ones_stay(store: InsightsStore) -> None:
    store.drafts.keep([draft(1), draft(2)], at=T0)
    store.drafts.keep([draft(3)], at=T0 + 100)
    store.drafts.decide("o/r", 2, "dismissed")
    assert store.drafts.expire(before=T0 + 50) == 1
    assert [k.draft.number for k in store.drafts.all()] == [3] and store.drafts.get("o/r", 2) is not None


def test_a_thread_joins_a_new_draft_once_and_never_a_decided_one(store: InsightsStore) -> None:
    store.drafts.keep([draft(1, asked=2), draft(2)], at=T0)
    joining = ThreadQuestion("How can I resume?", "https://github.com/o/r/issues/7", 7, T0 + 5)
    assert store.drafts.join("o/r", 1, joining, at=T0 + 6)
    assert store.drafts.join("o/r", 1, joining, at=T0 + 7)  # heard again: still one thread
    kept = store.drafts.get("o/r", 1)
    assert kept is not None and kept.draft.alternates == draft(1, asked=2).alternates + (joining,)
    assert kept.draft.asked == 3 and kept.harvested_at == T0 + 7
    assert [k.draft.number for k in store.drafts.all()] == [1, 2]  # the most asked first
    store.drafts.decide("o/r", 2, "dismissed")
    assert not store.drafts.join("o/r", 2, joining) and not store.drafts.join("o/r", 99, joining)
    assert store.drafts.get("o/r", 2).draft.alternates == ()
