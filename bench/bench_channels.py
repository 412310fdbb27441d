"""The channels for agents and chat front ends against the JSON search API, and what the metrics cost a search.

- A new question's time, side by side in one run against a real `kb serve` on 127.0.0.1:
  `GET /api/search`, `POST /v1/chat/completions` (extractive: no LLM configured) and MCP
  `tools/call search_faq` over Streamable HTTP at `/mcp` (the JSON-RPC request an MCP client
  sends for a call; the transport is stateless, so a call needs no session). The questions
  are the development, holdout and real sets', each asked once, dealt to the three channels in
  turn, so every request is a new question to the model and the cache (targets: each p50 at
  most 1.3x the search API's).
- What the metrics add to a search, in process: the middleware that counts responses around
  an app that answers at once, against that app alone, plus the listener timing and counting
  one search (target: at most 0.1 ms at p50).

    .venv/bin/python bench/bench_channels.py [--quick]
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import Row, main, own_settings, pct, questions, serving  # noqa: E402

SECTION = "channels"
RATIO_BUDGET = 1.3
METRICS_BUDGET_MS = 0.1
TOKEN = "bench-channels-token"
MCP_HEADERS = {
    "Authorization": f"Bearer {TOKEN}",
    "Accept": "application/json, text/event-stream",
    "Mcp-Protocol-Version": "2025-06-18",
}


def _search(client: httpx.Client, q: str) -> None:
    client.get("/api/search", params={"q": q}).raise_for_status()


def _openai(client: httpx.Client, q: str) -> None:
    body = {"model": "kb", "messages": [{"role": "user", "content": q}]}
    client.post("/v1/chat/completions", json=body).raise_for_status()


def _mcp(client: httpx.Client, q: str) -> None:
    call = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "search_faq", "arguments": {"query": q}},
    }
    response = client.post("/mcp", json=call, headers=MCP_HEADERS)
    response.raise_for_status()
    assert "result" in response.json(), response.text[:200]


CHANNELS = {"/api/search": _search, "/v1/chat/completions": _openai, "MCP search_faq": _mcp}


def channels(url: str, pool: list[str]) -> dict[str, list[float]]:
    times: dict[str, list[float]] = {name: [] for name in CHANNELS}
    names = list(CHANNELS)
    with httpx.Client(base_url=url, timeout=60) as client:
        for name in names:  # warm each route up on a question of its own, not measured
            CHANNELS[name](client, f"warm-up {name}")
        for i, q in enumerate(pool):
            name = names[i % len(names)]
            started = time.perf_counter()
            CHANNELS[name](client, q)
            times[name].append(time.perf_counter() - started)
    return times


def metrics_cost(n: int) -> tuple[float, float]:
    """(the middleware's, the listener's) added time per request at p50, in ms."""
    from kb.events import Searched
    from kb.hits import SearchResult
    from server.metrics import Metrics, RequestMetrics

    async def app(scope: object, receive: object, send: object) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": []})  # type: ignore[operator]
        await send({"type": "http.response.body", "body": b"{}"})  # type: ignore[operator]

    metrics = Metrics()
    counted = RequestMetrics(app, metrics)

    async def sink(message: object) -> None:
        return None

    async def per_call(target: object) -> list[float]:
        samples = []
        for _ in range(n):
            scope = {"type": "http", "method": "GET", "path": "/api/search", "route": None}
            started = time.perf_counter()
            await target(scope, None, sink)  # type: ignore[operator]
            samples.append(time.perf_counter() - started)
        return samples

    bare = asyncio.run(per_call(app))
    wrapped = asyncio.run(per_call(counted))
    result = SearchResult("how do I resume training", ())
    heard = []
    for _ in range(n):
        event = Searched(result, "api", time.perf_counter())
        started = time.perf_counter()
        metrics.hear(event)
        heard.append(time.perf_counter() - started)
    return (statistics.median(wrapped) - statistics.median(bare)) * 1000, statistics.median(heard) * 1000


def run(quick: bool = False) -> list[Row]:
    pool = questions(holdout=True, real=True)[: 60 if quick else 600]
    with tempfile.TemporaryDirectory() as tmp:
        settings = own_settings(Path(tmp))
        env = {"KB_MCP_TOKEN": TOKEN, "KB_RATE_LIMIT": "off", "KB_QUERY_CACHE_SIZE": "0"}
        with serving(settings, **env) as (url, _process):
            times = channels(url, pool)
    base = statistics.median(times["/api/search"])
    rows = [Row("/api/search p50 / p90", f"{base * 1000:.1f} / {pct(times['/api/search'], 90) * 1000:.1f} ms")]
    for name in ("/v1/chat/completions", "MCP search_faq"):
        p50 = statistics.median(times[name])
        ratio = p50 / base
        rows.append(
            Row(
                f"{name} p50 / p90 (x search)",
                f"{p50 * 1000:.1f} / {pct(times[name], 90) * 1000:.1f} ms ({ratio:.2f}x)",
                f"<= {RATIO_BUDGET}x",
                ratio <= RATIO_BUDGET,
            )
        )
    middleware, listener = metrics_cost(2000 if quick else 20000)
    added = middleware + listener
    rows.append(
        Row(
            "metrics added to a search, p50",
            f"{added:.4f} ms (middleware {middleware:.4f}, listener {listener:.4f})",
            f"<= {METRICS_BUDGET_MS} ms",
            added <= METRICS_BUDGET_MS,
        )
    )
    rows.append(Row("questions per channel", str(len(times["/api/search"]))))
    return rows


if __name__ == "__main__":
    main(run, __doc__)
