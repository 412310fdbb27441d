"""The JSON API as DESIGN.md defines it: search, chat (whole and streamed), entries, health, errors."""

from __future__ import annotations

import importlib
import json
import os
import re
import socket
from typing import Any

import pytest
from fastapi.testclient import TestClient

import server
from kb.settings import Settings
from server import create_app

HIT_KEYS = {
    "id",
    "question",
    "answer",
    "answer_html",
    "score",
    "source",
    "url",
    "permalink",
    "section",
    "tags",
    "lang",
    "languages",
    "note",
    "translated_by",
    "original_url",
    "matched",
    "file",
}
SOURCE_KEYS = {"name", "title", "titles", "url", "framework", "version"}
RESUME_ZH = "slime 如何续训？"
RESUME_EN = "how do I resume training from a checkpoint in slime"


def error_body(response: Any, status: int) -> str:
    assert response.status_code == status, response.text
    body = response.json()
    assert set(body) == {"ok", "error", "status"}
    assert body["ok"] is False and body["status"] == status
    return body["error"]


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
        "server.errors",
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


@pytest.mark.parametrize(
    ("query", "lang", "question"), [(RESUME_ZH, "zh", "如何续训？"), (RESUME_EN, "en", "How do I resume training?")]
)
def test_search_finds_the_entry_in_both_languages(client: TestClient, query: str, lang: str, question: str) -> None:
    body = client.get("/api/search", params={"q": query}).json()
    assert body["query"] == query and body["answered"] is True and body["hl"] == lang
    first = body["hits"][0]
    assert first["question"] == question and first["source"]["name"] == "slime"
    assert first["lang"] == lang and first["languages"] == ["en", "zh"] and first["note"] == ""


def test_search_hit_shape(client: TestClient) -> None:
    body = client.get("/api/search", params={"q": "max_tokens_per_gpu OOM", "k": 3}).json()
    assert set(body) == {"query", "answered", "hl", "hits", "shown", "note"}
    assert len(body["hits"]) == 3
    for rank, hit in enumerate(body["hits"]):
        assert set(hit) == HIT_KEYS
        assert set(hit["source"]) == SOURCE_KEYS
        assert hit["permalink"] == f"http://testserver/entries/{hit['id']}"
        assert hit["url"].startswith("https://") and hit["source"]["url"].startswith("https://")
        assert "<script" not in hit["answer_html"]
        assert hit["lang"] in ("zh", "en")
        if rank:
            assert hit["score"] <= body["hits"][rank - 1]["score"]
    assert "max_tokens_per_gpu" in body["hits"][0]["matched"]


def test_search_filters(client: TestClient) -> None:
    by_source = client.get("/api/search", params={"q": "OOM", "source": "roll", "k": 10}).json()
    assert by_source["hits"] and {h["source"]["name"] for h in by_source["hits"]} == {"roll"}
    tag = by_source["hits"][0]["tags"][0]
    by_tag = client.get("/api/search", params={"q": "OOM", "tag": tag, "k": 10}).json()
    assert by_tag["hits"] and all(tag in h["tags"] for h in by_tag["hits"])


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"q": ""}, "q"),
        ({"q": "   "}, "q"),
        ({}, "q"),
        ({"q": "x" * 60_000}, "q"),
        ({"q": "oom", "k": 0}, "k"),
        ({"q": "oom", "k": "many"}, "k"),
        ({"q": "oom", "source": "nope"}, "source"),
        ({"q": "oom", "tag": "nope"}, "tag"),
        ({"q": "oom", "lang": "fr"}, "lang"),
    ],
)
def test_search_rejects_bad_input_naming_the_field(client: TestClient, params: dict[str, Any], field: str) -> None:
    message = error_body(client.get("/api/search", params=params), 422)
    assert message.startswith(f"{field}: ")
    assert len(message) < 500


def test_search_returns_markup_in_a_query_as_data(client: TestClient) -> None:
    query = "<script>alert(1)</script> [x](javascript:alert(1))"
    response = client.get("/api/search", params={"q": query})
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    assert response.json()["query"] == query
    assert "javascript:" not in "".join(h["answer_html"] for h in response.json()["hits"])


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


def test_health(client: TestClient) -> None:
    response = client.get("/healthz")
    body = response.json()
    assert body["ok"] is True and body["entries"] >= 50
    assert body["model"] and body["built_at"] and 0 <= body["index_age_seconds"] < 3600
    assert body["build"] == response.headers["x-kb-index"] == client.app.state.reloader.served.build
    assert body["llm"] is False


def test_chat_answers_with_the_best_entry_and_its_sources(client: TestClient) -> None:
    body = client.post("/api/chat", json={"message": RESUME_ZH}).json()
    assert set(body) == {"answer", "answer_html", "answered", "mode", "sources", "lang", "session", "note"}
    assert body["note"] is None  # the question names no framework
    assert body["answered"] is True and body["mode"] == "extractive" and body["lang"] == "zh"
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
    assert follow["answered"] is True
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


@pytest.mark.parametrize(
    ("path", "assets"), [("/docs", ["swagger-ui-bundle.js", "swagger-ui.css"]), ("/redoc", ["redoc.standalone.js"])]
)
def test_the_api_docs_load_their_assets_from_this_server(client: TestClient, path: str, assets: list[str]) -> None:
    page = client.get(path)
    assert page.status_code == 200 and "cdn" not in page.text and "https://" not in page.text
    policy = page.headers["content-security-policy"]
    assert re.search(r"script-src 'self'( 'sha256-[\w+/=]+')*;", policy) and "https:" not in policy
    for name in assets:
        assert f'"/static/api-docs/{name}"' in page.text
        asset = client.get(f"/static/api-docs/{name}")
        assert asset.status_code == 200 and len(asset.content) > 100_000


def test_openapi_documents_every_route_with_a_summary(client: TestClient) -> None:
    assert client.get("/docs").status_code == 200
    spec = client.get("/openapi.json").json()
    for path, method in [
        ("/api/search", "get"),
        ("/api/chat", "post"),
        ("/api/entries/{entry_id}", "get"),
        ("/healthz", "get"),
    ]:
        operation = spec["paths"][path][method]
        assert operation["summary"] and not operation["summary"].startswith(method.title())
    assert "text/event-stream" in spec["paths"]["/api/chat"]["post"]["responses"]["200"]["content"]
    assert not any(p.startswith(("/entries", "/search", "/chat", "/lang")) for p in spec["paths"])


def test_a_100_kb_query_over_real_http(settings: Any, serve: Any) -> None:
    """A real uvicorn on loopback; the test client cannot send URLs this long, a raw socket can."""
    from server import create_app

    live = serve(create_app(settings))
    host, port = live.url.removeprefix("http://").split(":")
    for path in (b"/api/search", b"/search"):
        with socket.create_connection((host, int(port)), timeout=10) as sock:
            sock.sendall(
                b"GET " + path + b"?q=" + b"x" * 100_000 + b" HTTP/1.1\r\nHost: kb\r\n"
                b"Accept: text/html\r\nConnection: close\r\n\r\n"
            )
            reply = b""
            while chunk := sock.recv(65536):
                reply += chunk
        head, _, body = reply.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 422"), head[:100]
        assert b"the query is 100000 characters" in body
        assert len(body) < 30_000


def test_deep_links_are_percent_encoded_as_browsers_send_them(client: TestClient) -> None:
    """A Chinese heading's anchor comes percent-encoded in every field and every entry, never raw."""
    hit = client.get("/api/search", params={"q": "续跑调整 lr 报错", "k": 1}).json()["hits"][0]
    assert (
        hit["url"]
        == "https://github.com/alibaba/ChatLearn/blob/v1.0.3/docs/zh/faq.md#%E7%BB%AD%E8%B7%91%E8%B0%83%E6%95%B4-lr-%E6%8A%A5%E9%94%99"
    )
    english = client.get("/api/search", params={"q": "续跑调整 lr 报错", "k": 1, "hl": "en"}).json()["hits"][0]
    assert english["url"].endswith("/docs/en/faq.md#adjusting-lr-error-in-continued-training")
    ids = {
        h["id"]
        for q in ("oom", "checkpoint", "megatron", "ray", "训练", "deepspeed")
        for h in client.get("/api/search", params={"q": q, "k": 50}).json()["hits"]
    }
    for entry_id in ids:
        for hl in ("zh", "en"):
            body = client.get(f"/api/entries/{entry_id}", params={"hl": hl}).json()
            for url in (body["url"], body["original_url"] or "", *(h["url"] for h in body["related"])):
                assert url.isascii(), (entry_id, url)
