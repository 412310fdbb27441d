"""The app as `create_app` makes it: its public names, the environment read once, every module's `__all__`."""

from __future__ import annotations

import importlib
import os
import threading
import time

import pytest
from fastapi.testclient import TestClient

import server
from kb.settings import Settings
from server import create_app


def test_public_api() -> None:
    assert server.__all__ == ["create_app"]


def test_the_app_reads_the_environment_once_when_it_is_made(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`create_app()` (as uvicorn's factory calls it) resolves the settings then; the app, its middleware
    and its routes all use that one object, whatever the environment says later."""
    for name in [name for name in os.environ if name.startswith("KB_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("KB_DATA_DIR", str(settings.data_dir))
    monkeypatch.setenv("KB_ALLOWED_ORIGINS", "https://docs.example.com")
    app = create_app()
    monkeypatch.setenv("KB_ALLOWED_ORIGINS", "https://other.example.net")
    monkeypatch.setenv("KB_MAX_QUERY_CHARS", "5")
    with TestClient(app) as client:
        allowed = client.get("/api/widget-config", headers={"Origin": "https://docs.example.com"})
        assert allowed.headers["access-control-allow-origin"] == "https://docs.example.com"
        assert allowed.json()["max_message_chars"] == Settings().max_query_chars
        other = client.get("/api/widget-config", headers={"Origin": "https://other.example.net"})
        assert "access-control-allow-origin" not in other.headers
        assert client.get("/api/search", params={"q": "how do I resume training"}).status_code == 200


@pytest.mark.parametrize(
    "module",
    [
        "server.app",
        "kb.chat",
        "server.deps",
        "server.error_handler",
        "server.rendering.strings",
        "server.rendering.markdown",
        "server.schemas",
        "server.rendering.templates",
        "server.routes",
        "kb.llm",
    ],
)
def test_exported_members_exist(module: str) -> None:
    loaded = importlib.import_module(module)
    assert loaded.__all__ and all(hasattr(loaded, name) for name in loaded.__all__)


def test_shutting_down_waits_for_a_read_the_watch_began(settings: Settings, monkeypatch: pytest.MonkeyPatch) -> None:
    """The watch reads the harvested drafts in a worker thread; cancelling the watch at shutdown does not stop that
    thread, so the insights database closes only once the read has ended (closing a SQLite connection another thread
    is reading on crashes the process)."""
    from kb.insights import InsightsStore
    from kb.insights.harvested import HarvestedDrafts
    from tests.support.servers import LoopbackServer

    happened: list[str] = []
    ours: list[InsightsStore] = []
    reading = threading.Event()
    real_state, real_close = HarvestedDrafts.state, InsightsStore.close

    def slow_state(self: HarvestedDrafts) -> tuple[object, ...]:
        # This app's store, read by the watch's worker thread (not start-up's read, nor another test's app).
        if ours and self is ours[0].drafts and threading.current_thread().name.startswith("asyncio"):
            reading.set()
            time.sleep(0.5)
            happened.append("read ended")
        return real_state(self)

    def close(self: InsightsStore) -> None:
        if ours and self is ours[0]:
            happened.append("database closed")
        real_close(self)

    monkeypatch.setattr(HarvestedDrafts, "state", slow_state)
    monkeypatch.setattr(InsightsStore, "close", close)
    app = create_app(settings.with_(reload_interval=0.05))
    with LoopbackServer(app):
        ours.append(app.state.recorder.store)
        assert reading.wait(30), "the watch never read the drafts"
    assert happened[-2:] == ["read ended", "database closed"], happened
