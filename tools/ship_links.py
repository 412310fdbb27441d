"""Write the tune split's real questions into the shipped FAQ folder as learned questions.

Each answerable question of tests/data/real_tune.jsonl becomes an alternate of the entry it
asks for (`kb/sources/<source>.alternates.toml`), each out-of-scope one a question the FAQ
does not cover (`kb/sources/not-covered.toml`), each with its issue tracker's URL. The test
split (tests/data/real_test.jsonl) is how the learning is measured, so nothing near it is
shipped: a tune question within cosine NEAR_TEST of a test question (the same error asked
twice, "[Bug] CUDA error: …" and "CUDA error: …") is left out. That is the only use of the
test split here.

    python tools/ship_links.py            # rewrite the files from the tune split
"""

from __future__ import annotations

import argparse
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
from kb.settings import SHIPPED_SOURCES, Settings  # noqa: E402

TUNE = ROOT / "tests" / "data" / "real_tune.jsonl"
TEST = ROOT / "tests" / "data" / "real_test.jsonl"
NEAR_TEST = 0.95  # as tests/kb/learning/test_overlay.py checks


def far_from_test(learned: list[LearnedQuestion], model: str) -> list[LearnedQuestion]:
    """The learned questions none of whose cosine with a test-split question reaches NEAR_TEST."""
    from kb.embedding import open_embedder
    from kb.search import searched_text

    embedder = open_embedder(model)
    test = embedder.embed_queries([searched_text(q.q) for q in load_queries(TEST)])
    mine = embedder.embed_queries([searched_text(q.question) for q in learned])
    nearest = (mine @ test.T).max(axis=1)
    for q, cosine in zip(learned, nearest):
        if cosine >= NEAR_TEST:
            print(f"left out, {cosine:.3f} from a test question: {q.question}")
    return [q for q, cosine in zip(learned, nearest) if cosine < NEAR_TEST]


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


def main(argv: list[str] | None = None) -> int:
    argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter).parse_args(argv)
    entries = parse_sources(SHIPPED_SOURCES)
    learned = far_from_test(learned_from(load_queries(TUNE), entries, urls_of(TUNE)), Settings.from_env().embed_model)
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
