"""Shared fixtures: one index built from the shipped FAQs, the app on it, real servers on loopback."""

from __future__ import annotations

import shutil
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest
import uvicorn
from fastapi.testclient import TestClient

from kb.settings import Settings
from server.settings import ServerSettings

ARTIFACTS = Path(__file__).resolve().parent.parent / "test-artifacts"


def build_keeping_vectors(settings: Settings, config: pytest.Config) -> None:
    """Build the index for `settings`, its passage vectors kept in pytest's cache directory
    between sessions (unchanged passages are not embedded again; no cache under
    `-p no:cacheprovider`)."""
    from ingest import build_index

    cache = getattr(config, "cache", None)
    kept = cache.mkdir("kb-embedding-cache") if cache is not None else None
    if kept is not None:
        shutil.copytree(kept, settings.cache_dir, dirs_exist_ok=True)
    build_index(settings)
    if kept is not None:
        shutil.copytree(settings.cache_dir, kept, dirs_exist_ok=True)


@pytest.fixture(scope="session")
def settings(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> ServerSettings:
    """The server's settings with a fresh data directory holding an index of the shipped FAQs (built once).

    The index is built from scratch every session; only the embedding cache (vectors by
    content hash) is kept between sessions in pytest's cache directory, so a rerun does
    not embed unchanged passages again.
    """
    # One client (the test process) sends every request of the suite: no rate limit here;
    # tests/test_ratelimit.py sets its own.
    settings = ServerSettings(data_dir=tmp_path_factory.mktemp("kb-data"), rate_limit="off")
    build_keeping_vectors(settings, request.config)
    return settings


@pytest.fixture(scope="session")
def client(settings: Settings) -> Iterator[TestClient]:
    """The app in-process; entering the client runs the lifespan, which opens the index once."""
    from server import create_app

    with TestClient(create_app(settings)) as client:
        yield client


class LoopbackServer:
    """A real uvicorn serving an ASGI app on 127.0.0.1 at a free port, in a thread."""

    def __init__(self, app: Any, **options: Any):
        """`options`: more of uvicorn's settings, as `kb serve` passes them (`kbcli.cli.uvicorn_options`)."""
        config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", lifespan="on", **options)
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self) -> "LoopbackServer":
        self.thread.start()
        deadline = time.monotonic() + 60
        while not self.server.started:
            if not self.thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("uvicorn did not start")
            time.sleep(0.02)
        return self

    @property
    def url(self) -> str:
        host, port = self.server.servers[0].sockets[0].getsockname()[:2]
        return f"http://{host}:{port}"

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)


@pytest.fixture(scope="session")
def serve() -> Iterator[Callable[..., LoopbackServer]]:
    """`serve(app, **options)` starts a real uvicorn on a loopback port; all are stopped at the end."""
    started: list[LoopbackServer] = []

    def start(app: Any, **options: Any) -> LoopbackServer:
        server = LoopbackServer(app, **options).__enter__()
        started.append(server)
        return server

    yield start
    for server in reversed(started):
        server.__exit__(None, None, None)


class ServedApp:
    """An app of its own (`create_app`) served by a real uvicorn on a loopback port (`serve`): its URL,
    and what its insights database holds."""

    def __init__(self, serve: Callable[..., LoopbackServer], settings: Settings):
        from server import create_app

        self.app = create_app(settings)
        self.url = serve(self.app).url

    def rows(self, sql: str) -> list[tuple[Any, ...]]:
        """The rows `sql` reads from the insights database, once what was queued is written."""
        from kb.insights.store import store_path

        assert self.app.state.recorder.flush()
        with sqlite3.connect(store_path(self.app.state.settings.data_dir)) as db:
            return db.execute(sql).fetchall()


def own_data(settings: ServerSettings, tmp_path_factory: pytest.TempPathFactory, name: str) -> ServerSettings:
    """The session's index, with a data directory (and so an insights database) of its own."""
    data = tmp_path_factory.mktemp(name)
    (data / "index").symlink_to(settings.index_dir)
    return settings.with_(data_dir=data)


def top_hits(client: TestClient, query: str, root: str = "http://testserver") -> list[dict[str, Any]]:
    """The hits the search page shows for `query` (at most four), as a chat bot's reply gives them,
    their permalinks on the server at `root`."""
    found = client.get("/api/search", params={"q": query, "k": 4}).json()
    return [
        {**h, "permalink": h["permalink"].replace("http://testserver/", f"{root}/")}
        for h in found["hits"][: found["shown"]]
    ]


@pytest.fixture(scope="session")
def artifacts() -> Path:
    """Where screenshots go (gitignored)."""
    ARTIFACTS.mkdir(exist_ok=True)
    return ARTIFACTS


@pytest.fixture(scope="session")
def postgres() -> Iterator[Any]:
    """A PostgreSQL server for the session (tests/postgres.py); each test makes its own database in it."""
    from postgres import PostgresServer

    server = PostgresServer()
    yield server
    server.close()


@pytest.fixture
def database_url(postgres: Any, request: pytest.FixtureRequest) -> str:
    """A new, empty PostgreSQL database for this test."""
    import re

    name = "t_" + re.sub(r"\W", "_", request.node.name.lower())[:50] + f"_{time.monotonic_ns() % 10**9}"
    return postgres.create_database(name)
