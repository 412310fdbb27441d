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
import signal
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path
from typing import Callable, Iterator

import httpx
import pytest
from fastapi.testclient import TestClient

from kb.insights import store_path
from kb.insights.sqlite_db import SqliteDatabase
from kb.knowledge import KnowledgeBase
from kb.settings import Settings
from server import create_app
from tests.support.paths import ROOT
from tests.support.ports import free_port, wait_for_port


def data_dir_sharing_the_index(settings: Settings, path: Path) -> Settings:
    """A fresh data directory (so a fresh insights database) that serves the session's index."""
    path.mkdir()
    os.symlink(settings.index_dir.resolve(), path / "index")
    return settings.with_(data_dir=path)


@pytest.fixture
def connection_pragma(monkeypatch: pytest.MonkeyPatch) -> Callable[[Callable[[sqlite3.Connection], None]], None]:
    """`apply(pragma)`: run `pragma` on every connection to an insights database opened from now on (the
    recorder's writer thread, the worker threads that write votes) and on those already open."""

    def apply(pragma: Callable[[sqlite3.Connection], None]) -> None:
        original = SqliteDatabase._db

        def db(database: SqliteDatabase) -> sqlite3.Connection:
            fresh = getattr(database._local, "db", None) is None
            connection = original(database)
            if fresh:
                pragma(connection)
            return connection

        monkeypatch.setattr(SqliteDatabase, "_db", db)
        for database in opened:
            for connection in list(database._all.values()):
                pragma(connection)

    opened: list[SqliteDatabase] = []
    init = SqliteDatabase.__init__

    def keep(database: SqliteDatabase, *args: object, **kwargs: object) -> None:
        init(database, *args, **kwargs)  # type: ignore[arg-type]
        opened.append(database)

    monkeypatch.setattr(SqliteDatabase, "__init__", keep)
    return apply


def disk_full(connection: sqlite3.Connection) -> None:
    connection.execute("VACUUM")  # no free page left inside the file (a dropped table's, after a migration)
    pages = connection.execute("PRAGMA page_count").fetchone()[0]
    connection.execute(f"PRAGMA max_page_count = {pages}")


def read_only(connection: sqlite3.Connection) -> None:
    connection.execute("PRAGMA query_only = ON")


# Each record is larger than a database page (4 KiB), so none fits in the space the capped file has left.
LONG = "续" * 1900


def ask_everything(client: TestClient) -> httpx.Response:
    """A search and a chat turn, each answered as usual; the answer to a vote."""
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
    return client.post("/api/feedback", json=vote)


@pytest.fixture
def run_app(settings: Settings, tmp_path: Path) -> Iterator[Callable[[], TestClient]]:
    clients: list[TestClient] = []

    def start() -> TestClient:
        clients.append(TestClient(create_app(data_dir_sharing_the_index(settings, tmp_path / "data"))).__enter__())
        return clients[-1]

    yield start
    for client in clients:
        client.__exit__(None, None, None)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("fault", "sqlite_says"),
    [(disk_full, "database or disk is full"), (read_only, "attempt to write a readonly database")],
)
def test_search_and_chat_answer_when_the_database_cannot_be_written(
    run_app: Callable[[], TestClient],
    connection_pragma: Callable[..., None],
    caplog: pytest.LogCaptureFixture,
    fault: Callable[[sqlite3.Connection], None],
    sqlite_says: str,
) -> None:
    client = run_app()
    connection_pragma(fault)  # once the database is open
    recorder = client.app.state.recorder
    store = recorder.store.path
    with caplog.at_level(logging.WARNING, logger="kb.insights"):
        vote = ask_everything(client)
        assert recorder.flush()
    # A vote is written before it is acknowledged: the database refused it, and the client is told so.
    assert vote.status_code == 503 and vote.headers["retry-after"] == "5"
    assert vote.json()["error"] == (
        f"insights database {store}: the vote was not recorded (OperationalError: {sqlite_says}); try again"
    )
    # No question is lost: what the database refused waits, to be written when it takes it. (A full
    # file may still take a record that fits a page it has: records are stored as their first
    # 1,000 characters, so not every one needs a new page.)
    written = recorder.store.count("questions")
    assert recorder.store.count("votes") == 0
    assert recorder.dropped == 0 and recorder.waiting >= 1 and recorder.waiting + written == 2
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


def ask_and_vote(url: str, questions: int, votes: int, voted: int = 202) -> None:
    """`questions` searches, and `votes` votes from browsers of their own, each answered `voted`."""
    import httpx

    with httpx.Client(base_url=url, timeout=30) as http:
        for i in range(questions):
            assert http.get("/api/search", params={"q": f"how do I resume training, take {i}"}).status_code == 200
    for i in range(votes):  # each vote from a browser of its own: one vote per entry per session
        with httpx.Client(base_url=url, timeout=30) as browser:
            assert browser.get("/").status_code == 200  # the page sets the signed session cookie
            vote = {"entry_id": "slime-b0ab398d", "message": f"resume, take {i}", "helpful": i % 2 == 0}
            assert browser.post("/api/feedback", json=vote).status_code == voted


def wait_until(done: Callable[[], bool], seconds: float = 20) -> None:
    import time

    deadline = time.monotonic() + seconds
    while not done() and time.monotonic() < deadline:
        time.sleep(0.05)


@pytest.mark.slow
def test_records_wait_out_a_locked_database_and_none_is_lost(
    settings: Settings, tmp_path: Path, serve: Callable[[object], object], caplog: pytest.LogCaptureFixture
) -> None:
    import time

    import httpx

    server, recorder, lock = locked_server(settings, tmp_path, serve)
    with caplog.at_level(logging.WARNING, logger="kb.insights"):
        try:
            # Questions wait for the lock; a vote is written before it is acknowledged, so each is refused (503).
            ask_and_vote(server.url, questions=40, votes=8, voted=503)
            time.sleep(3)  # the writer has tried, and been refused, several times
            assert lock.count("questions") == 0 and lock.count("votes") == 0
            health = httpx.get(f"{server.url}/healthz").json()
            assert (health["insights_waiting"], health["insights_dropped"]) == (40, 0)
        finally:
            lock.release()
        wait_until(lambda: recorder.waiting == 0)
        ask_and_vote(server.url, questions=0, votes=1)  # taken again once the lock is gone
    assert recorder.store.count("questions") == 40 and recorder.store.count("votes") == 1
    health = httpx.get(f"{server.url}/healthz").json()
    assert (health["insights_waiting"], health["insights_dropped"]) == (0, 0)
    refused = [m for m in caplog.messages if m.startswith("could not record ")]
    assert len(refused) == 2 and all("database is locked" in m for m in refused), refused  # once a kind, not a try
    assert any(m.startswith("recorded 40 questions once the insights database took them") for m in caplog.messages)


@pytest.mark.slow
def test_records_beyond_the_queue_size_are_dropped_counted_and_logged(
    settings: Settings, tmp_path: Path, serve: Callable[[object], object], caplog: pytest.LogCaptureFixture
) -> None:
    import httpx

    server, recorder, lock = locked_server(settings, tmp_path, serve, insights_queue_size=10)
    with caplog.at_level(logging.WARNING, logger="kb.insights"):
        try:
            ask_and_vote(server.url, questions=12, votes=3, voted=503)  # votes are not queued: refused
            health = httpx.get(f"{server.url}/healthz").json()
            assert (health["insights_waiting"], health["insights_dropped"]) == (10, 2)
        finally:
            lock.release()
        wait_until(lambda: recorder.waiting == 0)
    assert recorder.store.count("questions") == 10 and recorder.store.count("votes") == 0  # the first ten kept
    assert httpx.get(f"{server.url}/healthz").json()["insights_dropped"] == 2
    full = [m for m in caplog.messages if "KB_INSIGHTS_QUEUE_SIZE" in m]
    assert len(full) == 1 and "10 records are waiting" in full[0] and "dropped (1 so far)" in full[0], full


def start_kb_serve(settings: Settings, data_dir: Path) -> tuple[subprocess.Popen[bytes], str]:
    """A real `kb serve` process on a fresh insights database, believing `X-Forwarded-For` from this machine."""
    port = free_port()
    env = dict(
        os.environ,
        KB_DATA_DIR=str(data_dir_sharing_the_index(settings, data_dir).data_dir),
        PYTHONPATH=str(ROOT),
        KB_RATE_LIMIT="off",
        KB_TRUSTED_PROXIES="127.0.0.1",  # each client below an address of its own
        OMP_NUM_THREADS="1",
    )
    env.pop("KB_LLM_BASE_URL", None)
    command = [sys.executable, "-m", "kbcli.cli", "serve", "--port", str(port)]
    process = subprocess.Popen(command, env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    assert wait_for_port(port, process), "kb serve did not start"
    return process, f"http://127.0.0.1:{port}"


@pytest.mark.slow
def test_every_vote_acknowledged_before_a_kill_9_is_in_the_database(settings: Settings, tmp_path: Path) -> None:
    """Eight clients vote as fast as they can; the server is killed (SIGKILL) while votes are in flight."""
    process, url = start_kb_serve(settings, tmp_path / "data")
    entries = [entry.id for entry in KnowledgeBase.open(settings).entries]
    acknowledged: list[str] = []
    killed = threading.Event()

    def voter(n: int) -> None:
        with httpx.Client(base_url=url, timeout=30, headers={"X-Forwarded-For": f"198.51.100.{n}"}) as browser:
            try:
                browser.get("/")  # the session cookie
                for entry in entries:  # one vote on each answer: within every limit on votes
                    message = f"vote {n} on {entry}"
                    body = {"entry_id": entry, "message": message, "helpful": True}
                    if browser.post("/api/feedback", json=body).status_code == 202:
                        acknowledged.append(message)
            except httpx.TransportError:
                assert killed.is_set()

    try:
        voters = [threading.Thread(target=voter, args=(n,)) for n in range(8)]
        for thread in voters:
            thread.start()
        wait_until(lambda: len(acknowledged) >= 100, seconds=60)
        process.send_signal(signal.SIGKILL)
        killed.set()
        for thread in voters:
            thread.join()
    finally:
        process.kill()
        process.wait()
    assert 100 <= len(acknowledged) < 8 * len(entries)  # killed mid-burst
    with sqlite3.connect(store_path(tmp_path / "data")) as db:
        recorded = {question for (question,) in db.execute("SELECT question FROM votes")}
    assert [message for message in acknowledged if message not in recorded] == []
