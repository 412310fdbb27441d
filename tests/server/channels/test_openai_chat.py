"""The OpenAI-compatible API as chat front ends reach it: the official `openai` client against a real uvicorn,
whole and streamed, the models, the keys, and errors in OpenAI's shape."""

from __future__ import annotations

import re
import time
from typing import Any, Iterator

import httpx
import openai
import pytest

from tests.support.paths import ROOT
from tests.support.timed import declared, timed

KEY = "sk-kb-test-51c2"


@pytest.fixture(scope="module")
def server(settings: Any, serve: Any) -> Iterator[Any]:
    from server import create_app

    yield serve(create_app(settings.with_(api_keys=f"other-key, {KEY}")))


@pytest.fixture(scope="module")
def client(server: Any) -> openai.OpenAI:
    return openai.OpenAI(base_url=f"{server.url}/v1", api_key=KEY, max_retries=0)


def test_the_models_list_this_knowledge_base(client: openai.OpenAI) -> None:
    models = client.models.list().data
    assert [m.id for m in models] == ["kb"]
    assert models[0].created <= time.time() and client.models.retrieve("kb").id == "kb"


def test_a_question_answered_whole(client: openai.OpenAI, server: Any, settings: Any) -> None:
    completion = client.chat.completions.create(
        model="kb",
        messages=[
            {"role": "system", "content": "You are a helpful assistant."},
            {"role": "user", "content": "how do I resume training with slime?"},
        ],
        temperature=0.2,
        max_tokens=400,
    )
    choice = completion.choices[0]
    assert choice.finish_reason == "stop" and choice.message.role == "assistant"
    assert "--load" in choice.message.content  # the FAQ's own answer (no LLM is configured here)
    assert "](https://github.com/THUDM/slime" in choice.message.content  # its source, linked
    extra = completion.model_extra
    assert extra["answered"] is True and extra["hits"][0]["id"] == "slime-b0ab398d"
    assert extra["hits"][0]["permalink"] == f"{server.url}/entries/slime-b0ab398d"
    recorded = _recorded(server, settings, "how do I resume training with slime?")
    assert recorded.channel == "openai" and recorded.answered
    assert timed(httpx.get(f"{server.url}/metrics").text, "openai") == declared("openai") == {"chat"}


def test_a_question_streamed(client: openai.OpenAI) -> None:
    stream = client.chat.completions.create(
        model="kb", messages=[{"role": "user", "content": "slime 如何续训？"}], stream=True
    )
    chunks = list(stream)
    assert chunks[0].choices[0].delta.role == "assistant" and chunks[0].model_extra["hits"]
    assert chunks[-1].choices[0].finish_reason == "stop"
    text = "".join(c.choices[0].delta.content or "" for c in chunks)
    whole = client.chat.completions.create(model="kb", messages=[{"role": "user", "content": "slime 如何续训？"}])
    assert text == whole.choices[0].message.content and "来源" in text


def test_the_stream_ends_in_done(server: Any) -> None:
    with httpx.stream(
        "POST",
        f"{server.url}/v1/chat/completions",
        json={"model": "kb", "stream": True, "messages": [{"role": "user", "content": "how do I resume training"}]},
        headers={"Authorization": f"Bearer {KEY}"},
    ) as response:
        lines = [line for line in response.iter_lines() if line]
    assert response.headers["content-type"].startswith("text/event-stream")
    assert all(line.startswith("data: ") for line in lines) and lines[-1] == "data: [DONE]"


def test_a_follow_up_reads_the_conversation(client: openai.OpenAI, server: Any) -> None:
    history = [
        {"role": "user", "content": "how do I resume training with slime?"},
        {"role": "assistant", "content": "Set --load to the --save directory."},
    ]
    follow_up = {"role": "user", "content": "what about on 2 nodes?"}
    completion = client.chat.completions.create(model="kb", messages=[*history, follow_up])  # type: ignore[list-item]
    alone = client.chat.completions.create(model="kb", messages=[follow_up])  # type: ignore[list-item]
    chat = httpx.post(f"{server.url}/api/chat", json={"message": follow_up["content"], "history": history}).json()
    ids = [h["id"] for h in completion.model_extra["hits"]]
    assert ids == [h["id"] for h in chat["sources"]]  # as the chat reads the same conversation
    assert ids != [h["id"] for h in alone.model_extra["hits"]]


def test_no_answer_is_said_not_invented(client: openai.OpenAI) -> None:
    completion = client.chat.completions.create(
        model="kb", messages=[{"role": "user", "content": "what is the best pizza in Naples?"}]
    )
    from kb.wording import words

    assert completion.model_extra["answered"] is False
    assert completion.choices[0].message.content.startswith(words("answer_none", "en"))


def test_a_bad_key(server: Any) -> None:
    bad = openai.OpenAI(base_url=f"{server.url}/v1", api_key="sk-wrong", max_retries=0)
    with pytest.raises(openai.AuthenticationError) as caught:
        bad.chat.completions.create(model="kb", messages=[{"role": "user", "content": "resume"}])
    error = caught.value.body
    assert caught.value.status_code == 401 and error["code"] == "invalid_api_key"
    assert error["type"] == "invalid_request_error" and "KB_API_KEYS" in error["message"]
    with pytest.raises(openai.AuthenticationError):
        bad.models.list()


def test_malformed_bodies(client: openai.OpenAI, server: Any) -> None:
    with pytest.raises(openai.BadRequestError) as caught:
        client.chat.completions.create(model="kb", messages=[])
    assert caught.value.status_code == 400 and caught.value.body["param"] == "messages"
    with pytest.raises(openai.BadRequestError) as caught:
        client.chat.completions.create(model="kb", messages=[{"role": "assistant", "content": "hi"}])
    assert caught.value.body["param"] == "messages" and "last message" in caught.value.body["message"]
    with pytest.raises(openai.NotFoundError) as caught:
        client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": "resume"}])
    assert caught.value.body["code"] == "model_not_found" and caught.value.body["param"] == "model"
    raw = httpx.post(
        f"{server.url}/v1/chat/completions",
        content=b'{"model": "kb", "messages": [',
        headers={"Authorization": f"Bearer {KEY}", "Content-Type": "application/json"},
    )
    assert raw.status_code == 400
    assert set(raw.json()["error"]) == {"message", "type", "param", "code"}
    assert "not valid JSON" in raw.json()["error"]["message"]
    assert raw.json()["error"]["param"] is None  # no field is at fault in a body that is not JSON


@pytest.mark.parametrize(
    "field, value, param",
    [
        ("max_tokens", True, "max_tokens"),  # a boolean is not a number
        ("max_tokens", "400", "max_tokens"),
        ("temperature", True, "temperature"),
        ("stream", "yes", "stream"),  # a string is not a boolean
        ("stream", 1, "stream"),
        ("stream_options", {"include_usage": "yes"}, "stream_options.include_usage"),
        ("messages", [{"role": "user", "content": "x" * 3000}], "messages"),  # too long to search: 400, not 422
    ],
)
def test_fields_are_strictly_typed(server: Any, field: str, value: Any, param: str) -> None:
    body = {"model": "kb", "messages": [{"role": "user", "content": "resume"}], field: value}
    raw = httpx.post(f"{server.url}/v1/chat/completions", json=body, headers={"Authorization": f"Bearer {KEY}"})
    assert raw.status_code == 400, raw.text
    assert raw.headers["content-type"] == "application/json"  # an error, not a stream
    error = raw.json()["error"]
    assert (error["param"], error["type"]) == (param, "invalid_request_error")


def test_usage_is_counted(client: openai.OpenAI) -> None:
    from server.channels.openai.routes import estimated_tokens

    question = "how do I resume training with slime?"
    completion = client.chat.completions.create(model="kb", messages=[{"role": "user", "content": question}])
    usage = completion.usage
    assert usage is not None and usage.prompt_tokens == estimated_tokens(question) == 9
    assert usage.completion_tokens == estimated_tokens(completion.choices[0].message.content) > 0
    assert usage.total_tokens == usage.prompt_tokens + usage.completion_tokens
    assert estimated_tokens("如何续训？") == 5 and estimated_tokens("slime 如何续训") == 4 + 2
    stream = client.chat.completions.create(
        model="kb",
        messages=[{"role": "user", "content": question}],
        stream=True,
        stream_options={"include_usage": True},
    )
    chunks = list(stream)
    written = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert chunks[-1].choices == [] and chunks[-1].usage is not None
    assert chunks[-1].usage.completion_tokens == estimated_tokens(written) > 0
    assert all(c.usage is None for c in chunks[:-1])


def test_the_documented_python_snippet(server: Any, capsys: pytest.CaptureFixture[str]) -> None:
    page = (ROOT / "docs" / "channels.md").read_text(encoding="utf-8")
    section = page.split("## Chat front ends (OpenAI-compatible API)")[1].split("\n## ")[0]
    (snippet,) = re.findall(r"```python\n(.*?)```", section, re.S)
    snippet = snippet.replace("https://faq.example.com", server.url).replace("<one of KB_API_KEYS>", KEY)
    exec(compile(snippet, "docs/channels.md", "exec"), {})
    printed = capsys.readouterr().out
    assert "来源" in printed and "](https://" in printed


def test_may_answer_gives_the_entrys_answer_marked_not_certain_whole_and_streamed(settings: Any, serve: Any) -> None:
    from server import create_app

    strict = serve(create_app(settings.with_(answer_precision=0.8, channel_precision="")))
    asked = openai.OpenAI(base_url=strict.url + "/v1", api_key="unused")
    messages: Any = [{"role": "user", "content": "how do I resume training in slime?"}]
    whole = asked.chat.completions.create(model="kb", messages=messages)
    text = whole.choices[0].message.content or ""
    assert whole.model_extra["state"] == "likely", whole.model_extra
    assert text.startswith("The first entry may answer this (confidence 0.")
    assert "> Simply set the `--load` directory to your `--save` directory." in text and "Other entries:" in text
    streamed = asked.chat.completions.create(model="kb", messages=messages, stream=True)
    assert "".join(c.choices[0].delta.content or "" for c in streamed) == text


def test_open_without_keys(settings: Any) -> None:
    from fastapi.testclient import TestClient

    from server import create_app

    with TestClient(create_app(settings)) as plain:
        assert plain.get("/v1/models").json()["data"][0]["id"] == "kb"


def _recorded(server: Any, settings: Any, text: str) -> Any:
    from kb.insights import InsightsStore
    from kb.insights.store import store_path

    store = InsightsStore(store_path(settings.data_dir))
    deadline = time.monotonic() + 10
    try:
        while time.monotonic() < deadline:
            found = [q for q in store.questions.recent(500) if q.text == text and q.channel == "openai"]
            if found:
                return found[0]
            time.sleep(0.1)
    finally:
        store.close()
    raise AssertionError(f"{text!r} not recorded")
