"""Ingest: from scratch, again with nothing changed, and after one entry's answer changed.

In this process, into a temporary data directory with an empty embedding cache (the model is
loaded first; loading it is not ingest work):

- from scratch: total seconds, and passages embedded per second of embedding (every passage,
  the entries and the background sentences, over the seconds spent in `embed_passages`);
- the same sources again: seconds (target < 2 s) and passages embedded (target 0);
- a copy of the sources with one entry's answer changed: passages embedded (target 1).

    .venv/bin/python bench/bench_core.py [--quick]
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path
from typing import Sequence

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import Row, changed_sources, main  # noqa: E402

from ingest.pipeline import BuildReport, build_index  # noqa: E402
from kb.embedding import open_embedder  # noqa: E402
from kb.settings import Settings  # noqa: E402

SECTION = "ingest"
UNCHANGED_BUDGET_S = 2.0


def timed_build(settings: Settings, sources: Path | None = None) -> tuple[BuildReport, int, float]:
    """`build_index`, with the passages it sent to the model and the seconds the model took."""
    embedder = open_embedder(settings.embed_model)
    embed = embedder.embed_passages
    spent = {"passages": 0, "seconds": 0.0}

    def counted(texts: Sequence[str], batch_size: int = 16):  # type: ignore[no-untyped-def]
        started = time.perf_counter()
        try:
            return embed(texts, batch_size)
        finally:
            spent["seconds"] += time.perf_counter() - started
            spent["passages"] += len(texts)

    embedder.embed_passages = counted  # type: ignore[method-assign]
    try:
        report = build_index(settings, sources)
    finally:
        del embedder.embed_passages
    return report, int(spent["passages"]), float(spent["seconds"])


def run(quick: bool = False) -> list[Row]:
    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings.from_env({}, data_dir=Path(tmp) / "data")
        open_embedder(settings.embed_model).embed_passages(["warm up"])  # model load is not ingest work
        scratch, passages, embed_seconds = timed_build(settings)
        unchanged, unchanged_passages, _ = timed_build(settings)
        changed_sources(Path(tmp) / "sources", "A sentence only the changed build has.")
        one, one_passages, _ = timed_build(settings, Path(tmp) / "sources")
    return [
        Row(
            "passages embedded per second (scratch ingest, empty cache)",
            f"{passages / embed_seconds:.0f}/s ({passages} passages in {embed_seconds:.1f} s)",
            "–",
        ),
        Row("`kb ingest` from scratch", f"{scratch.seconds:.1f} s ({scratch.entries} entries)", "–"),
        Row(
            "`kb ingest`, nothing changed",
            f"{unchanged.seconds:.2f} s, {unchanged_passages} embedded",
            f"< {UNCHANGED_BUDGET_S:g} s, 0 embedded",
            unchanged.seconds < UNCHANGED_BUDGET_S and unchanged_passages == 0,
        ),
        Row(
            "`kb ingest`, one answer changed",
            f"{one.seconds:.2f} s, {one_passages} embedded",
            "1 embedded",
            one_passages == 1 and one.embedded == 1,
        ),
    ]


if __name__ == "__main__":
    main(run, __doc__)
