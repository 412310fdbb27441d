"""Retrieval ablation: the cross-validated figures of `kb calibrate` with one mechanism off at a time.

    python bench/ablation.py tests/data/dev.jsonl tests/data/holdout.jsonl tests/data/real_tune.jsonl

Needs an index (`kb ingest`) in $KB_DATA_DIR. Prints one Markdown row per variant.
"""

from __future__ import annotations

import sys
from pathlib import Path
from unittest import mock

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from kb import calibrate as cal  # noqa: E402
from kb import search  # noqa: E402
from kb.evaluate import load_queries  # noqa: E402
from kb.knowledge import KnowledgeBase  # noqa: E402
from kb.settings import Settings  # noqa: E402


def row(name: str, report: dict) -> str:
    f = report["cross_validated"]
    by = f["by_lang"]
    o = f["overall"]
    oos = f["out_of_scope"]
    return (f"| {name} | {o['recall_at_1']:.3f} (en {by['en']['recall_at_1']:.3f}, zh {by['zh']['recall_at_1']:.3f}) "
            f"| {o['mrr_at_10']:.3f} | {oos['abstained']}/{oos['queries']} | {o['false_abstention']:.1%} |")


def main() -> None:
    queries = [q for path in sys.argv[1:] for q in load_queries(Path(path))]
    kb = KnowledgeBase.open(Settings.from_env())
    searcher = kb.searcher
    print("| variant | R@1 | MRR@10 | out of scope abstained | answerable abstained |")
    print("|---|---|---|---|---|")
    print(row("everything", cal.calibrate(searcher, queries)[1]))
    with mock.patch.dict(cal.GRID, {"hub": (0.0,)}):
        print(row("no hubness correction", cal.calibrate(searcher, queries)[1]))
    with mock.patch.object(search, "strip_noise", lambda text: text):
        print(row("no tracker-noise cleaning", cal.calibrate(searcher, queries)[1]))
    gloss = searcher.glossary.gloss
    plan = searcher.plan
    with mock.patch.object(searcher, "plan", lambda *a, **k: (lambda p: search.replace(p, embed_text=gloss(p.text)))(plan(*a, **k))):
        print(row("query embedded with its glossary expansion", cal.calibrate(searcher, queries)[1]))
    with mock.patch.dict(cal.GRID, {"question": (0.0,), "coverage": (0.0,), "framework": (0.0,), "hub": (0.0,)}):
        print(row("dense only (no lexical, framework or hub terms)", cal.calibrate(searcher, queries)[1]))


if __name__ == "__main__":
    main()
