"""`GET /healthz`: what a load balancer and an operator read."""

from __future__ import annotations

from fastapi.testclient import TestClient


def test_health(client: TestClient) -> None:
    response = client.get("/healthz")
    body = response.json()
    assert body["ok"] is True and body["entries"] >= 50
    assert body["model"] and body["built_at"] and 0 <= body["index_age_seconds"] < 3600
    assert body["build"] == response.headers["x-kb-index"] == client.app.state.reloader.served.build
    assert body["llm"] is False
