"""Write the tune split's real questions into the shipped FAQ folder as learned questions.

Each answerable question of tests/data/real_tune.jsonl becomes an alternate of the entry it
asks for (`kb/sources/<source>.alternates.toml`), each out-of-scope one a question the FAQ
does not cover (`kb/sources/not-covered.toml`), each with its issue tracker's URL. The test
split (tests/data/real_test.jsonl) is never read: it is how the learning is measured.

    python bench/ship_links.py            # rewrite the files from the tune split
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from ingest.sources import parse_sources  # noqa: E402
from kb.entries import Entry  # noqa: E402
from kb.evaluate import EvalQuery, is_expected, load_queries  # noqa: E402
from kb.learning import NOT_COVERED_FILE, LearnedQuestion, alternates_path, write_learned  # noqa: E402
from kb.settings import SHIPPED_SOURCES  # noqa: E402

TUNE = ROOT / "tests" / "data" / "real_tune.jsonl"


def learned_from(queries: list[EvalQuery], entries: list[Entry], urls: dict[str, str]) -> list[LearnedQuestion]:
    """Each answerable query as an alternate of every entry it expects; each other one not covered."""
    found = []
    for query in queries:
        url = urls.get(query.id, "")
        if not query.answerable:
            found.append(LearnedQuestion(query.q, query.lang, "tracker", url))
            continue
        for entry in entries:
            if is_expected(entry, query.expect):
                found.append(LearnedQuestion(query.q, query.lang, "tracker", url, entry=entry.id))
    return found


def urls_of(path: Path) -> dict[str, str]:
    """Each question's issue tracker URL, by id."""
    with open(path, encoding="utf-8") as f:
        rows = [json.loads(line) for line in f if line.strip()]
    return {row["id"]: row.get("url", "") for row in rows}


def main() -> int:
    entries = parse_sources(SHIPPED_SOURCES)
    learned = learned_from(load_queries(TUNE), entries, urls_of(TUNE))
    source_of = {e.id: e.source for e in entries}
    by_source: dict[str, list[LearnedQuestion]] = defaultdict(list)
    for q in learned:
        if q.entry is not None:
            by_source[source_of[q.entry]].append(q)
    for name in dict.fromkeys(e.source for e in entries):
        write_learned(alternates_path(SHIPPED_SOURCES, name), by_source.get(name, []))
    uncovered = [q for q in learned if q.entry is None]
    write_learned(SHIPPED_SOURCES / NOT_COVERED_FILE, uncovered)
    print(f"{len(learned) - len(uncovered)} alternates in {len(by_source)} sources, {len(uncovered)} not covered")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
