"""Hostile pasted text: what reducing the worst shapes found costs, at 1, 10, 45 and 100 KB.

Each shape (tests/support/hostile_text.py: runs of dots, brackets and spaces, one frame
repeated, on lines or on one line, ...) goes through every reduction a search or an ingest
runs on the text as given: noise stripping, the trace check and reduction, the length check
(`fits`), tokenizing and `searched_text`; the best of three runs of all of them, in this
process. The time should grow linearly with the text (target: under 1 s at 100 KB; before
the patterns were made linear, 45 KB with a run of dots took 35 s).

    .venv/bin/python bench/bench_hostile_text.py [--quick]
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import ROOT, Row, main  # noqa: E402

sys.path.insert(0, str(ROOT))

from kb.noise import strip_noise  # noqa: E402
from kb.search import searched_text  # noqa: E402
from kb.stacktrace import fits, looks_like_trace, reduce_trace  # noqa: E402
from kb.text import tokenize  # noqa: E402
from tests.support.hostile_text import hostile_texts  # noqa: E402

SECTION = "hostile text"
SIZES = (1_000, 10_000, 45_000, 100_000)
BUDGET = 1.0  # seconds at 100 KB


def reduced(text: str) -> None:
    strip_noise(text)
    looks_like_trace(text)
    reduce_trace(text)
    fits(text, 2000)
    tokenize(text)
    searched_text(text)


def best(text: str, runs: int) -> float:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        reduced(text)
        times.append(time.perf_counter() - started)
    return min(times)


def run(quick: bool = False) -> list[Row]:
    tokenize("预热")  # jieba's dictionary, once
    runs = 1 if quick else 3
    rows = []
    for shape in hostile_texts(SIZES[0]):
        took = [best(hostile_texts(size)[shape], runs) for size in SIZES]
        rows.append(
            Row(
                f"{shape}: 1 / 10 / 45 / 100 KB",
                " / ".join(f"{t * 1000:.1f}" for t in took) + " ms",
                f"100 KB < {BUDGET:g} s",
                took[-1] < BUDGET,
            )
        )
    return rows


if __name__ == "__main__":
    main(run, __doc__)
