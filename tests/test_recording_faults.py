"""A full disk or a read-only data directory: search and chat keep answering; what is not recorded is logged.

Disk full is SQLite's own "database or disk is full", made real by capping the writer's
database at the pages it already has (`PRAGMA max_page_count`). Read-only is a database
the writer may not write (`PRAGMA query_only`, SQLite's "attempt to write a readonly
database"), and a data directory where the database cannot be created at all (the path
is taken by a directory; chmod means nothing to root, which the tests may run as).
"""

from __future__ import annotations

import logging
import os
import sqlite3
import threading
from pathlib import Path
from typing import Callable, Iterator

import pytest
from fastapi.testclient import TestClient

from kb.insights import store_path
from kb.insights.sqlite_db import SqliteDatabase
from kb.settings import Settings
from server import create_app

WRITER = "kb-insights-writer"  # the recorder's writer thread (kb/insights/writer.py)


def data_dir_sharing_the_index(settings: Settings, path: Path) -> Settings:
    """A fresh data directory (so a fresh insights database) that serves the session's index."""
    path.mkdir()
    os.symlink(settings.index_dir.resolve(), path / "index")
    return settings.with_(data_dir=path)


@pytest.fixture
def writer_connection_pragma(monkeypatch: pytest.MonkeyPatch) -> Callable[[Callable[[sqlite3.Connection], None]], None]:
    """`apply(pragma)`: run `pragma` on the connection the recorder's writer thread opens."""

    def apply(pragma: Callable[[sqlite3.Connection], None]) -> None:
        original = SqliteDatabase._db

        def db(database: SqliteDatabase) -> sqlite3.Connection:
            fresh = getattr(database._local, "db", None) is None
            connection = original(database)
            if fresh and threading.current_thread().name == WRITER:
                pragma(connection)
            return connection

        monkeypatch.setattr(SqliteDatabase, "_db", db)

    return apply


def disk_full(connection: sqlite3.Connection) -> None:
    pages = connection.execute("PRAGMA page_count").fetchone()[0]
    connection.execute(f"PRAGMA max_page_count = {pages}")


def read_only(connection: sqlite3.Connection) -> None:
    connection.execute("PRAGMA query_only = ON")


# Each record is larger than a database page (4 KiB), so none fits in the space the capped file has left.
LONG = "续" * 1900


def ask_everything(client: TestClient) -> None:
    """A search, a chat turn and a vote, each answered as usual."""
    search = client.get("/api/search", params={"q": "how do I resume training in slime? " + LONG})
    assert search.status_code == 200 and search.json()["hits"]
    chat = client.post("/api/chat", json={"message": "slime 如何续训？" + LONG})
    assert chat.status_code == 200 and chat.json()["mode"] == "extractive"
    vote = {
        "entry_id": search.json()["hits"][0]["id"],
        "helpful": True,
        "message": "resume " + LONG,
        "session": chat.json()["session"],
    }
    assert client.post("/api/feedback", json=vote).status_code == 202


@pytest.fixture
def run_app(settings: Settings, tmp_path: Path) -> Iterator[Callable[[], TestClient]]:
    clients: list[TestClient] = []

    def start() -> TestClient:
        clients.append(TestClient(create_app(data_dir_sharing_the_index(settings, tmp_path / "data"))).__enter__())
        return clients[-1]

    yield start
    for client in clients:
        client.__exit__(None, None, None)


@pytest.mark.parametrize(
    ("fault", "sqlite_says"),
    [(disk_full, "database or disk is full"), (read_only, "attempt to write a readonly database")],
)
def test_search_and_chat_answer_when_the_database_cannot_be_written(
    run_app: Callable[[], TestClient],
    writer_connection_pragma: Callable[..., None],
    caplog: pytest.LogCaptureFixture,
    fault: Callable[[sqlite3.Connection], None],
    sqlite_says: str,
) -> None:
    writer_connection_pragma(fault)
    client = run_app()
    recorder = client.app.state.recorder
    with caplog.at_level(logging.WARNING, logger="kb.insights"):
        ask_everything(client)
        assert recorder.flush()
    # Nothing is lost: what the database refused waits, to be written when it takes it. (A full
    # file may still take a record that fits a page it has: records are stored as their first
    # 1,000 characters, so not every one needs a new page.)
    written = recorder.store.count("questions") + recorder.store.count("votes")
    assert recorder.dropped == 0 and recorder.waiting >= 1 and recorder.waiting + written == 3
    store = recorder.store.path
    assert any(
        message.startswith("could not record ")
        and f" in {store}: OperationalError: {sqlite_says}; " in message
        and "they are kept and tried again" in message
        and message.endswith("answers are served as usual")
        for message in caplog.messages
    ), caplog.messages


def test_a_database_that_cannot_be_created_turns_recording_off(
    settings: Settings, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    configured = data_dir_sharing_the_index(settings, tmp_path / "data")
    store_path(configured.data_dir).mkdir()  # the database's path is taken
    with caplog.at_level(logging.WARNING, logger="kb.insights"), TestClient(create_app(configured)) as client:
        search = client.get("/api/search", params={"q": "how do I resume training in slime?"})
        chat = client.post("/api/chat", json={"message": "slime 如何续训？"})
        vote = client.post(
            "/api/feedback", json={"entry_id": search.json()["hits"][0]["id"], "helpful": True, "message": "resume"}
        )
        config = client.get("/api/widget-config").json()
    assert search.status_code == 200 and chat.status_code == 200
    assert vote.status_code == 503
    assert vote.json()["error"] == "feedback is off: votes cannot be recorded on this server (its log says why)"
    assert config["feedback"] is False, "the widget is told not to show its vote buttons"
    assert any(
        message.startswith("questions and votes are not recorded, and feedback is off: insights database ")
        for message in caplog.messages
    ), caplog.messages


def test_a_file_that_is_not_a_database_turns_recording_off(
    settings: Settings, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    configured = data_dir_sharing_the_index(settings, tmp_path / "data")
    store_path(configured.data_dir).write_bytes(b"this is not a SQLite database, but it is in the way" * 100)
    with caplog.at_level(logging.WARNING, logger="kb.insights"), TestClient(create_app(configured)) as client:
        assert client.get("/api/search", params={"q": "resume training"}).status_code == 200
    assert any("file is not a database" in message for message in caplog.messages), caplog.messages


class HeldLock:
    """Another process's connection holding SQLite's write lock (`BEGIN EXCLUSIVE`) on the insights database."""

    def __init__(self, path: Path):
        self.db = sqlite3.connect(path, isolation_level=None)
        self.db.execute("BEGIN EXCLUSIVE")

    def count(self, table: str) -> int:
        return self.db.execute(f"SELECT count(*) FROM {table}").fetchone()[0]

    def release(self) -> None:
        self.db.execute("ROLLBACK")
        self.db.close()


def locked_server(settings: Settings, tmp_path: Path, serve: Callable[[object], object], **changes: object):
    """A real server on a fresh insights database whose writer waits 0.1 s for a lock, and that lock, held."""
    app = create_app(data_dir_sharing_the_index(settings, tmp_path / "data").with_(**changes))
    server = serve(app)
    app.state.recorder.store.busy_timeout = 0.1  # the writer's connection, made on its first write, waits this long
    return server, app.state.recorder, HeldLock(app.state.recorder.store.path)


def ask_and_vote(url: str, questions: int, votes: int) -> None:
    import httpx

    with httpx.Client(base_url=url, timeout=30) as http:
        for i in range(questions):
            assert http.get("/api/search", params={"q": f"how do I resume training, take {i}"}).status_code == 200
    for i in range(votes):  # each vote from a browser of its own: one vote per entry per session
        with httpx.Client(base_url=url, timeout=30) as browser:
            assert browser.get("/").status_code == 200  # the page sets the signed session cookie
            vote = {"entry_id": "slime-b0ab398d", "message": f"resume, take {i}", "helpful": i % 2 == 0}
            assert browser.post("/api/feedback", json=vote).status_code == 202


def wait_until(done: Callable[[], bool], seconds: float = 20) -> None:
    import time

    deadline = time.monotonic() + seconds
    while not done() and time.monotonic() < deadline:
        time.sleep(0.05)


def test_records_wait_out_a_locked_database_and_none_is_lost(
    settings: Settings, tmp_path: Path, serve: Callable[[object], object], caplog: pytest.LogCaptureFixture
) -> None:
    import time

    import httpx

    server, recorder, lock = locked_server(settings, tmp_path, serve)
    with caplog.at_level(logging.WARNING, logger="kb.insights"):
        try:
            ask_and_vote(server.url, questions=40, votes=40)
            time.sleep(3)  # the writer has tried, and been refused, several times
            assert lock.count("questions") == 0 and lock.count("votes") == 0
            health = httpx.get(f"{server.url}/healthz").json()
            assert (health["insights_waiting"], health["insights_dropped"]) == (80, 0)
        finally:
            lock.release()
        wait_until(lambda: recorder.waiting == 0)
    assert recorder.store.count("questions") == 40 and recorder.store.count("votes") == 40
    health = httpx.get(f"{server.url}/healthz").json()
    assert (health["insights_waiting"], health["insights_dropped"]) == (0, 0)
    refused = [m for m in caplog.messages if m.startswith("could not record ")]
    assert 1 <= len(refused) <= 2 and all("database is locked" in m for m in refused), (
        refused
    )  # once a kind, not once a try
    assert any(m.startswith("recorded 40 questions once the insights database took them") for m in caplog.messages)


def test_records_beyond_the_queue_size_are_dropped_counted_and_logged(
    settings: Settings, tmp_path: Path, serve: Callable[[object], object], caplog: pytest.LogCaptureFixture
) -> None:
    import httpx

    server, recorder, lock = locked_server(settings, tmp_path, serve, insights_queue_size=10)
    with caplog.at_level(logging.WARNING, logger="kb.insights"):
        try:
            ask_and_vote(server.url, questions=12, votes=3)
            health = httpx.get(f"{server.url}/healthz").json()
            assert (health["insights_waiting"], health["insights_dropped"]) == (10, 5)
        finally:
            lock.release()
        wait_until(lambda: recorder.waiting == 0)
    assert recorder.store.count("questions") == 10 and recorder.store.count("votes") == 0  # the first ten kept
    assert httpx.get(f"{server.url}/healthz").json()["insights_dropped"] == 5
    full = [m for m in caplog.messages if "KB_INSIGHTS_QUEUE_SIZE" in m]
    assert len(full) == 1 and "10 records are waiting" in full[0] and "dropped (1 so far)" in full[0], full
