"""Long inputs: what the longest accepted question costs a real `kb serve`, and what it costs everyone else.

- Worst case over typical: `/api/search` p50 for the longest question accepted
  (`KB_MAX_QUERY_CHARS`, 2,000 characters of Chinese, or of English) against the p50 of the
  development-set questions, one request at a time, in alternating blocks (target: at most 5x).
- A typical search while four worst-case ones run: four clients send 2,000-character
  questions in a closed loop while a fifth sends development-set questions; its p50 and p90
  against the same questions alone (before the embedder read only a query's start, four of
  them delayed a 0.09 s search to 17 s).
- `/insights` with five stored unanswered questions of 20,005 characters (as an older server
  stored them): the page's load time (it took 42 s before stored texts were bounded).

The server is `kb serve` in a subprocess on 127.0.0.1, with the query cache off
(`KB_QUERY_CACHE_SIZE=0`) so every request runs the model.

    .venv/bin/python bench/bench_long_inputs.py [--quick]
"""

from __future__ import annotations

import sqlite3
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import Row, clients, main, own_settings, pct, questions, serving, timed  # noqa: E402

from kb.insights import store_path  # noqa: E402
from kb.settings import Settings  # noqa: E402

SECTION = "long inputs"
RATIO_BUDGET = 5.0
TOKEN = "bench-long-inputs-token"
ZH = (
    "训练到第三千步的时候显存突然不够了，我用的是八卡 A100，模型是七十亿参数，开了 ZeRO-3 和梯度检查点，"
    "还是报 CUDA out of memory，请问应该怎么排查？"
)
EN = "How do I resume training from the last checkpoint after the scheduler killed the job during rollout? "


def longest(text: str, n: int, chars: int = 2000) -> str:
    """A question of `chars` characters, the n-th of its kind (each distinct, so none is served from a cache)."""
    return (f"{n}. " + text * (chars // len(text) + 1))[:chars]


def _search(client: httpx.Client, q: str) -> None:
    client.get("/api/search", params={"q": q}).raise_for_status()


def insights_with_huge_questions(client: httpx.Client, settings: Settings) -> float:
    """Seconds `/insights` takes to draw with five stored questions of 20,005 characters."""
    huge = [f"第{i}个问题：" + ("为什么 rollout 的时候 vllm 报错 " * 1000)[: 20_005 - 6] for i in range(5)]
    with sqlite3.connect(store_path(settings.data_dir)) as db:
        db.executemany(
            "INSERT INTO questions (asked_at, text, lang, channel, kind, top_entry, top_score, answered, "
            "latency_ms) VALUES (?, ?, 'zh', 'web', 'chat', NULL, NULL, 0, 10.0)",
            [(time.time() - 60, text) for text in huge],
        )
    started = time.perf_counter()
    client.get("/insights", headers={"Authorization": f"Bearer {TOKEN}"}, timeout=120).raise_for_status()
    return time.perf_counter() - started


def run(quick: bool = False) -> list[Row]:
    items = questions()[: 20 if quick else 60]
    rounds = 1 if quick else 3
    worst = [longest(ZH if i % 2 == 0 else EN, i) for i in range(10 if quick else 30)]
    with tempfile.TemporaryDirectory() as tmp:
        settings = own_settings(Path(tmp))
        with serving(settings, workers=1, KB_QUERY_CACHE_SIZE="0", KB_ADMIN_TOKEN=TOKEN) as (url, _):
            client = clients(url, 1)[0]
            timed(lambda q: _search(client, q), items[:10] + worst[:4], 1)  # warm up
            typical, long = [], []
            for _ in range(rounds):
                typical += timed(lambda q: _search(client, q), items, 1)
                long += timed(lambda q: _search(client, q), worst, 1)
            ratio = statistics.median(long) / statistics.median(typical)

            stop = threading.Event()
            pool = clients(url, 4)

            def hammer(n: int) -> None:
                i = n
                while not stop.is_set():
                    _search(pool[n], worst[i % len(worst)])
                    i += 4

            threads = [threading.Thread(target=hammer, args=(n,), daemon=True) for n in range(4)]
            for t in threads:
                t.start()
            time.sleep(1.0)  # all four are running
            try:
                loaded = timed(lambda q: _search(client, q), items, 1)
            finally:
                stop.set()
                for t in threads:
                    t.join(60)
            alone = timed(lambda q: _search(client, q), items, 1)

            insights = insights_with_huge_questions(client, settings)

    typical_p50, long_p50 = statistics.median(typical), statistics.median(long)
    return [
        Row(
            "`/api/search`, 2,000-character question / typical, p50",
            f"{long_p50:.0f} / {typical_p50:.0f} ms = {ratio:.1f}x",
            f"≤ {RATIO_BUDGET:g}x",
            ratio <= RATIO_BUDGET,
        ),
        Row(
            "typical search while four 2,000-character ones run, p50 / p90",
            f"{statistics.median(loaded):.0f} / {pct(loaded, 90):.0f} ms "
            f"(alone {statistics.median(alone):.0f} / {pct(alone, 90):.0f} ms)",
            "–",
        ),
        Row("`/insights` with five stored questions of 20,005 characters", f"{insights:.2f} s", "–"),
    ]


if __name__ == "__main__":
    main(run, __doc__)
