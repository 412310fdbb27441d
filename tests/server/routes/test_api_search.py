"""`GET /api/search`: the right entry in both languages, the hit's fields, filters, bad input, long queries, deep links."""

from __future__ import annotations

import socket
from typing import Any

import pytest
from fastapi.testclient import TestClient

from tests.support.api import HIT_KEYS, RESUME_EN, RESUME_ZH, SOURCE_KEYS, error_body


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
    assert set(body) == {"query", "answered", "confidence", "state", "hl", "hits", "shown", "note", "see_also"}
    assert body["see_also"] == []  # resolved threads only for a question the FAQ does not cover
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


@pytest.mark.slow
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
