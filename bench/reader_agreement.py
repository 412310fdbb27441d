"""Two readers of the same threads, and the harvest against each: how far a careful reader's labels are from
another's, so a precision measured against one reader can be read.

tests/data/harvest/unread.json was labelled by one reader per language; tests/data/harvest/unread_second_reader.json
holds a second reader's labels of the same threads (`harvest`, `answer`, `category`, `why`), set without seeing the
first's, the rules' choices or anything the project runs. Printed: the share of threads the two agree on and
Cohen's kappa; how many of one reader's positives the other labels positive (the precision a second reader scores
against the first); and the harvest's precision and recall against each reader and against either.

    .venv/bin/python bench/reader_agreement.py
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from kb.harvest import Rules, choose, read_threads  # noqa: E402

FIRST = ROOT / "tests" / "data" / "harvest" / "unread.json"
SECOND = ROOT / "tests" / "data" / "harvest" / "unread_second_reader.json"


def kappa(first: list[bool], second: list[bool]) -> tuple[float, float]:
    """The share of items two raters agree on, and Cohen's kappa (agreement beyond what chance gives)."""
    n = len(first)
    observed = sum(a == b for a, b in zip(first, second)) / n
    p, q = sum(first) / n, sum(second) / n
    chance = p * q + (1 - p) * (1 - q)
    return observed, (observed - chance) / (1 - chance) if chance < 1 else 1.0


def share(part: int, whole: int) -> str:
    return f"{part / whole:.3f} ({part} of {whole})" if whole else "-"


def report(rows: list[dict], title: str) -> None:
    first = [r["first"] for r in rows]
    second = [r["second"] for r in rows]
    chosen = [r for r in rows if r["chosen"]]
    observed, k = kappa(first, second)
    both = sum(a and b for a, b in zip(first, second))
    print(f"{title}: {len(rows)} threads; the readers agree on {observed:.3f}, kappa {k:.3f}")
    print(f"  the second reader labels positive {share(both, sum(first))} of the first's positives")
    print(f"  the first reader labels positive {share(both, sum(second))} of the second's positives")
    for name, key in (("the first reader", "first"), ("the second reader", "second")):
        right = sum(r[key] for r in chosen)
        print(
            f"  harvest against {name}: precision {share(right, len(chosen))}, recall {share(right, sum(r[key] for r in rows))}"
        )
    either = sum(r["first"] or r["second"] for r in chosen)
    print(f"  harvest against either reader: precision {share(either, len(chosen))}")


def main() -> None:
    raw = json.loads(FIRST.read_text(encoding="utf-8"))
    second = {row["url"]: row for row in json.loads(SECOND.read_text(encoding="utf-8"))}
    rows = [
        {
            "lang": item["fixture"]["lang"],
            "first": item["fixture"]["harvest"],
            "second": second[item["url"]]["harvest"],
            "chosen": choose(thread, Rules()) is not None,
        }
        for item, thread in zip(raw, read_threads(raw, str(FIRST)))
    ]
    report(rows, "unread.json")
    for lang in ("en", "zh"):
        report([r for r in rows if r["lang"] == lang], f"  {lang}")


if __name__ == "__main__":
    main()
