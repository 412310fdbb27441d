"""`GET /api/entries/{id}`, and the API's 404 and 405 as JSON."""

from __future__ import annotations

from fastapi.testclient import TestClient

from tests.support.api import RESUME_ZH, error_body


def test_entry(client: TestClient) -> None:
    first = client.get("/api/search", params={"q": RESUME_ZH}).json()["hits"][0]
    body = client.get(f"/api/entries/{first['id']}").json()
    assert body["id"] == first["id"] and body["question"] == first["question"]
    assert body["answer"] == first["answer"] and body["answer_html"] == first["answer_html"]
    assert len(body["related"]) == 3 and first["id"] not in {h["id"] for h in body["related"]}


def test_unknown_entry_is_a_json_404(client: TestClient) -> None:
    message = error_body(client.get("/api/entries/no-such-entry"), 404)
    assert "no-such-entry" in message


def test_unknown_api_path_and_wrong_method(client: TestClient) -> None:
    error_body(client.get("/api/nothing-here"), 404)
    error_body(client.get("/api/chat"), 405)
