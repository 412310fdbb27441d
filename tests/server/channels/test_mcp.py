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
from tests.support.timed import declared, timed

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
        q
        for q in _recorded(server, settings, "how do I resume training with slime")
        if q.text == "how do I resume training with slime" and q.channel == "mcp"
    ][:1]
    assert questions.answered
    assert timed(httpx.get(f"{server.url}/metrics").text, "mcp") == declared("mcp") == {"search"}
    # The fields every channel gives a hit (kb.hits.hit_fields), the JSON API's included.
    searched = httpx.get(f"{server.url}/api/search", params={"q": "how do I resume training with slime"}).json()
    api_hit = searched["hits"][0]
    shared = set(api_hit) - {"answer_html", "permalink", "page", "confidence"}
    assert shared <= set(best), shared - set(best)
    assert best["source"]["titles"] == api_hit["source"]["titles"] and best["matched"] == api_hit["matched"]


def test_search_faq_says_when_the_faq_has_no_answer(server: Any) -> None:
    result = structured(
        over_http(server.url, lambda c: c.call_tool("search_faq", {"query": "what is the best pizza in Naples, ROLL?"}))
    )
    assert result["answered"] is False and result["state"] == "not_covered"
    assert "no confident answer" in result["message"] and "do not make an answer up" in result["message"]
    assert result["note"] == ""  # the nearest entries are ROLL's own: no claim that ROLL's FAQ lacks it
    assert len(result["hits"]) <= 3  # the nearest, offered as what they are


def test_search_faq_tells_the_agent_when_the_first_entry_may_answer(settings: Any, serve: Any) -> None:
    from server import create_app

    strict = serve(create_app(settings.with_(mcp_token=TOKEN, allowed_origins=ORIGIN, channel_precision="mcp=0.8")))
    result = structured(
        over_http(strict.url, lambda c: c.call_tool("search_faq", {"query": "how do I resume training in slime?"}))
    )
    # Under MCP's point, yet above the floor: the resume entry first, offered as likely, not as no answer.
    assert (result["answered"], result["state"]) == (False, "likely")
    assert result["hits"][0]["id"] == "slime-b0ab398d"
    assert "may answer" in result["message"] and "no answer" not in result["message"]
    # The reply as the chat gives it: the line, then the entry's answer quoted, marked not certain.
    assert result["answer"].startswith("The first entry may answer this (confidence 0.")
    assert "> Simply set the `--load` directory to your `--save` directory." in result["answer"]


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
    for source in data["sources"]:  # every shipped FAQ has its entries in both languages
        assert source["languages"] == ["en", "zh"], source["name"]
        assert set(source["urls"]) == {"en", "zh"}


def test_the_token_is_needed(server: Any) -> None:
    with pytest.raises(ExceptionGroup) as caught:  # what the agent shows: what to send, not "an error response"
        over_http(server.url, lambda c: c.list_tools(), token="wrong")
    assert caught.group_contains(MCPError, match=r"send the header `Authorization: Bearer <KB_MCP_TOKEN>`", depth=None)
    plain = httpx.post(f"{server.url}/mcp", json={}, headers={"Authorization": "Bearer wrong"})
    assert plain.status_code == 401 and plain.headers["www-authenticate"] == "Bearer"
    assert plain.json()["jsonrpc"] == "2.0" and plain.json()["id"] is None
    assert "KB_MCP_TOKEN" in plain.json()["error"]["message"] and plain.json()["error"]["code"] == -32000


def test_off_without_a_token(settings: Any) -> None:
    from fastapi.testclient import TestClient

    from server import create_app

    with TestClient(create_app(settings)) as client:
        response = client.post("/mcp", json={}, headers={"Authorization": "Bearer anything"})
    assert response.status_code == 404 and "KB_MCP_TOKEN" in response.json()["error"]["message"]


def test_the_body_limit_and_origins_apply(server: Any) -> None:
    auth = {"Authorization": f"Bearer {TOKEN}", "Accept": "application/json, text/event-stream"}
    big = httpx.post(f"{server.url}/mcp", content=b"x" * 300_000, headers={**auth, "Content-Type": "application/json"})
    assert big.status_code == 413
    other = httpx.post(f"{server.url}/mcp", json={}, headers={**auth, "Origin": "https://evil.example"})
    assert other.status_code == 403 and "KB_ALLOWED_ORIGINS" in other.json()["error"]["message"]
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
    # The docs show what `kb mcp --print-config claude` prints for a checkout elsewhere: the same form, here.
    assert Path(config["command"]).is_absolute() and config["command"].endswith("/.venv/bin/kb")
    assert set(config) == set(json.loads(printed_config("claude", settings.data_dir))["mcpServers"]["faq"])
    kb = Path(sys.executable).with_name(Path(config["command"]).name)
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


def _recorded(server: Any, settings: Any, text: str) -> list[Any]:
    """The questions recorded, once one asked over MCP as `text` is among them (or 10 s have passed)."""
    from kb.insights import InsightsStore
    from kb.insights.store import store_path

    deadline = time.monotonic() + 10
    store = InsightsStore(store_path(settings.data_dir))
    try:
        while True:
            questions = store.questions.recent(500)
            if any(q.channel == "mcp" and q.text == text for q in questions) or time.monotonic() > deadline:
                return questions
            time.sleep(0.1)
    finally:
        store.close()


def test_arguments_are_strictly_typed_and_errors_name_them(server: Any) -> None:
    async def calls(c: Client) -> list[str]:
        results = [
            await c.call_tool("search_faq", {"query": "resume", "k": True}),  # a boolean is not a number
            await c.call_tool("search_faq", {"query": "resume", "k": "3"}),
            await c.call_tool("search_faq", {"query": "x" * 3000}),
            await c.call_tool("explain_error", {"trace": "x" * 3000}),
        ]
        assert all(r.is_error for r in results)
        return [r.content[0].text for r in results]

    boolean, string, query, trace = over_http(server.url, calls)
    assert "k\n  Input should be a valid integer" in boolean and "k\n  Input should be a valid integer" in string
    assert query.endswith("search_faq: query: the query is 3000 characters; the limit is 2000")
    assert trace.endswith("explain_error: trace: the query is 3000 characters; the limit is 2000")


def test_an_error_repeats_a_bad_value_in_part(server: Any) -> None:
    async def calls(c: Client) -> list[str]:
        framework = await c.call_tool("search_faq", {"query": "resume", "framework": "Caffe" * 20_000})
        entry = await c.call_tool("get_entry", {"id": "slime-" * 16_000})
        return [framework.content[0].text, entry.content[0].text]

    framework, entry = over_http(server.url, calls)
    assert "framework: no FAQ of the framework 'CaffeCaffe" in framework and "(100000 characters)" in framework
    assert "no entry with id 'slime-slime-" in entry and "(96000 characters)" in entry
    assert len(framework) < 400 and len(entry) < 400


def test_permalinks_from_the_address_reached_or_kb_base_url(server: Any, settings: Any, serve: Any) -> None:
    from server import create_app

    def best(url: str, host: str) -> dict[str, Any]:
        async def run() -> Any:
            headers = {"Authorization": f"Bearer {TOKEN}", "Host": host}
            async with httpx2.AsyncClient(headers=headers, timeout=60) as http:
                async with Client(streamable_http_client(f"{url}/mcp", http_client=http)) as client:
                    return await client.call_tool("search_faq", {"query": "how do I resume training with slime"})

        hits = structured(asyncio.run(run()))["hits"]
        web = httpx.get(
            f"{url}/api/search", params={"q": "how do I resume training with slime"}, headers={"Host": host}
        )
        assert hits[0]["permalink"] == web.json()["hits"][0]["permalink"]  # as the web API makes them
        return hits[0]

    assert best(server.url, "evil.example")["permalink"] == f"{server.url}/entries/slime-b0ab398d"
    based = serve(create_app(settings.with_(mcp_token=TOKEN, base_url="https://faq.example.com/kb")))
    assert best(based.url, "evil.example")["permalink"] == "https://faq.example.com/kb/entries/slime-b0ab398d"


def test_a_get_is_refused_not_held_open(server: Any) -> None:
    auth = {"Authorization": f"Bearer {TOKEN}", "Accept": "text/event-stream"}
    started = time.monotonic()
    response = httpx.get(f"{server.url}/mcp", headers=auth, timeout=5)
    assert response.status_code == 405 and response.headers["allow"] == "POST, DELETE"
    assert "stateless" in response.json()["error"]["message"] and time.monotonic() - started < 2


def test_the_server_says_its_version(server: Any) -> None:
    from importlib.metadata import version

    async def info(c: Client) -> Any:
        return c.server_info

    assert over_http(server.url, info).version == version("kb") != ""


@pytest.mark.slow
def test_kb_mcp_answers_a_line_it_cannot_read(settings: Any) -> None:
    import queue
    import subprocess
    import threading

    environment = {k: v for k, v in os.environ.items() if not k.startswith("KB_")}
    environment.update(KB_DATA_DIR=str(settings.data_dir), PYTHONPATH=str(ROOT))
    server = subprocess.Popen(
        [sys.executable, "-m", "kbcli.cli", "mcp"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=environment,
        cwd=ROOT,
        text=True,
    )
    assert server.stdin is not None and server.stdout is not None
    ping = {"jsonrpc": "2.0", "id": 7, "method": "ping"}
    try:
        server.stdin.write('{"jsonrpc": "2.0", "id": 1, "method": "ping"\n')  # cut short: not JSON
        server.stdin.write('{"jsonrpc": "2.0", "id": 2, "method": 5}\n')  # JSON, not a message
        server.stdin.write(json.dumps(ping) + "\n")  # still served after both
        server.stdin.flush()
        lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=lambda: [lines.put(line) for line in server.stdout], daemon=True).start()
        answers = [json.loads(lines.get(timeout=60)) for _ in range(3)]  # queue.Empty: a line went unanswered
    finally:
        server.kill()
        server.communicate()
    assert answers[0]["id"] is None and answers[0]["error"]["code"] == -32700
    assert answers[1]["id"] == 2 and answers[1]["error"]["code"] == -32600
    assert answers[2] == {"jsonrpc": "2.0", "id": 7, "result": {}}


def printed_config(form: str, data_dir: Path) -> str:
    """What `kb mcp --print-config FORM` prints, run as a user would from the checkout."""
    import subprocess

    environment = {k: v for k, v in os.environ.items() if not k.startswith("KB_")}
    environment["KB_DATA_DIR"] = str(data_dir)
    command = [sys.executable, "-m", "kbcli.cli", "mcp", "--print-config", form]
    return subprocess.run(command, env=environment, cwd=ROOT, capture_output=True, text=True, check=True).stdout


@pytest.mark.slow
@pytest.mark.parametrize("form", ["claude", "cursor", "claude-add"])
def test_the_printed_config_launches_kb_mcp(form: str, settings: Any, tmp_path: Path) -> None:
    import shlex

    printed = printed_config(form, settings.data_dir)
    if form == "claude-add":  # claude mcp add faq -e KEY=VALUE ... -- COMMAND ARGS
        words = shlex.split(printed)
        assert words[:4] == ["claude", "mcp", "add", "faq"]
        command = words[words.index("--") + 1 :]
        env = dict(value.split("=", 1) for flag, value in zip(words[4:], words[5:]) if flag == "-e")
    else:
        config = json.loads(printed)["mcpServers"]["faq"]
        command, env = [config["command"], *config["args"]], config["env"]
    assert Path(command[0]).is_absolute() and env["KB_DATA_DIR"] == str(settings.data_dir)
    # Launched exactly as configured, from another directory, as an agent in another project does.
    parameters = StdioServerParameters(command=command[0], args=command[1:], env=env, cwd=tmp_path)

    async def run() -> Any:
        async with Client(parameters) as client:
            return await client.list_tools()

    assert {t.name for t in asyncio.run(run()).tools} == {"search_faq", "get_entry", "explain_error", "list_sources"}


def test_the_printed_config_names_the_running_kb() -> None:
    from server.channels.mcp.config import config_text, launch_command

    kb = Path(sys.executable).with_name("python")  # any executable file stands for an installed `kb` script
    assert launch_command(str(kb), sys.executable) == [str(kb), "mcp"]
    assert launch_command(str(ROOT / "kbcli" / "cli.py"), "/opt/py/bin/python3") == [
        "/opt/py/bin/python3",
        "-m",
        "kbcli.cli",
        "mcp",
    ]
    codex = config_text("codex", Path("/data/kb"), [str(kb), "mcp"])
    assert codex == f'[mcp_servers.faq]\ncommand = "{kb}"\nargs = ["mcp"]\nenv = {{ KB_DATA_DIR = "/data/kb" }}'


def test_every_channel_reduces_a_trace_the_same_way(server: Any) -> None:
    """/api/search, MCP's search_faq and explain_error, and /v1 search a pasted trace as one function reduces it
    (kb.search.searched_text): the same text searched, the same entries found."""
    from kb.search import searched_text
    from tests.support.traces import OOM_THEN_SHUTDOWN, OOM_TRACE

    traces = [OOM_TRACE, OOM_THEN_SHUTDOWN, " ".join(OOM_THEN_SHUTDOWN.splitlines()), OOM_THEN_SHUTDOWN[-1500:]]

    async def calls(c: Client) -> list[tuple[dict[str, Any], dict[str, Any]]]:
        return [
            (
                structured(await c.call_tool("search_faq", {"query": trace, "k": 5})),
                structured(await c.call_tool("explain_error", {"trace": trace})),
            )
            for trace in traces
        ]

    for trace, (searched, explained) in zip(traces, over_http(server.url, calls)):
        web = httpx.get(f"{server.url}/api/search", params={"q": trace, "k": 5}, timeout=30).json()
        chat = {"model": "kb", "messages": [{"role": "user", "content": trace}]}
        v1 = httpx.post(f"{server.url}/v1/chat/completions", json=chat, timeout=30).json()
        assert searched["searched"] == explained["searched"] == searched_text(trace)
        ids = [h["id"] for h in web["hits"][: web["shown"]]]
        assert [h["id"] for h in searched["hits"]] == [h["id"] for h in explained["hits"]] == ids
        assert v1["hits"][0]["id"] == ids[0]
    oom = "chatlearn-a0b0593f"  # the out-of-memory entry, found by the error line torchrun's shutdown follows
    assert [
        h["id"]
        for h in over_http(
            server.url, lambda c: c.call_tool("explain_error", {"trace": OOM_THEN_SHUTDOWN})
        ).structured_content["hits"]
    ][0] == oom
