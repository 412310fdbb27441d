"""The confidence in every JSON answer, and a channel's own operating point, through the JSON API."""

from __future__ import annotations

from fastapi.testclient import TestClient

from kb.settings import Settings
from server.app import create_app

RESUME = "how do I resume training in slime?"  # the confidence is about 0.53: answered at precision 0.6, not 0.8


def test_every_json_channel_gives_the_confidence(settings: Settings) -> None:
    app = create_app(settings.with_(answer_precision=0.8, channel_precision="api=0.6"))
    with TestClient(app) as client:
        search = client.get("/api/search", params={"q": RESUME}).json()
        chat = client.post("/api/chat", json={"message": RESUME}).json()
    assert search["answered"] is True and 0.3 < search["confidence"] < 1
    assert chat["confidence"] == search["confidence"]
    with TestClient(create_app(settings.with_(answer_precision=0.8))) as client:
        assert client.get("/api/search", params={"q": RESUME}).json()["answered"] is False
