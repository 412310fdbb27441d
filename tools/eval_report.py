"""Write tests/data/eval_report.json: the `kb eval` figures of the shipped calibration on the
query sets that tests/quality/test_eval.py holds the search to (within its tolerance), and raise
tests/data/best_figures.json's best figures where these beat them.

    python tools/eval_report.py

Run it after `kb calibrate`; needs an index (`kb ingest`) in $KB_DATA_DIR.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from kb.evaluate import evaluate, load_queries  # noqa: E402
from kb.knowledge import KnowledgeBase  # noqa: E402
from kb.settings import Settings  # noqa: E402

DATA = ROOT / "tests" / "data"
SETS = ("dev", "holdout", "real_test")


def main(argv: list[str] | None = None) -> None:
    argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter).parse_args(argv)
    kb = KnowledgeBase.open(Settings.from_env())
    report = {}
    for name in SETS:
        figures = evaluate(kb.search_blocking, load_queries(DATA / f"{name}.jsonl")).to_dict()
        figures.pop("misses")
        report[name] = figures
        print(name, figures["overall"], figures["out_of_scope"])
    (DATA / "eval_report.json").write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    raise_best(report)


def raise_best(report: dict) -> None:
    """Raise tests/data/best_figures.json's figures that `report` beats (never lower one: that takes a record in
    its `lowered` list naming the CHANGELOG entry that says why)."""
    path = DATA / "best_figures.json"
    best = json.loads(path.read_text(encoding="utf-8"))
    for name, figures in best["figures"].items():
        for figure, value in figures.items():
            part = report[name]["out_of_scope" if figure == "abstained" else "overall"]
            now = part["abstained" if figure == "abstained" else figure]
            if now > value:
                figures[figure] = now
                print(f"best figure raised: {name} {figure} {value} -> {now}")
    path.write_text(json.dumps(best, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
