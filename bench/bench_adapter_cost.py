"""What the query adapter adds to a new question's time: the search's work after the model, with and without it.

Every development, holdout and real question is embedded once; then each is ranked by the
same searcher with its adapter and without (`Searcher.with_adapter(None)`), in alternating
blocks of twenty so both meet the same spells of outside load. Ranking is everything a new
question costs besides the model (the adapter maps the question's vector there); the model's
time, 10-15 ms, is the same for both. Reports the p50 of each and the difference.

    .venv/bin/python bench/bench_adapter_cost.py [--quick]
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import Row, main, questions, ready_settings  # noqa: E402

from kb.knowledge import KnowledgeBase  # noqa: E402

BLOCK = 20


def run(quick: bool = False) -> list[Row]:
    with tempfile.TemporaryDirectory() as tmp:
        kb = KnowledgeBase.open(ready_settings(Path(tmp)))
        with_adapter = kb.searcher
        if with_adapter.adapter is None:
            raise SystemExit(
                "the index has no query adapter: run `kb ingest` (the shipped FAQs carry one) or `kb tune`"
            )
        without = with_adapter.with_adapter(None)
        asked = questions(holdout=True, real=True)[: 200 if quick else None]
        plans = [with_adapter.plan(q, 5) for q in asked]
        vectors = with_adapter.embedder.embed_queries([p.embed_text for p in plans])
        times: dict[str, list[float]] = {"with": [], "without": []}
        for start in range(0, len(plans), BLOCK):
            block = range(start, min(start + BLOCK, len(plans)))
            sides = [("with", with_adapter), ("without", without)]
            for name, searcher in sides if (start // BLOCK) % 2 == 0 else sides[::-1]:
                for i in block:
                    words = searcher.words(plans[i])
                    began = time.perf_counter()
                    searcher.rank(plans[i], vectors[i], words)
                    times[name].append(time.perf_counter() - began)
    p50 = {name: statistics.median(t) * 1000 for name, t in times.items()}
    extra = p50["with"] - p50["without"]
    print(f"{len(plans)} questions: ranking p50 {p50['without']:.3f} ms without the adapter, {p50['with']:.3f} ms with")
    return [Row("a new question's extra time with the adapter, p50", f"{extra:.3f} ms", "<= 0.1 ms", extra <= 0.1)]


if __name__ == "__main__":
    main(run, __doc__)
