"""Shared fixtures: one index built from the shipped FAQs, the app on it, real servers on loopback."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest
from fastapi.testclient import TestClient

from kb.index import read_index
from kb.settings import Settings
from server.settings import ServerSettings
from tests.support.builds import build_keeping_vectors
from tests.support.hostile import HOSTILE_SOURCES
from tests.support.paths import ROOT
from tests.support.seeded_insights import RESUME, TOKEN, seed
from tests.support.servers import LoopbackServer

ARTIFACTS = ROOT / "test-artifacts"
# The suite asks short written questions ("how do I resume training in slime?", confidence 0.53),
# of which the shipped calibration, fitted to tracker questions, is less sure than of a pasted
# error: its servers answer at precision 0.6 (and so do the `kb` commands and servers it starts),
# so that the tests of what a channel does with an answer have one. The default operating point
# itself (0.8) is tested in tests/kb/test_operating_points.py.
SUITE_PRECISION = 0.6
os.environ["KB_ANSWER_PRECISION"] = str(SUITE_PRECISION)


BROWSER_TESTS = Path(__file__).resolve().parent / "browser"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark what a test needs, so `make test-fast` (`-m "not browser and not postgres and not slow"`) can leave it out:
    every test under tests/browser/ drives Chromium; a test that uses the `postgres` fixture, or runs with a
    fixture's parameter "postgres", starts PostgreSQL."""
    for item in items:
        if BROWSER_TESTS in item.path.parents:
            item.add_marker(pytest.mark.browser)
        callspec = getattr(item, "callspec", None)
        on_postgres = callspec is not None and "postgres" in callspec.params.values()
        if on_postgres or "postgres" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.postgres)


@pytest.fixture(scope="session")
def settings(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> ServerSettings:
    """The server's settings with a fresh data directory holding an index of the shipped FAQs (built once).

    The index is built from scratch every session; only the embedding cache (vectors by
    content hash) is kept between sessions in pytest's cache directory, so a rerun does
    not embed unchanged passages again.
    """
    # One client (the test process) sends every request of the suite: no rate limit here;
    # tests/server/test_ratelimit.py sets its own.
    settings = ServerSettings(
        data_dir=tmp_path_factory.mktemp("kb-data"), rate_limit="off", answer_precision=SUITE_PRECISION
    )
    build_keeping_vectors(settings, request.config)
    return settings


@pytest.fixture(scope="session")
def client(settings: Settings) -> Iterator[TestClient]:
    """The app in-process; entering the client runs the lifespan, which opens the index once."""
    from server import create_app

    with TestClient(create_app(settings)) as client:
        yield client


@pytest.fixture(scope="module")
def serve() -> Iterator[Callable[..., LoopbackServer]]:
    """`serve(app, **options)` starts a real uvicorn on a loopback port; all are stopped at the end of the test
    module, so servers (their threads, writers and pollers) do not pile up over the session and slow the later ones."""
    started: list[LoopbackServer] = []

    def start(app: Any, **options: Any) -> LoopbackServer:
        server = LoopbackServer(app, **options).__enter__()
        started.append(server)
        return server

    yield start
    for server in reversed(started):
        server.__exit__(None, None, None)


@pytest.fixture(scope="session")
def artifacts() -> Path:
    """Where screenshots go (gitignored)."""
    ARTIFACTS.mkdir(exist_ok=True)
    return ARTIFACTS


@pytest.fixture(scope="session")
def postgres() -> Iterator[Any]:
    """A PostgreSQL server for the session (tests/support/postgres.py); each test makes its own database in it."""
    from tests.support.postgres import PostgresServer

    server = PostgresServer()
    yield server
    server.close()


@pytest.fixture
def database_url(postgres: Any, request: pytest.FixtureRequest) -> str:
    """A new, empty PostgreSQL database for this test."""
    import re

    name = "t_" + re.sub(r"\W", "_", request.node.name.lower())[:50] + f"_{time.monotonic_ns() % 10**9}"
    return postgres.create_database(name)


@pytest.fixture(scope="session")
def hostile_settings(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Settings:
    """Settings serving an index of the hostile FAQ only (the embedding cache reused as the `settings` fixture does)."""
    # The payloads are in the entries' answers, and the calibration was not fitted to this FAQ: at
    # precision 0.25 every first hit is given as the answer.
    settings = ServerSettings(
        data_dir=tmp_path_factory.mktemp("kb-hostile"),
        sources_dir=HOSTILE_SOURCES,
        rate_limit="off",
        answer_precision=0.25,
    )
    build_keeping_vectors(settings, request.config)
    return settings


# The /insights page's tests (in-process and in a browser): two weeks of questions and votes.


@pytest.fixture(scope="module")
def entry_ids(settings: Settings) -> list[str]:
    ids = [e.id for e in read_index(settings.index_dir).entries]
    return [RESUME] + [i for i in ids if i != RESUME][:5]


@pytest.fixture(scope="module")
def insights_settings(settings: Settings, tmp_path_factory: pytest.TempPathFactory, entry_ids: list[str]) -> Settings:
    data_dir = tmp_path_factory.mktemp("insights-data")
    (data_dir / "index").symlink_to(settings.index_dir)
    seed(data_dir, entry_ids, time.time())
    return settings.with_(data_dir=data_dir, admin_token=TOKEN)
