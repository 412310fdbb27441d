"""Core figures: ingest from scratch and unchanged, `kb search` from a cold process, the search call.

    python bench/bench_core.py            # prints a table; run on an idle machine

Times vary on shared machines; compare figures measured in the same run.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ingest.pipeline import build_index  # noqa: E402
from kb.embedding import open_embedder  # noqa: E402
from kb.evaluate import load_queries  # noqa: E402
from kb.knowledge import KnowledgeBase  # noqa: E402
from kb.settings import Settings  # noqa: E402


def percentile(values: list[float], p: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))]


def main() -> None:
    rows: list[tuple[str, str]] = []
    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings.from_env({}, data_dir=Path(tmp))
        open_embedder(settings.embed_model)  # model load is not ingest work
        report = build_index(settings)
        rows.append(("kb ingest, from scratch", f"{report.seconds:.2f} s ({report.embedded} embedded)"))
        report = build_index(settings)
        rows.append(("kb ingest, nothing changed", f"{report.seconds:.2f} s ({report.embedded} embedded)"))

        env = dict(os.environ, KB_DATA_DIR=tmp)
        cold = []
        for _ in range(3):
            started = time.perf_counter()
            subprocess.run([sys.executable, "-m", "kb.cli", "search", "how do I resume training"],
                           env=env, cwd=ROOT, check=True, capture_output=True)
            cold.append(time.perf_counter() - started)
        rows.append(("kb search, cold process (median of 3)", f"{statistics.median(cold):.2f} s"))

        kb = KnowledgeBase.open(settings)
        queries = [q.q for q in load_queries(ROOT / "tests" / "data" / "dev.jsonl")]
        embedder = kb.searcher.embedder
        for q in queries[:5]:
            kb.search(q)
        glossary = kb.searcher.glossary
        embed_ms, glossed_ms, search_ms = [], [], []
        for _ in range(3):
            for q in queries:
                started = time.perf_counter()
                embedder.embed_query(q)
                embed_ms.append((time.perf_counter() - started) * 1000)
                glossed = glossary.gloss(q)
                started = time.perf_counter()
                embedder.embed_query(glossed)
                glossed_ms.append((time.perf_counter() - started) * 1000)
                started = time.perf_counter()
                kb.search(q)
                search_ms.append((time.perf_counter() - started) * 1000)
        e50, g50, s50 = (percentile(x, 50) for x in (embed_ms, glossed_ms, search_ms))
        rows.append(("embedding the query as typed, p50 / p95", f"{e50:.1f} / {percentile(embed_ms, 95):.1f} ms"))
        rows.append(("embedding the glossed query, p50 / p95", f"{g50:.1f} / {percentile(glossed_ms, 95):.1f} ms"))
        rows.append(("kb.search call, p50 / p95", f"{s50:.1f} / {percentile(search_ms, 95):.1f} ms"))
        rows.append(("search / embedding as typed, at p50", f"{s50 / e50:.2f}x"))
        rows.append(("search / embedding glossed, at p50", f"{s50 / g50:.2f}x"))

    width = max(len(name) for name, _ in rows)
    print(f"{'measure':<{width}}  value")
    for name, value in rows:
        print(f"{name:<{width}}  {value}")


if __name__ == "__main__":
    main()
