"""What the second-stage judge adds to a question's time, by how many candidates it reads.

The judges are the stand-ins of tests/support/judges.py, since no real one runs here: the tiny
cross-encoder (2 layers of width 32, built and saved on the spot, loaded through
sentence-transformers' CrossEncoder) and the stand-in OpenAI-compatible server (real
uvicorn on a loopback port, judging by shared words). For each candidate count
(KB_RERANK_TOP = 1, 5, 10, 20), each development-set question is first searched without the
judge (its embedding and first stage then cached), then with it, on a knowledge base of its
own whose verdict cache is empty: the difference is what the judge adds (reading the
candidates, the request, ranking them again). Skipping is off here (every question judged).

    .venv/bin/python bench/bench_judge.py [--questions 60]

A real cross-encoder costs far more per candidate (bge-reranker-v2-m3 is 568M parameters,
this one 0.1M), and a real LLM's time is its generation, not the request: these figures are
the machinery's overhead, the floor under whatever the deployer's judge takes.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

import uvicorn

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from common import Row, questions, ready_settings, rows_table  # noqa: E402

from kb.knowledge import KnowledgeBase  # noqa: E402
from kb.settings import Settings  # noqa: E402
from tests.support.judges import build_tiny_cross_encoder, judge_llm_app, judged_calibration  # noqa: E402

SECTION = "judge"
COUNTS = (1, 5, 10, 20)


def added_ms(settings: Settings, asked: list[str]) -> list[float]:
    """Per question: the judged search's time minus the first stage's (both with the embedding cached)."""
    kb = KnowledgeBase.open(settings)

    async def each() -> list[float]:
        await kb.search("how to warm up the judge", k=5)  # the model's first run, not timed
        added = []
        for question in asked:
            await kb.search(question, k=max(5, settings.rerank_top), judged=False)  # embedding and first stage cached
            started = time.perf_counter()
            await kb.search(question, k=5, judged=False)
            first = time.perf_counter() - started
            started = time.perf_counter()
            await kb.search(question, k=5)
            added.append((time.perf_counter() - started - first) * 1000)
        return added

    try:
        return asyncio.run(each())
    finally:
        assert kb.judging is not None
        stats = kb.judging.stats()
        kb.judging.close()
        if any(stats["failed"].values()) or stats["judged"] != len(asked) + 1:
            raise RuntimeError(f"not every question was judged: {stats}")


class StandIn:
    """The stand-in LLM endpoint, in a thread."""

    def __enter__(self) -> str:
        self.server = uvicorn.Server(uvicorn.Config(judge_llm_app([]), host="127.0.0.1", port=0, log_level="warning"))
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.thread.start()
        while not self.server.started:
            time.sleep(0.02)
        host, port = self.server.servers[0].sockets[0].getsockname()[:2]
        return f"http://{host}:{port}/v1"

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)


def run(quick: bool = False, count: int = 60) -> list[Row]:
    os.environ["HF_HUB_OFFLINE"] = "1"
    asked = questions()[: 20 if quick else count]
    rows = []
    with tempfile.TemporaryDirectory() as tmp, StandIn() as url:
        base = ready_settings(Path(tmp) / "data")
        tiny = build_tiny_cross_encoder(Path(tmp) / "tiny")
        judges = {
            "tiny cross-encoder": (base.with_(rerank_model=str(tiny)), "cross-encoder", str(tiny)),
            "stand-in LLM": (base.with_(llm_base_url=url, llm_model="overlap", rerank="llm"), "llm", "overlap"),
        }
        for name, (settings, kind, model) in judges.items():
            calibration = judged_calibration(Path(tmp) / f"{kind}.json", kind, model)
            for top in COUNTS:
                added = added_ms(settings.with_(calibration=str(calibration), rerank_top=top), asked)
                rows.append(
                    Row(
                        f"{name}, {top} candidate{'s' if top > 1 else ''}: added per question",
                        f"p50 {statistics.median(added):.1f} ms, mean {statistics.fmean(added):.1f} ms, "
                        f"max {max(added):.1f} ms ({len(added)} questions)",
                    )
                )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=60, help="development-set questions timed per judge and count")
    args = parser.parse_args()
    print(rows_table(run(count=args.questions)))


if __name__ == "__main__":
    main()
