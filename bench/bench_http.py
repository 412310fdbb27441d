"""`/api/search` over HTTP against the bare embedding call, measured in the same run.

Starts the real server (uvicorn, one worker, in a subprocess) on a free loopback port,
sends the development-set questions to `/api/search` over a keep-alive connection, and
times, in this process, the embedding call a search makes for each question (the question
with stack traces reduced and glossary terms added, which is what `kb.search` embeds),
the raw question embedded alone, and `kb.search` in-process. The blocks alternate so all
sides see the same machine state.

    .venv/bin/python bench/bench_http.py [--rounds 3] [--repeat 5]

The index is taken from `KB_DATA_DIR` when it exists there, else built into a temporary
directory first. Prints a table of p50/p95 in milliseconds and the server's share at p50.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from kb.errors import IndexMissingError  # noqa: E402
from kb.index import read_meta  # noqa: E402
from kb.knowledge import KnowledgeBase  # noqa: E402
from kb.settings import Settings  # noqa: E402
from kb.stacktrace import reduce_trace  # noqa: E402

QUESTIONS = ROOT / "tests" / "data" / "dev.jsonl"


def questions() -> list[str]:
    with QUESTIONS.open(encoding="utf-8") as f:
        return [json.loads(line)["q"] for line in f if line.strip()]


def ready_settings(tmp: Path) -> Settings:
    settings = Settings.from_env()
    try:
        read_meta(settings.index_dir)
        return settings
    except IndexMissingError:
        from ingest import build_index

        settings = settings.with_(data_dir=tmp)
        print(f"building an index in {tmp} ...", file=sys.stderr)
        build_index(settings)
        return settings


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_server(settings: Settings, port: int, **env_vars: str) -> subprocess.Popen[bytes]:
    """`uvicorn` serving the app on a loopback port, with extra `KB_*` variables if given."""
    env = dict(os.environ, KB_DATA_DIR=str(settings.data_dir), PYTHONPATH=str(ROOT), **env_vars)
    env.pop("KB_LLM_BASE_URL", None)
    command = [sys.executable, "-m", "uvicorn", "server:create_app", "--factory",
               "--host", "127.0.0.1", "--port", str(port), "--log-level", "warning", "--no-access-log"]
    process = subprocess.Popen(command, env=env, cwd=ROOT)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200:
                return process
        except httpx.TransportError:
            time.sleep(0.1)
    process.terminate()
    raise SystemExit("the server did not start")


def timed(call, items: list[str], repeat: int) -> list[float]:  # type: ignore[no-untyped-def]
    samples = []
    for _ in range(repeat):
        for item in items:
            started = time.perf_counter()
            call(item)
            samples.append((time.perf_counter() - started) * 1000)
    return samples


def pct(samples: list[float], p: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3, help="alternating blocks per side")
    parser.add_argument("--repeat", type=int, default=3, help="passes over the questions per block")
    args = parser.parse_args()

    # On SIGTERM, unwind through `finally` so the server subprocess is stopped too.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    items = questions()
    with tempfile.TemporaryDirectory() as tmp:
        settings = ready_settings(Path(tmp))
        kb = KnowledgeBase.open(settings)
        embedder = kb.searcher.embedder
        port = free_port()
        server = start_server(settings, port)
        try:
            client = httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30)

            def http(q: str) -> None:
                response = client.get("/api/search", params={"q": q})
                response.raise_for_status()

            searcher = kb.searcher

            def embedding(q: str) -> None:
                # The one embedding call kb.search makes for this question (see kb/search.py).
                embedder.embed_query(searcher.glossary.gloss(reduce_trace(q)))

            # Warm up every side (first calls build OpenMP teams and caches).
            timed(embedding, items[:10], 1)
            timed(kb.search, items[:10], 1)
            timed(http, items, 1)

            results: dict[str, list[float]] = {
                "embedding (as search does)": [],
                "embedding (raw question)": [],
                "kb.search in-process": [],
                "GET /api/search over HTTP": [],
            }
            for _ in range(args.rounds):
                results["embedding (as search does)"] += timed(embedding, items, args.repeat)
                results["embedding (raw question)"] += timed(embedder.embed_query, items, args.repeat)
                results["kb.search in-process"] += timed(kb.search, items, args.repeat)
                results["GET /api/search over HTTP"] += timed(http, items, args.repeat)
            client.close()
        finally:
            server.terminate()
            server.wait(timeout=10)

    base = statistics.median(results["embedding (as search does)"])
    print(f"\n{len(items)} questions x {args.repeat} passes x {args.rounds} rounds; model {kb.meta.model}\n")
    print(f"{'':28} {'p50 ms':>8} {'p95 ms':>8} {'vs embedding p50':>18}")
    for name, samples in results.items():
        p50, p95 = statistics.median(samples), pct(samples, 95)
        print(f"{name:28} {p50:8.2f} {p95:8.2f} {f'{(p50 / base - 1) * 100:+.0f}%':>18}")
    http_p50 = statistics.median(results["GET /api/search over HTTP"])
    search_p50 = statistics.median(results["kb.search in-process"])
    added = http_p50 / base - 1
    verdict = "within" if added < 0.30 else "OVER"
    print(f"\nover HTTP, /api/search takes {added * 100:+.0f}% of the embedding time at p50 ({verdict} the 30% budget);")
    print(f"the server's own share (HTTP minus in-process kb.search) is {http_p50 - search_p50:+.2f} ms")

if __name__ == "__main__":
    main()
