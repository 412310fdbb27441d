"""LLM answers: the client, citations, streaming, and falling back to the extractive answer.

No LLM can run here, so these tests start a small OpenAI-compatible chat-completions server
on a 127.0.0.1 port (real uvicorn, real HTTP, real server-sent events). It stands in for a
real endpoint such as vLLM, sglang or Ollama. The model name picks its behaviour: `good`
streams an answer with citations, `broken` answers HTTP 500, `slow` waits 3 s before answering, `stuck` 12 s,
`dribble` keeps sending past the deadline, `empty` sends nothing but `[DONE]`.
"""

from __future__ import annotations

import asyncio
import json
import socket
import time
from typing import Any, Callable, Iterator

import pytest
from fastapi import FastAPI
from fastapi.responses import StreamingResponse
from fastapi.testclient import TestClient

from kb.entries import Entry
from kb.errors import LLMFailed
from kb.hits import Hit
from kb.llm import LLM, build_messages, link_citations
from kb.settings import Settings
from server import create_app
from tests.support.forms import form_token
from tests.support.llm import GOOD_PIECES, fake_llm_app


@pytest.fixture(scope="module")
def llm_server(serve: Callable[[Any], Any]) -> Iterator[tuple[str, list[dict[str, Any]]]]:
    requests: list[dict[str, Any]] = []
    server = serve(fake_llm_app(requests))
    yield f"{server.url}/v1", requests


def _entry(n: int) -> Entry:
    return Entry(
        id=f"demo-{n}",
        question=f"Question {n}?",
        answer=f"Answer {n}.",
        source="demo",
        source_title="Demo FAQ",
        source_version="v1",
        source_url="https://example.org/faq",
        framework="Demo",
        section="",
        url="https://example.org/faq#q",
        lang="en",
        tags=("usage",),
    )


HITS = [Hit(_entry(1), 0.9, 1), Hit(_entry(2), 0.5, 2)]


def _href(hit: Hit) -> str:
    return f"/entries/{hit.entry.id}"


def test_messages_number_the_entries_and_name_the_language() -> None:
    messages = build_messages(
        "how to resume?", HITS, "zh", [{"role": "user", "content": "earlier"}, {"role": "bogus", "content": "x"}]
    )
    assert messages[0]["role"] == "system" and "Simplified Chinese" in messages[0]["content"]
    assert messages[1] == {"role": "user", "content": "earlier"}
    assert "[1] Question: Question 1?" in messages[-1]["content"]
    assert "[2] Question: Question 2?" in messages[-1]["content"]
    assert messages[-1]["content"].endswith("Question: how to resume?")


@pytest.mark.parametrize(
    ("text", "linked"),
    [
        ("Do this [1].", "Do this [\\[1\\]](/entries/demo-1)."),
        ("Both [1, 2]", "Both [\\[1\\]](/entries/demo-1)[\\[2\\]](/entries/demo-2)"),
        ("中文【2】", "中文[\\[2\\]](/entries/demo-2)"),
        ("No such entry [7].", "No such entry [7]."),
        ("Already [1](https://x.org)", "Already [1](https://x.org)"),
        ("list[0] stays", "list[0] stays"),
    ],
)
def test_link_citations(text: str, linked: str) -> None:
    assert link_citations(text, HITS, _href) == linked


def test_client_streams_pieces_and_sends_the_key(llm_server: tuple[str, list[dict[str, Any]]]) -> None:
    url, requests = llm_server
    llm = LLM(Settings(llm_base_url=url, llm_model="good", llm_api_key="sekret", llm_timeout=5))
    try:
        pieces = list(llm.stream("how to resume?", HITS, "en"))
    finally:
        llm.close()
    assert pieces == GOOD_PIECES
    sent = requests[-1]
    assert sent["headers"]["authorization"] == "Bearer sekret"
    assert sent["body"]["stream"] is True and sent["body"]["model"] == "good"


@pytest.mark.slow
@pytest.mark.parametrize(
    ("model", "message"),
    [("broken", "HTTP 500"), ("stuck", "within 0.5 s"), ("dribble", "within 0.5 s"), ("empty", "empty")],
)
def test_client_raises_llm_error(llm_server: tuple[str, list[dict[str, Any]]], model: str, message: str) -> None:
    url, _ = llm_server
    llm = LLM(Settings(llm_base_url=url, llm_model=model, llm_timeout=0.5))
    started = time.monotonic()
    try:
        with pytest.raises(LLMFailed, match=message):
            llm.answer("q", HITS, "en")
    finally:
        llm.close()
    assert time.monotonic() - started < 6  # the 12 s stand-in was not waited for


def test_client_raises_llm_error_when_nothing_listens() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    llm = LLM(Settings(llm_base_url=f"http://127.0.0.1:{port}/v1", llm_model="good", llm_timeout=2))
    try:
        with pytest.raises(LLMFailed, match="ConnectError"):
            llm.answer("q", HITS, "en")
    finally:
        llm.close()


def test_llm_needs_both_url_and_model() -> None:
    assert not LLM.configured(Settings(llm_base_url="http://127.0.0.1:1/v1"))
    with pytest.raises(LLMFailed, match="KB_LLM_MODEL"):
        LLM(Settings(llm_base_url="http://127.0.0.1:1/v1"))


@pytest.fixture(scope="module")
def llm_client(
    settings: Settings, llm_server: tuple[str, list[dict[str, Any]]]
) -> Iterator[Callable[[str, float], TestClient]]:
    """`make(model, timeout)`: the app answering with the stand-in LLM under that model name."""
    clients: list[TestClient] = []

    def make(model: str, timeout: float = 5) -> TestClient:
        app = create_app(settings.with_(llm_base_url=llm_server[0], llm_model=model, llm_timeout=timeout))
        client = TestClient(app).__enter__()
        clients.append(client)
        return client

    yield make
    for client in clients:
        client.__exit__(None, None, None)


QUESTION = {"message": "slime 如何续训？", "lang": "zh"}


def test_chat_answer_written_by_the_llm_cites_entries(llm_client: Callable[..., TestClient]) -> None:
    client = llm_client("good")
    body = client.post("/api/chat", json=QUESTION).json()
    assert body["mode"] == "llm" and body["answered"] is True
    first = body["sources"][0]
    assert f"[\\[1\\]]({first['permalink']})" in body["answer"]
    assert f'href="{first["permalink"]}"' in body["answer_html"]
    assert client.get("/healthz").json()["llm"] is True


def _events(text: str) -> list[tuple[str, dict[str, Any]]]:
    events = []
    for block in text.strip().split("\n\n"):
        lines = dict(line.split(": ", 1) for line in block.split("\n"))
        events.append((lines["event"], json.loads(lines["data"])))
    return events


def test_chat_streams_the_llm_answer(llm_client: Callable[..., TestClient]) -> None:
    client = llm_client("good")
    with client.stream("POST", "/api/chat", json=QUESTION, headers={"Accept": "text/event-stream"}) as response:
        assert response.headers["content-type"].startswith("text/event-stream")
        events = _events(response.read().decode())
    names = [name for name, _ in events]
    assert names[0] == "sources" and names[-1] == "done"
    assert [data["text"] for name, data in events if name == "delta"] == GOOD_PIECES
    done = events[-1][1]
    assert done["mode"] == "llm" and "[\\[1\\]]" in done["answer"]


@pytest.mark.slow
@pytest.mark.parametrize(("model", "timeout"), [("broken", 5.0), ("stuck", 0.5)])
def test_chat_falls_back_to_the_extractive_answer(
    llm_client: Callable[..., TestClient], client: TestClient, model: str, timeout: float
) -> None:
    extractive = client.post("/api/chat", json=QUESTION).json()
    assert extractive["mode"] == "extractive"
    started = time.monotonic()
    body = llm_client(model, timeout).post("/api/chat", json=QUESTION).json()
    assert time.monotonic() - started < 6  # the 12 s stand-in was not waited for
    assert body["mode"] == "fallback"
    assert body["answer"] == extractive["answer"]
    assert [s["id"] for s in body["sources"]] == [s["id"] for s in extractive["sources"]]


@pytest.mark.slow
def test_streamed_fallback_replaces_the_pieces(llm_client: Callable[..., TestClient]) -> None:
    client = llm_client("dribble", 0.5)
    with client.stream("POST", "/api/chat", json=QUESTION, headers={"Accept": "text/event-stream"}) as response:
        events = _events(response.read().decode())
    assert any(name == "delta" for name, _ in events)
    done = events[-1]
    assert done[0] == "done" and done[1]["mode"] == "fallback"


@pytest.mark.slow
def test_fallback_is_shown_on_the_page(llm_client: Callable[..., TestClient]) -> None:
    client = llm_client("broken")
    form = {"message": "slime 如何续训？", "history": "[]", "form_token": form_token(client)}
    page = client.post("/chat", data=form, headers={"Accept-Language": "en"})
    assert page.status_code == 200
    assert "language model could not answer" in page.text


def test_unconfident_questions_do_not_go_to_the_llm(
    llm_client: Callable[..., TestClient], llm_server: tuple[str, list[dict[str, Any]]]
) -> None:
    client = llm_client("good")
    before = len(llm_server[1])
    body = client.post("/api/chat", json={"message": "what is the best pizza in Naples?"}).json()
    assert body["answered"] is False and body["mode"] == "extractive"
    assert len(llm_server[1]) == before


def test_a_chat_stream_the_reader_leaves_stops_reading_the_llm(settings: Settings, serve: Callable[..., Any]) -> None:
    import httpx

    sent: list[int] = []
    closed: list[float] = []
    llm = FastAPI()

    @llm.post("/v1/chat/completions")
    async def completions() -> Any:  # 200 pieces, one every 50 ms: 10 s to write in full
        async def pieces() -> Any:
            try:
                for n in range(200):
                    data = {"choices": [{"delta": {"content": f"word{n} "}}]}
                    yield f"data: {json.dumps(data)}\n\n"
                    sent.append(n)
                    await asyncio.sleep(0.05)
                yield "data: [DONE]\n\n"
            finally:
                closed.append(time.monotonic())

        return StreamingResponse(pieces(), media_type="text/event-stream")

    llm_url = serve(llm).url + "/v1"
    url = serve(create_app(settings.with_(llm_base_url=llm_url, llm_model="m", llm_timeout=30))).url
    question = {"message": "slime 如何续训？", "lang": "zh"}
    with httpx.stream("POST", f"{url}/api/chat", json=question, headers={"Accept": "text/event-stream"}) as reply:
        for line in reply.iter_lines():
            if line == "event: delta":
                break  # the reader closes the tab once the answer starts
    left = time.monotonic()
    deadline = left + 5
    while not closed and time.monotonic() < deadline:
        time.sleep(0.05)
    assert closed and closed[0] - left < 2  # the LLM's stream was closed within 2 s, not after 10
    assert len(sent) < 60
