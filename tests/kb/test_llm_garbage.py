"""An LLM endpoint that answers garbage: the chat falls back to the extractive answer, marked `fallback`.

tests/support/llm.py covers an endpoint that is down, fails with HTTP 500, is slow, stuck,
dribbles past the deadline or sends nothing. Here a stand-in on a loopback port answers
200 with what is not a chat-completions stream: an HTML error page, a JSON object of
another shape, a stream whose events are not JSON, or JSON events of the wrong shape.
The model name picks the garbage.
"""

from __future__ import annotations

import json
from typing import Any, Callable, Iterator

import pytest
from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, JSONResponse, Response, StreamingResponse
from fastapi.testclient import TestClient

from kb.settings import Settings
from server import create_app
from tests.support.forms import form_token

QUESTION = {"message": "slime 如何续训？", "lang": "zh"}
ERROR_PAGE = "<html><head><title>502 Bad Gateway</title></head><body><h1>502 Bad Gateway</h1><hr>nginx</body></html>"

# What each model sends as its stream's events (after `data: `), for the stream cases.
EVENTS: dict[str, list[str]] = {
    "events-not-json": ["<html>oops</html>"],
    "choices-not-a-list": ['{"choices": "none today"}'],
    "choice-not-an-object": ['{"choices": ["text"]}'],
    "delta-not-an-object": ['{"choices": [{"delta": "text"}]}'],
    "content-not-text": ['{"choices": [{"delta": {"content": 42}}]}', '{"choices": [{"delta": {"content": ["a"]}}]}'],
    "error-event": ['{"error": {"message": "model overloaded"}}'],
    "nested-1000-deep": ["[" * 1000 + "]" * 1000],
    "number-5000-digits": ["1" * 5000],  # Python reads an integer of at most 4,300 digits
}


def garbage_llm_app() -> FastAPI:
    app = FastAPI()

    @app.post("/v1/chat/completions")
    async def completions(request: Request) -> Response:
        model = (await request.json())["model"]
        if model == "html-page":
            return HTMLResponse(ERROR_PAGE)  # a proxy's error page, sent with 200
        if model == "html-502":
            return HTMLResponse(ERROR_PAGE, status_code=502)
        if model == "json-object":
            return JSONResponse({"id": "x", "object": "something.else", "data": [1, 2, 3]})
        if model == "deep-object":
            return Response("[" * 1000 + "]" * 1000, media_type="application/json")
        if model == "long-number":
            return Response("9" * 5000, media_type="application/json")
        if model == "plain-text":
            return Response(b"\x00\xff\xfe not even text", media_type="text/plain")

        async def events() -> Any:
            for data in EVENTS[model]:
                yield f"data: {data}\n\n"
            yield "data: [DONE]\n\n"

        return StreamingResponse(events(), media_type="text/event-stream")

    return app


MODELS = ["html-page", "html-502", "json-object", "deep-object", "long-number", "plain-text", *EVENTS]


@pytest.fixture(scope="module")
def with_llm(settings: Settings, serve: Callable[[Any], Any]) -> Iterator[Callable[[str], TestClient]]:
    url = serve(garbage_llm_app()).url + "/v1"
    clients: dict[str, TestClient] = {}

    def make(model: str) -> TestClient:
        if model not in clients:
            app = create_app(settings.with_(llm_base_url=url, llm_model=model, llm_timeout=5))
            clients[model] = TestClient(app, raise_server_exceptions=False).__enter__()
        return clients[model]

    yield make
    for client in clients.values():
        client.__exit__(None, None, None)


@pytest.mark.slow
@pytest.mark.parametrize("model", MODELS)
def test_garbage_from_the_llm_gives_the_extractive_answer(
    with_llm: Callable[[str], TestClient], client: TestClient, model: str
) -> None:
    extractive = client.post("/api/chat", json=QUESTION).json()
    response = with_llm(model).post("/api/chat", json=QUESTION)
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["mode"] == "fallback"
    assert body["answer"] == extractive["answer"]
    assert [s["id"] for s in body["sources"]] == [s["id"] for s in extractive["sources"]]


@pytest.mark.parametrize("model", MODELS)
def test_garbage_in_a_stream_ends_with_the_extractive_answer(with_llm: Callable[[str], TestClient], model: str) -> None:
    with with_llm(model).stream(
        "POST", "/api/chat", json=QUESTION, headers={"Accept": "text/event-stream"}
    ) as response:
        text = response.read().decode()
    events = [
        (lines["event"], json.loads(lines["data"]))
        for lines in (dict(line.split(": ", 1) for line in block.split("\n")) for block in text.strip().split("\n\n"))
    ]
    assert events[0][0] == "sources" and events[-1][0] == "done", [name for name, _ in events]
    assert events[-1][1]["mode"] == "fallback"


def test_the_chat_page_says_the_model_could_not_answer(with_llm: Callable[[str], TestClient]) -> None:
    client = with_llm("html-page")
    form = {"message": "slime 如何续训？", "history": "[]", "form_token": form_token(client)}
    page = client.post("/chat", data=form, headers={"Accept-Language": "en"})
    assert page.status_code == 200
    assert "language model could not answer" in page.text


def test_a_chat_history_holding_a_number_too_long_to_read_is_dropped(client: TestClient) -> None:
    history = json.dumps([{"role": "user", "content": "hi"}])[:-1] + ", " + "1" * 5000 + "]"
    form = {"message": "slime 如何续训？", "history": history, "form_token": form_token(client)}
    page = client.post("/chat", data=form, headers={"Accept-Language": "en"})
    assert page.status_code == 200
