"""`Insights.run`: any part's method of the store in a worker thread, with the answers a server gives when there is no
database (each part saying what is off) and when its server cannot be reached (each part saying what waits)."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any, Iterator

import pytest

from kb.errors import InsightsOff, InsightsUnreachable
from kb.insights import InsightsStore, PendingAnswer, Recorder, store_path
from kb.insights.service import Insights
from kb.settings import Settings


@pytest.fixture
def insights(tmp_path: Path) -> Iterator[Insights]:
    recorder = Recorder(InsightsStore(store_path(tmp_path)), Settings(data_dir=tmp_path))
    yield Insights(recorder)
    recorder.close()


def answer(thread: str) -> PendingAnswer:
    return PendingAnswer("tracker", thread, "Training stopped", "Resume it.", "e-1", 0.9, "", {}, 1_750_000_000.0)


def test_a_part_runs_in_a_worker_thread_and_gives_back_what_it_returns(
    insights: Insights, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = insights.recorder.store
    assert store is not None
    read_on: list[threading.Thread] = []
    real = store.db.rows

    def rows(*args: Any) -> Any:
        read_on.append(threading.current_thread())
        return real(*args)

    monkeypatch.setattr(store.db, "rows", rows)

    async def work() -> list[PendingAnswer]:
        await insights.run(insights.pending.keep, answer("Owner/Repo#1"))
        return await insights.run(insights.pending.waiting, "tracker")

    assert [a.thread for a in asyncio.run(work())] == ["Owner/Repo#1"]
    assert read_on and threading.main_thread() not in read_on


def test_each_part_out_of_reach_says_what_waits(insights: Insights, monkeypatch: pytest.MonkeyPatch) -> None:
    store = insights.recorder.store
    assert store is not None

    def refused(*_: object) -> None:
        raise OSError("connection refused")

    monkeypatch.setattr(store, "unreachable", lambda exc: isinstance(exc, OSError))
    monkeypatch.setattr(store.db, "rows", refused)
    said = {}
    for key, call in {
        "pending": lambda: insights.run(insights.pending.waiting, "tracker"),
        "drafts": lambda: insights.run(insights.drafts.all),
        "links": lambda: insights.run(insights.links.all),
    }.items():
        with pytest.raises(InsightsUnreachable) as raised:
            asyncio.run(call())
        said[key] = str(raised.value)
    location = store.location
    assert said == {
        "pending": f"the insights database {location} cannot be reached; answers waiting for a maintainer wait "
        "until it is back",
        "drafts": f"the insights database {location} cannot be reached; drafts from the tracker wait until it is back",
        "links": f"the insights database {location} cannot be reached; links cannot be changed until it is back",
    }


def test_an_error_that_is_not_the_server_gone_goes_on_as_it_is(insights: Insights) -> None:
    with pytest.raises(ValueError, match="unknown draft state"):
        asyncio.run(insights.run(insights.drafts.all, "maybe"))


def test_without_a_database_each_part_says_what_is_off(tmp_path: Path) -> None:
    insights = Insights(Recorder(None, Settings(data_dir=tmp_path), problem="the disk is read-only"))
    for part, off in (
        ("pending", "answers waiting for a maintainer are off"),
        ("drafts", "drafts from the tracker are off"),
        ("links", "links are off"),
    ):
        with pytest.raises(InsightsOff, match=rf"^{off}: .* \(the disk is read-only\)$"):
            getattr(insights, part)
