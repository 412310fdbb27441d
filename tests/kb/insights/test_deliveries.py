"""The GitHub webhook's deliveries seen and closes waiting, in the insights store (SQLite and PostgreSQL): a delivery
is first once across connections as across processes, within its window; a close queued is taken by one holder at a
time, freed when its holder's lease ends or its process is gone, deleted when done, tried again a bounded number of
times, and refused (never dropped) past the queue's size."""

from __future__ import annotations

import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Iterator

import pytest

from kb.insights import InsightsStore, store_path
from kb.insights.deliveries import holder_running, this_process


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def where(request: pytest.FixtureRequest, tmp_path: Path) -> str | Path:
    return request.getfixturevalue("database_url") if request.param == "postgres" else store_path(tmp_path)


@pytest.fixture
def store(where: str | Path) -> Iterator[InsightsStore]:
    opened = InsightsStore(where)
    yield opened
    opened.close()


def test_a_delivery_is_first_once_within_its_window(store: InsightsStore) -> None:
    assert store.deliveries.first("d1", now=100.0, window=50.0)
    assert not store.deliveries.first("d1", now=120.0, window=50.0)
    assert store.deliveries.first("d2", now=120.0, window=50.0)
    assert store.deliveries.first("d1", now=151.0, window=50.0)  # its window passed: forgotten


def test_of_many_connections_given_one_delivery_one_acts_on_it(where: str | Path) -> None:
    stores = [InsightsStore(where) for _ in range(6)]
    try:
        with ThreadPoolExecutor(max_workers=6) as pool:
            firsts = list(pool.map(lambda n: stores[n].deliveries.first("same", 100.0, 3600.0), range(6)))
    finally:
        for store in stores:
            store.close()
    assert sorted(firsts) == [False] * 5 + [True]


def test_a_close_is_taken_by_one_holder_and_deleted_when_done(store: InsightsStore) -> None:
    assert store.closes.queue("o/r", 7, '{"number": 7}', now=100.0, limit=10)
    taken = store.closes.take("first", now=100.0, until=160.0)
    assert taken is not None and (taken.repo, taken.number, taken.issue, taken.tries) == ("o/r", 7, '{"number": 7}', 0)
    assert store.closes.take("second", now=110.0, until=170.0) is None  # held, its lease running
    assert store.closes.renew(taken, until=200.0)
    assert store.closes.take("second", now=180.0, until=240.0) is None  # renewed
    store.closes.done(taken)
    assert store.closes.waiting() == 0 and store.closes.take("second", now=300.0, until=360.0) is None


def test_a_lease_that_ends_frees_a_close_and_the_old_holder_cannot_finish_it(store: InsightsStore) -> None:
    store.closes.queue("o/r", 7, "{}", now=100.0, limit=10)
    gone = store.closes.take("gone", now=100.0, until=130.0)
    assert gone is not None
    again = store.closes.take("next", now=131.0, until=190.0)
    assert again is not None and again.holder == "next"
    assert not store.closes.renew(gone, until=400.0)
    store.closes.done(gone)  # not its row any more: left
    assert store.closes.waiting() == 1


def test_a_close_held_by_a_process_of_this_host_that_is_gone_is_free_at_once(store: InsightsStore) -> None:
    ended = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    dead = this_process("x").replace(f":{os.getpid()}:", f":{int(ended.stdout)}:")
    assert not holder_running(dead) and holder_running(this_process("x"))
    assert holder_running("another-host:1:x")  # another host's: only its lease tells
    store.closes.queue("o/r", 7, "{}", now=100.0, limit=10)
    assert store.closes.take(dead, now=100.0, until=10_000.0) is not None
    taken = store.closes.take("alive", now=101.0, until=200.0)
    assert taken is not None and taken.holder == "alive"


def test_a_failed_close_is_tried_again_later_then_dropped_after_the_last_try(store: InsightsStore) -> None:
    store.closes.queue("o/r", 7, "{}", now=100.0, limit=10)
    for attempt in range(3):
        taken = store.closes.take("h", now=1000.0 * (attempt + 1), until=1000.0 * (attempt + 1) + 60)
        assert taken is not None and taken.tries == attempt
        assert store.closes.take("h", now=1000.0 * (attempt + 1), until=0) is None
        dropped = store.closes.failed(taken, "HTTP 502", due=1000.0 * (attempt + 2), max_tries=3)
        assert dropped == (attempt == 2)
        if not dropped:
            assert store.closes.take("h", now=1000.0 * (attempt + 1) + 1, until=0) is None  # not due yet
    assert store.closes.waiting() == 0


def test_past_its_size_the_queue_refuses_a_close_and_a_redelivered_one_refreshes_its_row(store: InsightsStore) -> None:
    assert all(store.closes.queue("o/r", n, "{}", now=100.0, limit=3) for n in (1, 2, 3))
    assert not store.closes.queue("o/r", 4, "{}", now=100.0, limit=3)
    assert store.closes.queue("o/r", 2, '{"again": true}', now=101.0, limit=3)  # already there: refreshed
    assert store.closes.waiting() == 3
