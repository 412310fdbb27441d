"""The query path: `/api/search` over HTTP against the bare embedding call, alone and under concurrency.

Baseline: what the model alone costs. In this process, `Embedder.embed_query(question)` with
the query cache off, for each question exactly as typed (a search embeds the question once:
as typed, or shorter, with a pasted trace reduced and tracker noise taken out).

- Concurrency 1: p50 of one request at a time over a keep-alive connection, against the bare
  embedding p50 (target: at most 1.2x); `kb.search` in-process is shown too.
- Concurrency 8 and 32: closed-loop clients (one thread and one keep-alive `httpx.Client`
  each) against the same number of threads calling `embed_query` on one Embedder here
  (target: the server sustains at least 80% of the embedder's throughput).
- Repeated questions, query cache on: `kb.search` in-process on a cached question, wall and
  CPU time of the calling thread (target: well under 1 ms), and `/api/search` p50 for a repeated question against an uncached one.

Servers: `uvicorn` in subprocesses on loopback ports, `KB_RATE_LIMIT=off`; one with
`KB_QUERY_CACHE_SIZE=0` so every request runs the model, one with the default cache. The
questions are the development and holdout sets and the real issue-tracker questions (distinct). Server and baseline blocks
alternate, so both sides see the same machine state.

    .venv/bin/python bench/bench_http.py [--quick]
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

from common import (  # noqa: E402  (free_port, ready_settings, start_server: used by bench_slack and bench_insights)
    Load, Row, clients, drive, free_port, main, own_settings, pct, questions, ready_settings, serving, start_server,
    timed,
)

from kb.knowledge import KnowledgeBase  # noqa: E402

__all__ = ["run", "questions", "ready_settings", "free_port", "start_server", "timed", "pct"]

SECTION = "query path"
CONCURRENCY = (8, 32)
LATENCY_BUDGET = 1.2  # HTTP p50 over bare embedding p50, at concurrency 1
THROUGHPUT_SHARE = 0.8  # HTTP throughput over the embedder's, at 8 and 32
CACHED_BUDGET_MS = 1.0


def _search(client: httpx.Client, q: str) -> None:
    client.get("/api/search", params={"q": q}).raise_for_status()


def run(quick: bool = False) -> list[Row]:
    items = questions(holdout=True, real=True)
    rounds, repeat = (1, 1) if quick else (3, 2)
    if quick:
        items = items[:40]
    with tempfile.TemporaryDirectory() as tmp:
        settings = own_settings(Path(tmp))
        kb = KnowledgeBase.open(settings.with_(query_cache_size=0))
        embedder = kb.searcher.embedder
        loop = asyncio.new_event_loop()  # one loop for the in-process searches, as a server has

        def search(question: str) -> object:
            return loop.run_until_complete(kb.search(question))

        texts = list(items)  # the bare embedding of the question as typed
        with serving(settings, KB_QUERY_CACHE_SIZE="0") as (url, _), serving(settings) as (cached_url, _):
            single, cached_single = clients(url, 1)[0], clients(cached_url, 1)[0]
            pool = clients(url, max(CONCURRENCY))
            # Warm up every side: OpenMP teams, caches, keep-alive connections.
            timed(embedder.embed_query, texts[:10], 1)
            timed(search, items[:10], 1)
            drive(max(CONCURRENCY), lambda n, i: _search(pool[n], items[i % len(items)]), count=2 * max(CONCURRENCY))
            timed(lambda q: _search(cached_single, q), items, 1)  # fills the cached server's query cache

            one = {"embed": [], "search": [], "http": []}  # type: dict[str, list[float]]
            many = {(side, c): Load([], 0.0) for side in ("embed", "http") for c in CONCURRENCY}
            for _ in range(rounds):
                one["embed"] += timed(embedder.embed_query, texts, repeat)
                one["search"] += timed(search, items, repeat)
                one["http"] += timed(lambda q: _search(single, q), items, repeat)
                for c in CONCURRENCY:
                    for _ in range(repeat):  # short blocks, so both sides meet the same spells of outside load
                        many["embed", c] += drive(c, lambda t, i: embedder.embed_query(texts[i]), count=len(texts))
                        many["http", c] += drive(c, lambda t, i: _search(pool[t], items[i]), count=len(items))

            # Repeated questions, caches on as a server has them (the query's vector and its
            # result): in-process on this knowledge base, over HTTP on the cached server.
            embedder.cache.resize(4096)
            kb.results.resize(4096)
            timed(search, items, 1)
            repeated = {"search": [], "search cpu": [], "http": []}  # type: dict[str, list[float]]
            for _ in range(rounds):
                repeated["search"] += timed(search, items, repeat)
                repeated["search cpu"] += timed(search, items, repeat, clock=time.thread_time)
                repeated["http"] += timed(lambda q: _search(cached_single, q), items, repeat)
            embedder.cache.resize(0)
            kb.results.resize(0)
            loop.close()
            for client in [single, cached_single, *pool]:
                client.close()

    embed50 = statistics.median(one["embed"])
    http50, search50 = statistics.median(one["http"]), statistics.median(one["search"])
    rows = [
        Row("bare query embedding, concurrency 1, p50 / p99",
            f"{embed50:.1f} / {pct(one['embed'], 99):.1f} ms", "baseline"),
        Row("`kb.search` in-process, cache off, p50",
            f"{search50:.1f} ms ({search50 / embed50:.2f}x embedding)", "–"),
        Row("`GET /api/search`, concurrency 1, cache off, p50 / p99",
            f"{http50:.1f} / {pct(one['http'], 99):.1f} ms ({http50 / embed50:.2f}x embedding)",
            f"p50 ≤ {LATENCY_BUDGET}x embedding", http50 <= LATENCY_BUDGET * embed50),
    ]
    for c in CONCURRENCY:
        alone, served = many["embed", c], many["http", c]
        share = served.rate / alone.rate
        rows.append(Row(
            f"`GET /api/search`, concurrency {c}: throughput; p50 / p99",
            f"{served.rate:.0f}/s = {share:.0%} of the embedder's {alone.rate:.0f}/s; "
            f"{served.p50:.0f} / {served.p99:.0f} ms (embedder {alone.p50:.0f} / {alone.p99:.0f} ms)",
            f"≥ {THROUGHPUT_SHARE:.0%} of the embedder", share >= THROUGHPUT_SHARE,
        ))
    cached50 = statistics.median(repeated["search"])
    repeated50 = statistics.median(repeated["http"])
    rows += [
        Row("`kb.search` on a repeated question (cached), p50 / p99",
            f"{cached50:.2f} / {pct(repeated['search'], 99):.2f} ms; "
            f"CPU p50 {statistics.median(repeated['search cpu']):.2f} ms",
            f"p50 < {CACHED_BUDGET_MS:g} ms", cached50 < CACHED_BUDGET_MS),
        Row("`GET /api/search` repeated question (cached) vs uncached, p50",
            f"{repeated50:.1f} vs {http50:.1f} ms ({repeated50 / http50:.2f}x)", "–"),
    ]
    print(f"query path: {len(items)} questions x {repeat} passes x {rounds} rounds", file=sys.stderr)
    return rows


if __name__ == "__main__":
    main(run, __doc__)
