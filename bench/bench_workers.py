"""Workers: `kb serve --workers 1` against `--workers 2`, throughput and latency at concurrency 8 and 32.

The servers run at once (subprocesses on loopback ports, one index, `KB_QUERY_CACHE_SIZE=0` so
every request runs the model, `KB_RATE_LIMIT=off`); closed-loop clients (one thread and one
keep-alive `httpx.Client` each) send the development and holdout questions to `/api/search`,
the servers in alternating blocks. Each worker is a process running the model with its own
OpenMP threads, as many as there are cores unless `OMP_NUM_THREADS` says otherwise; so two
workers are measured as they start by default and with the cores divided between them
(`OMP_NUM_THREADS` = cores / 2). On a machine with few cores a second worker may not help:
the figures say what it does here. Also the resident and proportional memory of each
server's processes (from /proc/<pid>/smaps_rollup): the model file is mapped, so workers
share its pages.

    .venv/bin/python bench/bench_workers.py [--quick]
"""

from __future__ import annotations

import os
import sys
import tempfile
from contextlib import ExitStack
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import Load, Row, clients, drive, main, own_settings, questions, serving  # noqa: E402
from processes import children, mib, rollup_kib  # noqa: E402

SECTION = "workers"
CONCURRENCY = (8, 32)
WARM_UP_S = 3.0
CORES = len(os.sched_getaffinity(0))
SERVERS = {  # label: (workers, extra environment)
    "1 worker": (1, {}),
    "2 workers": (2, {}),
    f"2 workers, OMP_NUM_THREADS={max(1, CORES // 2)}": (2, {"OMP_NUM_THREADS": str(max(1, CORES // 2))}),
}


def run(quick: bool = False) -> list[Row]:
    items = questions(holdout=True)
    rounds, per_block = (1, 64) if quick else (6, len(items))  # short blocks: outside load hits every server alike
    with tempfile.TemporaryDirectory() as tmp, ExitStack() as stack:
        settings = own_settings(Path(tmp))
        pools, memory = {}, {}
        for label, (workers, env) in SERVERS.items():
            url, process = stack.enter_context(serving(settings, workers, KB_QUERY_CACHE_SIZE="0", **env))
            pools[label] = clients(url, max(CONCURRENCY))
            memory[label] = process.pid
            for client in pools[label]:
                stack.callback(client.close)

        def search(label: str):  # type: ignore[no-untyped-def]
            pool = pools[label]
            return lambda t, i: pool[t].get("/api/search", params={"q": items[i % len(items)]}).raise_for_status()

        # Warm up until every worker has loaded its index and served searches.
        for label in SERVERS:
            drive(max(CONCURRENCY), search(label), seconds=WARM_UP_S)
        loads = {(label, c): Load([], 0.0) for label in SERVERS for c in CONCURRENCY}
        for _ in range(rounds):
            for c in CONCURRENCY:
                for label in SERVERS:
                    loads[label, c] += drive(c, search(label), count=per_block)
        footprint = {label: _memory(pid) for label, pid in memory.items()}

    rows = []
    for c in CONCURRENCY:
        one = loads["1 worker", c]
        for label in SERVERS:
            load = loads[label, c]
            vs = "" if load is one else f" ({load.rate / one.rate:.2f}x 1 worker)"
            rows.append(
                Row(
                    f"{label}, concurrency {c}: throughput; p50 / p99",
                    f"{load.rate:.0f}/s{vs}; {load.p50:.0f} / {load.p99:.0f} ms",
                    "baseline" if load is one else f"report ({CORES} cores)",
                )
            )
    for label, (rss, pss, count) in footprint.items():
        rows.append(
            Row(
                f"{label}: memory of the server's {count} process{'es' if count > 1 else ''}",
                f"RSS {mib(rss)}, PSS {mib(pss)} (shared pages counted once)",
            )
        )
    print(f"workers: {per_block} requests per block x {rounds} rounds", file=sys.stderr)
    return rows


def _memory(pid: int) -> tuple[int, int, int]:
    """Summed Rss and Pss (KiB) of a server's processes (uvicorn's and its workers), and how many there are."""
    pids = [pid, *children(pid)]
    rollups = [rollup_kib(p) for p in pids]
    return sum(r["Rss"] for r in rollups), sum(r["Pss"] for r in rollups), len(pids)


if __name__ == "__main__":
    main(run, __doc__)
