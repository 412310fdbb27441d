"""Recording overhead: `/api/search` latency with the insights store and without it; rows written per second.

Starts two real servers (uvicorn, one worker each, in subprocesses) on one index: one records
into a fresh insights database, the other has none (its `insights.sqlite` is a directory, so
nothing is recorded, as on a data directory that cannot be written). The development-set
questions go to each in alternating blocks over keep-alive connections, one at a time, so both
see the same machine state. Then:

- what `Recorder.searched` costs the request that calls it (in this process);
- rows per second when 16 threads each commit single-row transactions to one file (the worst
  case: what separate worker processes would do), and through the recorder's queue, which
  one writer thread drains in batches;
- the recording server under 16 concurrent clients: requests per second, and whether every
  request's row arrived.

    .venv/bin/python bench/bench_insights.py [--rounds 3] [--repeat 3] [--threads 16]

The index is taken from `KB_DATA_DIR` when it exists there, else built into a temporary directory.
"""

from __future__ import annotations

import argparse
import signal
import sqlite3
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_http import free_port, pct, questions, ready_settings, start_server, timed  # noqa: E402
from common import serving_dir  # noqa: E402

from kb.insights import InsightsStore, Question, Recorder, store_path  # noqa: E402
from kb.knowledge import KnowledgeBase  # noqa: E402
from kb.settings import Settings  # noqa: E402


def threads_writing(threads: int, work: int, write) -> float:  # type: ignore[no-untyped-def]
    """Seconds for `threads` threads each calling `write(n, i)` `work` times, started together."""
    barrier = threading.Barrier(threads + 1)

    def run(n: int) -> None:
        barrier.wait()
        for i in range(work):
            write(n, i)

    workers = [threading.Thread(target=run, args=(n,)) for n in range(threads)]
    for w in workers:
        w.start()
    barrier.wait()
    started = time.perf_counter()
    for w in workers:
        w.join()
    return time.perf_counter() - started


def rows_per_second(tmp: Path, settings: Settings, threads: int) -> None:
    q = Question("how do I resume training", "en", "web", True, "slime-1", 0.3, 12.0)
    store = InsightsStore(tmp / "direct" / "insights.sqlite")
    per_thread = 200
    seconds = threads_writing(threads, per_thread, lambda n, i: store.questions.add([q]))
    assert store.count("questions") == threads * per_thread
    print(f"single-row transactions, {threads} threads: {threads * per_thread / seconds:8.0f} rows/s")
    store.close()

    recorder = Recorder(InsightsStore(tmp / "queued" / "insights.sqlite"), settings)
    kb = KnowledgeBase.open(settings)
    result = kb.search_blocking("how do I resume training")
    per_thread = 500  # 8,000 in all: under the queue's 10,000, so nothing is dropped
    started = time.perf_counter()
    threads_writing(threads, per_thread, lambda n, i: recorder.searched(result, "web", started))
    recorder.flush(60)
    seconds = time.perf_counter() - started
    assert recorder.store is not None
    written = recorder.store.count("questions")
    print(
        f"through the recorder's queue, {threads} threads: {written / seconds:8.0f} rows/s "
        f"({written} of {threads * per_thread} written, {recorder.dropped} dropped)"
    )

    calls = 5_000  # within the queue, so each call takes the path a request takes
    started = time.perf_counter()
    for _ in range(calls):
        recorder.searched(result, "web", started)
    cost = (time.perf_counter() - started) / calls * 1e6
    print(f"Recorder.searched costs the request {cost:.1f} µs ({recorder.dropped} dropped)")
    recorder.close()


def under_load(url: str, store_file: Path, items: list[str], threads: int) -> None:
    before = _count(store_file)
    failures: list[int] = []

    clients: dict[int, httpx.Client] = {}

    def ask(n: int, i: int) -> None:
        client = clients.setdefault(n, httpx.Client(base_url=url, timeout=60))
        response = client.get("/api/search", params={"q": items[(n * 7 + i) % len(items)]})
        if response.status_code != 200:
            failures.append(response.status_code)

    per_thread = 20
    seconds = threads_writing(threads, per_thread, ask)
    sent = threads * per_thread
    deadline = time.monotonic() + 30
    while _count(store_file) - before < sent and time.monotonic() < deadline:
        time.sleep(0.1)
    print(
        f"{threads} concurrent clients: {sent / seconds:.0f} searches/s, {len(failures)} failed, "
        f"{_count(store_file) - before} of {sent} recorded"
    )


def print_latency(samples: dict[str, list[float]]) -> None:
    print(f"{'':16} {'p50 ms':>8} {'p95 ms':>8} {'mean ms':>8}")
    for name, values in samples.items():
        print(f"{name:16} {statistics.median(values):8.2f} {pct(values, 95):8.2f} {statistics.mean(values):8.2f}")
    ratio = statistics.median(samples["with the store"]) / statistics.median(samples["without"])
    print(f"p50 with / without: {ratio:.3f}\n")


def _count(path: Path) -> int:
    with sqlite3.connect(path) as db:
        return int(db.execute("SELECT count(*) FROM questions").fetchone()[0])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3, help="alternating blocks per server")
    parser.add_argument("--repeat", type=int, default=3, help="passes over the questions per block")
    parser.add_argument("--threads", type=int, default=16, help="writer threads and concurrent clients")
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # unwind through `finally`: stop the servers
    items = questions()
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        settings = ready_settings(tmp / "built")
        with_store = settings.with_(data_dir=serving_dir(tmp, "recording", settings))
        without = settings.with_(data_dir=serving_dir(tmp, "not-recording", settings, recording=False))
        ports = free_port(), free_port()
        servers = [start_server(with_store, ports[0]), start_server(without, ports[1])]
        try:
            clients = [httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30) for port in ports]

            def on(client: httpx.Client):  # type: ignore[no-untyped-def]
                return lambda q: client.get("/api/search", params={"q": q}).raise_for_status()

            for client in clients:
                timed(on(client), items, 1)  # warm up
            samples: dict[str, list[float]] = {"with the store": [], "without": []}
            for _ in range(args.rounds):
                samples["with the store"] += timed(on(clients[0]), items, args.repeat)
                samples["without"] += timed(on(clients[1]), items, args.repeat)
            for client in clients:
                client.close()
            print(f"\n{len(items)} questions x {args.repeat} passes x {args.rounds} rounds, GET /api/search\n")
            print_latency(samples)
            under_load(f"http://127.0.0.1:{ports[0]}", store_path(with_store.data_dir), items, args.threads)
        finally:
            for server in servers:
                server.terminate()
                server.wait(timeout=10)
        rows_per_second(tmp, settings, args.threads)


if __name__ == "__main__":
    main()
