"""Claims on GitHub issues in the insights store (SQLite and PostgreSQL): one holder at a time per issue, across
connections as across processes; a lease that ends frees the issue; a holder releases and renews only its own."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Iterator

import pytest

from kb.insights import InsightsStore, store_path


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def where(request: pytest.FixtureRequest, tmp_path: Path) -> str | Path:
    return request.getfixturevalue("database_url") if request.param == "postgres" else store_path(tmp_path)


@pytest.fixture
def store(where: str | Path) -> Iterator[InsightsStore]:
    opened = InsightsStore(where)
    yield opened
    opened.close()


def test_one_holder_at_a_time_until_it_releases(store: InsightsStore) -> None:
    assert store.claims.claim("Owner/Repo", 7, "first", until=130.0, now=100.0)
    assert not store.claims.claim("owner/repo", 7, "second", until=131.0, now=101.0)  # the name's case aside
    assert store.claims.claim("owner/repo", 8, "second", until=131.0, now=101.0)  # another issue is free
    store.claims.release("owner/repo", 7, "second")  # not its claim: left alone
    assert not store.claims.claim("owner/repo", 7, "third", until=132.0, now=102.0)
    store.claims.release("owner/repo", 7, "first")
    assert store.claims.claim("owner/repo", 7, "third", until=132.0, now=102.0)


def test_a_lease_that_ends_frees_the_issue_and_a_renewed_one_keeps_it(store: InsightsStore) -> None:
    assert store.claims.claim("owner/repo", 7, "gone", until=130.0, now=100.0)  # its process dies holding it
    assert not store.claims.claim("owner/repo", 7, "next", until=159.0, now=129.0)
    assert store.claims.claim("owner/repo", 7, "next", until=161.0, now=131.0)
    assert not store.claims.renew("owner/repo", 7, "gone", until=200.0)  # the lease was lost
    assert store.claims.renew("owner/repo", 7, "next", until=200.0)
    assert not store.claims.claim("owner/repo", 7, "other", until=230.0, now=190.0)


def test_of_many_connections_claiming_at_once_one_holds_the_issue(where: str | Path) -> None:
    stores = [InsightsStore(where) for _ in range(6)]
    try:
        with ThreadPoolExecutor(max_workers=6) as pool:
            taken = list(
                pool.map(lambda n: stores[n].claims.claim("owner/repo", 9, f"holder-{n}", 130.0, 100.0), range(6))
            )
    finally:
        for store in stores:
            store.close()
    assert sorted(taken) == [False] * 5 + [True]
