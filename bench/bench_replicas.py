"""Replicas on one PostgreSQL: what recording into it costs a search, and records per second across two replicas.

Starts a throwaway PostgreSQL (tests/support/postgres.py: initdb in a temporary directory, loopback
only), or uses `--database-url`. Then, on one index:

- three servers (uvicorn, one worker each, in subprocesses) recording into PostgreSQL
  (`KB_DATABASE_URL`), into SQLite (`$KB_DATA_DIR/insights.sqlite`), and not at all (the
  data directory's `insights.sqlite` is a directory, so nothing is recorded). After one pass
  that fills each server's query cache, the development-set questions go to each in
  alternating blocks, one at a time over a keep-alive connection, so all three see the same
  machine state: `/api/search` p50 and its difference from the server that records nothing.
  With the embedding cached a search costs about a millisecond, so what recording adds to a
  request shows rather than drowning in the model's time;
- two replicas recording into the same PostgreSQL database under 32 concurrent clients
  (closed loop; the questions cached as above, every request recorded as a row): searches
  per second, and records per second from the first request until both replicas have written
  everything (their `/healthz` shows nothing waiting), with the rows counted in the database.

    .venv/bin/python bench/bench_replicas.py [--quick] [--database-url postgresql://...]
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from common import Load, Row, clients, drive, main, own_settings, questions, serving, serving_dir, timed  # noqa: E402

from kb.settings import Settings  # noqa: E402

SECTION = "replicas"
CLIENTS = 32


def settled(urls: list[str], timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while any(httpx.get(f"{u}/healthz", timeout=10).json()["insights_waiting"] for u in urls):
        if time.monotonic() > deadline:
            raise RuntimeError("records still waiting after two minutes")
        time.sleep(0.05)


def run(quick: bool = False, database_url: str = "") -> list[Row]:
    items = questions()
    rounds, seconds = (1, 5.0) if quick else (4, 20.0)
    with tempfile.TemporaryDirectory() as tmp, ExitStack() as stack:
        if not database_url:
            from tests.support.postgres import PostgresServer, find_binaries

            if find_binaries() is None:
                raise RuntimeError("PostgreSQL is not installed (apt-get install postgresql), and no --database-url")
            server = PostgresServer()
            stack.callback(server.close)
            database_url = server.create_database("bench")
        settings = own_settings(Path(tmp) / "own")
        p50 = one_at_a_time(stack, Path(tmp), settings, database_url, items, rounds)
        load, written, flushed = two_replicas(stack, Path(tmp), settings, database_url, items, seconds)
    print(f"replicas: {len(items)} questions x {rounds} rounds per server; {seconds:g} s of load", file=sys.stderr)
    return figures(p50, load, written, flushed)


def one_at_a_time(
    stack: ExitStack, tmp: Path, settings: Settings, database_url: str, items: list[str], rounds: int
) -> dict[str, float]:
    """The p50 of a search asked one at a time (query cached) with recording off, to SQLite and to PostgreSQL."""
    servers = {
        "recording off": ({}, serving_dir(tmp, "off", settings, False)),
        "SQLite": ({}, serving_dir(tmp, "sqlite", settings, True)),
        "PostgreSQL": ({"KB_DATABASE_URL": database_url}, serving_dir(tmp, "pg", settings, True)),
    }
    pools = {}
    for label, (env, path) in servers.items():
        url, _ = stack.enter_context(serving(settings.with_(data_dir=path), **env))
        pools[label] = stack.enter_context(httpx.Client(base_url=url, timeout=60))
    for client in pools.values():  # warm up: the model's pages, the first connections, the query cache
        timed(lambda q: client.get("/api/search", params={"q": q}).raise_for_status(), items, 1)
    samples: dict[str, list[float]] = {label: [] for label in servers}
    for _ in range(rounds):
        for label, client in pools.items():
            samples[label] += timed(lambda q: client.get("/api/search", params={"q": q}).raise_for_status(), items, 1)
    return {label: statistics.median(s) for label, s in samples.items()}


def two_replicas(
    stack: ExitStack, tmp: Path, settings: Settings, database_url: str, items: list[str], seconds: float
) -> tuple[Load, int, float]:
    """Two replicas on one database under CLIENTS clients for `seconds`: the load, the rows written and the seconds
    until every one was."""
    replicas = [
        stack.enter_context(
            serving(
                settings.with_(data_dir=serving_dir(tmp, f"replica-{n}", settings, True)),
                KB_DATABASE_URL=database_url,
            )
        )[0]
        for n in range(2)
    ]
    http = clients(replicas[0], CLIENTS)
    for client in http:
        stack.callback(client.close)
    for url in replicas:
        timed(lambda q: http[0].get(f"{url}/api/search", params={"q": q}).raise_for_status(), items, 1)
    settled(replicas)
    before = _count(database_url)
    started = time.perf_counter()
    load = drive(
        CLIENTS,
        lambda t, i: (
            http[t].get(f"{replicas[i % 2]}/api/search", params={"q": items[i % len(items)]}).raise_for_status()
        ),
        seconds=seconds,
    )
    settled(replicas)
    flushed = time.perf_counter() - started
    return load, _count(database_url) - before, flushed


def figures(p50: dict[str, float], load: Load, written: int, flushed: float) -> list[Row]:
    rows = []
    for label in p50:
        vs = "" if label == "recording off" else f" ({p50[label] - p50['recording off']:+.1f} ms)"
        rows.append(
            Row(
                f"`/api/search` p50, one at a time, query cached, {label}",
                f"{p50[label]:.1f} ms{vs}",
                "baseline" if label == "recording off" else "within noise of recording off",
            )
        )
    rows.append(
        Row(
            f"2 replicas on one PostgreSQL, {CLIENTS} clients: searches",
            f"{load.rate:.0f}/s; p50 {load.p50:.0f} ms, p99 {load.p99:.0f} ms",
            "report",
        )
    )
    rows.append(
        Row(
            f"2 replicas on one PostgreSQL, {CLIENTS} clients: records written",
            f"{written} of {len(load.latencies)} in {flushed:.1f} s: {written / flushed:.0f}/s",
            "every request's row",
            written == len(load.latencies),
        )
    )
    return rows


def _count(url: str) -> int:
    import psycopg

    with psycopg.connect(url) as conn:
        return int(conn.execute("SELECT count(*) FROM questions").fetchone()[0])  # type: ignore[index]


if __name__ == "__main__":
    main(run, __doc__, database_url=(str, "", "a PostgreSQL URL to use instead of a throwaway server"))
