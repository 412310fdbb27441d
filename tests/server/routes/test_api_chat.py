"""`POST /api/chat`: answers with their sources, suggestions, follow-ups, a chat about an entry, bad input, streaming."""

from __future__ import annotations

import json
from typing import Any

import pytest
from fastapi.testclient import TestClient

from tests.support.api import HIT_KEYS, RESUME_ZH, error_body


def test_chat_answers_with_the_best_entry_and_its_sources(client: TestClient) -> None:
    body = client.post("/api/chat", json={"message": RESUME_ZH}).json()
    assert set(body) == {
        "answer",
        "answer_html",
        "answered",
        "mode",
        "sources",
        "lang",
        "session",
        "note",
        "confidence",
        "state",
        "see_also",
    }
    assert body["note"] is None  # the question names no framework
    assert body["see_also"] == []  # resolved threads only for a question the FAQ does not cover
    assert 0.0 <= body["confidence"] <= 1.0
    assert body["answered"] is True and body["mode"] == "extractive" and body["lang"] == "zh"
    assert body["state"] == "answered"
    best = body["sources"][0]
    assert "续训" in best["question"] and best["answer"].strip()[:20] in body["answer"]
    assert [h["id"] for h in body["sources"]] == ["slime-b0ab398d"]  # no other entry comes near enough to be related
    assert all(set(h) == HIT_KEYS for h in body["sources"])
    related = client.post("/api/chat", json={"message": "OOM when training with vLLM"}).json()["sources"]
    assert 2 <= len(related) <= 4


def test_chat_without_a_confident_answer_gives_suggestions(client: TestClient) -> None:
    body = client.post("/api/chat", json={"message": "what is the best pizza in Naples?", "lang": "en"}).json()
    assert body["answered"] is False and body["lang"] == "en"
    assert body["sources"], "the nearest entries come back as suggestions"
    assert client.post("/api/chat", json={"message": "训练时 OOM 了怎么办", "hl": "en"}).json()["lang"] == "en"


def test_chat_follow_up_uses_the_history(client: TestClient) -> None:
    question = "How do I convert Megatron checkpoints to HF in ChatLearn?"
    first = client.post("/api/chat", json={"message": question}).json()
    assert first["sources"][0]["source"]["name"].startswith("chatlearn")
    history = [{"role": "user", "content": question}, {"role": "assistant", "content": first["answer"]}]
    follow = client.post("/api/chat", json={"message": "what about for ROLL?", "history": history}).json()
    assert follow["state"] in ("answered", "likely")  # alone, "what about for ROLL?" is no question the FAQ covers
    assert follow["sources"][0]["source"]["name"] == "roll"
    assert "HF" in follow["sources"][0]["question"]


def test_chat_about_an_entry_reads_the_question_with_it(client: TestClient) -> None:
    entry_id = client.get("/api/search", params={"q": "slime 如何续训？"}).json()["hits"][0]["id"]
    body = client.post("/api/chat", json={"message": "how do I do that on 2 nodes?", "about": entry_id}).json()
    assert body["answered"] is True and body["sources"][0]["id"] == entry_id and body["lang"] == "en"
    unknown = client.post("/api/chat", json={"message": "how do I do that on 2 nodes?", "about": "nope"})
    assert (unknown.status_code, unknown.json()["error"]) == (422, "about: no entry with id 'nope'")


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ("{not json", "body"),
        ("[1, 2]", "body"),
        ("{}", "message"),
        ('{"message": 42}', "message"),
        ('{"message": ""}', "message"),
        ('{"message": "oom", "history": "yes"}', "history"),
        ('{"message": "oom", "history": [{"role": "system", "content": "x"}]}', "history.0.role"),
        ('{"message": "oom", "lang": "fr"}', "lang"),
        (json.dumps({"message": "x" * 100_000}), "message"),
    ],
)
def test_chat_rejects_malformed_input_naming_the_field(client: TestClient, body: str, field: str) -> None:
    response = client.post("/api/chat", content=body, headers={"Content-Type": "application/json"})
    assert error_body(response, 422).startswith(f"{field}: ")


def _events(text: str) -> list[tuple[str, dict[str, Any]]]:
    events = []
    for block in text.strip().split("\n\n"):
        lines = dict(line.split(": ", 1) for line in block.split("\n"))
        events.append((lines["event"], json.loads(lines["data"])))
    return events


def test_chat_streams_server_sent_events(client: TestClient) -> None:
    # An address of its own: the suite's other chats have made its voting sessions, and past 20
    # new sessions an hour an address shares one.
    client = TestClient(client.app, client=("192.0.2.80", 50000))
    whole = client.post("/api/chat", json={"message": RESUME_ZH}).json()
    with client.stream(
        "POST", "/api/chat", json={"message": RESUME_ZH}, headers={"Accept": "text/event-stream"}
    ) as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        events = _events(response.read().decode())
    names = [name for name, _ in events]
    assert names[0] == "sources" and names[-1] == "done" and "delta" in names
    assert "".join(data["text"] for name, data in events if name == "delta") == whole["answer"]
    done = events[-1][1]
    assert {**done, "session": None} == {**whole, "session": None}
    assert done["session"] != whole["session"]  # each reply carries a voting session of its own


def test_streamed_chat_reports_bad_input_before_streaming(client: TestClient) -> None:
    response = client.post("/api/chat", json={"message": " "}, headers={"Accept": "text/event-stream"})
    assert error_body(response, 422).startswith("message: ")
