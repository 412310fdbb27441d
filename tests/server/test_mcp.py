"""The MCP server as coding agents reach it: the SDK's own client over Streamable HTTP (`/mcp` on a real
uvicorn) and over stdio (`kb mcp` as a subprocess): its tools and resources, the token, the limits."""

from __future__ import annotations

import asyncio
import json
import os
import re
import sys
import time
from pathlib import Path
from typing import Any, Awaitable, Callable, Iterator

import httpx
import httpx2
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from tests.support.paths import ROOT

TOKEN = "mcp-test-token-3f9a"
ORIGIN = "https://docs.example.com"


@pytest.fixture(scope="module")
def server(settings: Any, serve: Any) -> Iterator[Any]:
    from server import create_app

    app = create_app(settings.with_(mcp_token=TOKEN, allowed_origins=ORIGIN))
    yield serve(app)


def over_http(url: str, call: Callable[[Client], Awaitable[Any]], token: str = TOKEN) -> Any:
    async def run() -> Any:
        async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60) as http:
            async with Client(streamable_http_client(f"{url}/mcp", http_client=http)) as client:
                return await call(client)

    return asyncio.run(run())


def structured(result: Any) -> dict[str, Any]:
    assert not result.is_error, result.content
    data = json.loads(result.content[0].text)  # what an agent reads
    assert data == result.structured_content
    return data


def test_the_tools_an_agent_chooses_from(server: Any) -> None:
    tools = over_http(server.url, lambda c: c.list_tools()).tools
    by_name = {t.name: t for t in tools}
    assert set(by_name) == {"search_faq", "get_entry", "explain_error", "list_sources"}
    for tool in tools:
        assert tool.description and "\n" not in tool.description.strip()
    search = by_name["search_faq"].input_schema
    assert search["required"] == ["query"]
    assert set(search["properties"]) == {"query", "k", "lang", "framework"}
    assert by_name["get_entry"].input_schema["required"] == ["id"]
    assert by_name["explain_error"].input_schema["required"] == ["trace"]


def test_search_faq_answers_with_the_entry_and_its_links(server: Any, settings: Any) -> None:
    result = structured(
        over_http(server.url, lambda c: c.call_tool("search_faq", {"query": "how do I resume training with slime"}))
    )
    assert result["answered"] is True and result["note"] == ""
    best = result["hits"][0]
    assert best["id"] == "slime-b0ab398d"
    assert best["url"].startswith("https://") and best["permalink"] == f"{server.url}/entries/slime-b0ab398d"
    assert best["resource"] == "kb://entries/slime-b0ab398d" and best["answer"]
    # Asked through MCP, recorded for the insights under its channel.
    (questions,) = [
        q for q in _recorded(server, settings) if q.text == "how do I resume training with slime" and q.channel == "mcp"
    ][:1]
    assert questions.answered


def test_search_faq_says_when_the_faq_has_no_answer(server: Any) -> None:
    result = structured(
        over_http(server.url, lambda c: c.call_tool("search_faq", {"query": "what is the best pizza in Naples, ROLL?"}))
    )
    assert result["answered"] is False
    assert "no answer" in result["message"] and "do not make an answer up" in result["message"]
    assert result["note"] == "ROLL's FAQ does not cover this."
    assert len(result["hits"]) <= 3  # the nearest, offered as what they are


def test_search_faq_in_chinese_and_by_framework(server: Any) -> None:
    result = structured(
        over_http(
            server.url,
            lambda c: c.call_tool(
                "search_faq", {"query": "how do I resume training", "lang": "zh", "framework": "slime", "k": 3}
            ),
        )
    )
    assert result["hits"] and all(h["source"]["framework"] == "slime" for h in result["hits"])
    assert result["hits"][0]["lang"] == "zh" and "没有" not in result["message"]
    refused = over_http(server.url, lambda c: c.call_tool("search_faq", {"query": "resume", "framework": "Caffe"}))
    assert refused.is_error and "Caffe" in refused.content[0].text and "ROLL" in refused.content[0].text


def test_explain_error_reduces_a_traceback(server: Any) -> None:
    trace = (
        "Traceback (most recent call last):\n"
        '  File "/usr/lib/python3.10/site-packages/torch/_dynamo/eval_frame.py", line 328, in _fn\n'
        "    return fn(*args, **kwargs)\n"
        * 40
        + "json.decoder.JSONDecodeError: Expecting value: line 1 column 1 (char 0)\n"
    )
    result = structured(over_http(server.url, lambda c: c.call_tool("explain_error", {"trace": trace})))
    assert result["answered"] is True
    assert "JSONDecodeError" in result["searched"] and len(result["searched"]) < len(trace)
    assert "JSONDecodeError" in result["hits"][0]["question"] + result["hits"][0]["answer"]


def test_get_entry_and_its_resource(server: Any) -> None:
    async def calls(c: Client) -> Any:
        entry = await c.call_tool("get_entry", {"id": "slime-b0ab398d", "lang": "en"})
        unknown = await c.call_tool("get_entry", {"id": "slime-00000000"})
        resource = await c.read_resource("kb://entries/slime-b0ab398d")
        try:
            await c.read_resource("kb://entries/slime-00000000")
        except MCPError as exc:
            missing = str(exc)
        return entry, unknown, resource, missing

    entry, unknown, resource, missing = over_http(server.url, calls)
    data = structured(entry)
    assert data["id"] == "slime-b0ab398d" and data["lang"] == "en"
    assert set(data["links"]) == {"zh", "en"} and data["links"]["zh"] != data["links"]["en"]
    assert unknown.is_error and "slime-00000000" in unknown.content[0].text
    text = resource.contents[0].text  # each language's version, the entry's own first
    zh = data["links"]["zh"]
    assert text.startswith("# 如何续训") and f"# {data['question']}" in text
    assert text.index(zh) < text.index(data["links"]["en"])
    assert "slime-00000000" in missing


def test_list_sources(server: Any) -> None:
    data = structured(over_http(server.url, lambda c: c.call_tool("list_sources", {})))
    names = {s["name"]: s for s in data["sources"]}
    assert {"slime", "roll", "chatlearn"} <= set(names)
    assert names["slime"]["framework"] == "slime" and names["slime"]["entries"] > 0
    assert names["slime"]["version"] and names["slime"]["url"].startswith("https://")
    assert set(names["slime"]["urls"]) == set(names["slime"]["languages"])


def test_the_token_is_needed(server: Any) -> None:
    with pytest.raises(Exception):
        over_http(server.url, lambda c: c.list_tools(), token="wrong")
    plain = httpx.post(f"{server.url}/mcp", json={}, headers={"Authorization": "Bearer wrong"})
    assert plain.status_code == 401 and plain.headers["www-authenticate"] == "Bearer"
    assert "KB_MCP_TOKEN" in plain.json()["error"]


def test_off_without_a_token(settings: Any) -> None:
    from fastapi.testclient import TestClient

    from server import create_app

    with TestClient(create_app(settings)) as client:
        response = client.post("/mcp", json={}, headers={"Authorization": "Bearer anything"})
    assert response.status_code == 404 and "KB_MCP_TOKEN" in response.json()["error"]


def test_the_body_limit_and_origins_apply(server: Any) -> None:
    auth = {"Authorization": f"Bearer {TOKEN}", "Accept": "application/json, text/event-stream"}
    big = httpx.post(f"{server.url}/mcp", content=b"x" * 300_000, headers={**auth, "Content-Type": "application/json"})
    assert big.status_code == 413
    other = httpx.post(f"{server.url}/mcp", json={}, headers={**auth, "Origin": "https://evil.example"})
    assert other.status_code == 403 and "KB_ALLOWED_ORIGINS" in other.json()["error"]
    preflight = httpx.options(
        f"{server.url}/mcp",
        headers={
            "Origin": ORIGIN,
            "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "authorization, content-type, mcp-protocol-version",
        },
    )
    assert preflight.status_code == 200 and preflight.headers["access-control-allow-origin"] == ORIGIN


def test_the_rate_limit_applies(settings: Any, serve: Any) -> None:
    from server import create_app

    limited = serve(create_app(settings.with_(mcp_token=TOKEN, rate_limit="2/minute")))
    statuses = [
        httpx.post(f"{limited.url}/mcp", json={}, headers={"Authorization": f"Bearer {TOKEN}"}).status_code
        for _ in range(3)
    ]
    assert statuses[-1] == 429 and 429 not in statuses[:2]


def documented_configs() -> list[dict[str, Any]]:
    """The MCP configurations docs/channels.md's section on coding agents gives: stdio's, then HTTP's."""
    page = (ROOT / "docs" / "channels.md").read_text(encoding="utf-8")
    section = page.split("## Coding agents (MCP)")[1].split("\n## ")[0]
    blocks = re.findall(r"```json\n(.*?)```", section, re.S)
    return [json.loads(block)["mcpServers"]["faq"] for block in blocks]


def test_the_documented_http_config(server: Any) -> None:
    config = documented_configs()[1]
    assert config["type"] == "http" and config["url"].endswith("/mcp")
    token = config["headers"]["Authorization"].replace("${KB_MCP_TOKEN}", TOKEN)
    assert token == f"Bearer {TOKEN}"
    tools = over_http(server.url, lambda c: c.list_tools(), token=token.removeprefix("Bearer "))
    assert len(tools.tools) == 4


@pytest.mark.slow
def test_kb_mcp_over_stdio(settings: Any) -> None:
    config = documented_configs()[0]  # launched as docs/channels.md tells an agent to launch it
    environment = {k: v for k, v in os.environ.items() if not k.startswith("KB_")}
    environment.update(config["env"])
    environment.update(KB_DATA_DIR=str(settings.data_dir), PYTHONPATH=str(ROOT))
    kb = Path(sys.executable).with_name(config["command"])
    parameters = StdioServerParameters(command=str(kb), args=config["args"], env=environment)

    async def run() -> Any:
        async with Client(parameters) as client:
            tools = await client.list_tools()
            started = time.perf_counter()
            found = await client.call_tool("search_faq", {"query": "训练时 OOM 了怎么办"})
            seconds = time.perf_counter() - started
            missing = await client.call_tool("get_entry", {"id": "nope"})
            return tools, found, seconds, missing

    tools, found, seconds, missing = asyncio.run(run())
    assert {t.name for t in tools.tools} == {"search_faq", "get_entry", "explain_error", "list_sources"}
    data = structured(found)
    assert data["lang"] == "zh" and data["hits"] and "permalink" not in data["hits"][0]
    assert data["hits"][0]["url"].startswith("https://")
    assert missing.is_error and "nope" in missing.content[0].text
    assert seconds < 5


def _recorded(server: Any, settings: Any) -> list[Any]:
    from kb.insights import InsightsStore
    from kb.insights.store import store_path

    deadline = time.monotonic() + 10
    store = InsightsStore(store_path(settings.data_dir))
    try:
        while True:
            questions = store.recent_questions(500)
            if any(q.channel == "mcp" for q in questions) or time.monotonic() > deadline:
                return questions
            time.sleep(0.1)
    finally:
        store.close()
