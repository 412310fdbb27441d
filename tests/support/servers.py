"""Real servers for tests: an app served by uvicorn on a loopback port, its own data directory, its top hits."""

from __future__ import annotations

import sqlite3
import threading
import time
from typing import Any, Callable

import pytest
import uvicorn
from fastapi.testclient import TestClient

from kb.settings import Settings
from server.settings import ServerSettings


class LoopbackServer:
    """A real uvicorn serving an ASGI app on 127.0.0.1 at a free port, in a thread."""

    def __init__(self, app: Any, **options: Any):
        """`options`: more of uvicorn's settings, as `kb serve` passes them (`kbcli.serve.uvicorn_options`)."""
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
