"""Retrieval ablation: the cross-validated figures of `kb calibrate` with one mechanism off at
a time, then mechanisms tried and not kept (`tried`), each one added to the shipped search.

    python bench/ablation.py tests/data/dev.jsonl tests/data/holdout.jsonl tests/data/real_tune.jsonl

Needs an index (`kb ingest`) in $KB_DATA_DIR. Prints one Markdown row per variant.
"""

from __future__ import annotations

import dataclasses
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable
from unittest import mock

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from kb import calibrate as cal  # noqa: E402
from kb import search  # noqa: E402
from kb.dense import DenseIndex  # noqa: E402
from kb.evaluate import load_queries  # noqa: E402
from kb.knowledge import KnowledgeBase  # noqa: E402
from kb.scoring import RANK_FEATURES  # noqa: E402
from kb.settings import Settings  # noqa: E402
from kb.stacktrace import looks_like_trace, reduce_trace  # noqa: E402

FENCE = re.compile(r"```[^\n]*\n(.*?)```", re.S)
IDENTIFIER = re.compile(r"[_\-.]|[a-z][A-Z]|[A-Za-z]\d|\d[A-Za-z]")


def row(name: str, report: dict) -> str:
    f = report["cross_validated"]
    by = f["by_lang"]
    o = f["overall"]
    oos = f["out_of_scope"]
    return (
        f"| {name} | {o['recall_at_1']:.3f} (en {by['en']['recall_at_1']:.3f}, zh {by['zh']['recall_at_1']:.3f}) "
        f"| {o['mrr_at_10']:.3f} | {oos['abstained']}/{oos['queries']} | {o['false_abstention']:.1%} |"
    )


def main() -> None:
    queries = [q for path in sys.argv[1:] for q in load_queries(Path(path))]
    kb = KnowledgeBase.open(Settings.from_env())
    searcher = kb.searcher
    print("| variant | R@1 | MRR@10 | out of scope abstained | answerable abstained |")
    print("|---|---|---|---|---|")
    print(row("everything", cal.calibrate(searcher, queries)[1]))
    for name, fitted in (
        (
            "no length prior (the earlier fusion: dense, coverage, question, framework)",
            [f for f in RANK_FEATURES if f != "length"],
        ),
        ("no lexical evidence (dense, framework, length)", ["dense", "named", "length"]),
        ("dense only (no lexical or framework evidence)", ["dense"]),
    ):
        print(row(name, cal.calibrate(searcher, queries, fitted=fitted)[1]))
    with mock.patch.object(search, "strip_noise", lambda text: text):
        print(row("no tracker-noise cleaning", cal.calibrate(searcher, queries)[1]))
    gloss = searcher.glossary.gloss
    plan = searcher.plan
    with mock.patch.object(
        searcher, "plan", lambda *a, **k: (lambda p: dataclasses.replace(p, embed_text=gloss(p.text)))(plan(*a, **k))
    ):
        print(row("query embedded with its glossary expansion", cal.calibrate(searcher, queries)[1]))
    for name, patches in tried(searcher):
        with patches():
            print(row(f"tried: {name}", cal.calibrate(searcher, queries)[1]))


def _best_of(owners: np.ndarray, sims: np.ndarray, entries: int) -> np.ndarray:
    best = np.full(entries, -1.0, dtype=np.float32)
    np.maximum.at(best, owners, sims)
    return best


def _parts(question: str, answer: str) -> list[str]:
    """An answer's paragraphs, list items and code blocks, each with the question before it."""
    blocks = []
    for piece in re.split(r"(```.*?```)", answer, flags=re.S):
        if piece.startswith("```"):
            blocks.append(piece)
        else:
            blocks += [p.strip() for p in re.split(r"\n\s*\n|\n(?=\s*(?:[-*+]|\d+\.)\s)", piece) if p.strip()]
    return [f"{question}\n{b}" for b in blocks if len(b) >= 20]


def _part_vectors(s: Any, versions: list[tuple[int, Any]]) -> tuple[np.ndarray, np.ndarray]:
    """The owner and the vector of each part of the entries' answers (paragraph, list item, code block)."""
    part_texts = [(i, t) for i, v in versions for t in _parts(v.question, v.answer)]
    return np.array([i for i, _ in part_texts]), s.embedder.embed_passages([s.glossary.gloss(t) for _, t in part_texts])


def _hubness(s: Any, q_owners: np.ndarray, q_vectors: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each entry's typical similarity (centred) to the corpus's other questions, and to general text."""
    n = len(s.entries)
    rows = s.dense.vectors(np.arange(len(s.rows.owners)))
    sims = rows @ q_vectors.T
    sims[s.rows.owners[:, None] == q_owners[None, :]] = -1.0  # not the entry's own questions
    hub = s.rows.best(np.arange(n), np.sort(sims, axis=1)[:, -10:].mean(axis=1))
    general = s.rows.best(np.arange(n), np.sort(rows @ s.background.T, axis=1)[:, -10:].mean(axis=1))
    return hub - hub.mean(), general - general.mean()


def _reduced_dense(s: Any, texts: list[str]) -> DenseIndex:
    """The entries' vectors with each traceback they quote reduced like a pasted one before embedding."""

    def reduced(text: str) -> str:
        return FENCE.sub(
            lambda m: "```\n" + reduce_trace(m.group(1)) + "\n```" if looks_like_trace(m.group(1)) else m.group(0), text
        )

    return DenseIndex.from_vectors(s.embedder.embed_passages([s.glossary.gloss(reduced(text)) for text in texts]))


def tried(s: Any) -> list[tuple[str, Callable[[], Any]]]:
    """Variants that were measured and not kept, as (name, context manager factory)."""
    n = len(s.entries)
    versions = [(i, v) for i, e in enumerate(s.entries) for v in e.versions()]
    part_owners, part_vectors = _part_vectors(s, versions)
    q_owners = np.array([i for i, _ in versions])
    q_vectors = s.embedder.embed_queries([v.question for _, v in versions])  # questions embedded as queries
    cosines = s.entry_cosines

    def with_parts(share: float) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
        def entry_cosines(ids: np.ndarray, q: np.ndarray) -> np.ndarray:
            whole = cosines(ids, q)
            part = _best_of(part_owners, part_vectors @ q, n)[ids]
            return (1 - share) * whole + share * np.maximum(part, whole)

        return entry_cosines

    def with_questions(ids: np.ndarray, q: np.ndarray) -> np.ndarray:
        return cosines(ids, q) + (_best_of(q_owners, q_vectors @ q, n)[ids] - 0.85)

    hub, general = _hubness(s, q_owners, q_vectors)

    def less_hub(hubness: np.ndarray) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
        def entry_cosines(ids: np.ndarray, q: np.ndarray) -> np.ndarray:
            return cosines(ids, q) - hubness[ids]

        return entry_cosines

    reduced_dense = _reduced_dense(s, [v.text for _, v in versions])

    return [
        (
            "a vector per answer part (paragraph, list item, code block), half its best part's cosine",
            lambda: mock.patch.object(s, "entry_cosines", with_parts(0.5)),
        ),
        (
            "a vector per answer part, the best of the entry's vectors",
            lambda: mock.patch.object(s, "entry_cosines", with_parts(1.0)),
        ),
        (
            "the question alone embedded as a query too (symmetric match), added",
            lambda: mock.patch.object(s, "entry_cosines", with_questions),
        ),
        (
            "entry hubness (CSLS): its typical similarity to general text, taken off its cosine",
            lambda: mock.patch.object(s, "entry_cosines", less_hub(general)),
        ),
        (
            "entry hubness (CSLS): its typical similarity to the corpus's other questions, taken off its cosine",
            lambda: mock.patch.object(s, "entry_cosines", less_hub(hub)),
        ),
        (
            "entries' tracebacks reduced like a pasted one before embedding",
            lambda: mock.patch.object(s, "dense", reduced_dense),
        ),
        (
            "abstention also on the share of the question's words no entry has, and its identifiers the best entry lacks",
            lambda: _more_answer_features(s),
        ),
    ]


def _more_answer_features(s: Any) -> Any:
    """The answer model with two more inputs: the share of the question's words in no entry,
    and the share of its identifiers (`lr_decay_steps`, `JSONDecodeError`) the best entry lacks."""
    vocabulary = s.lexical.both

    @dataclass(frozen=True)
    class More(search.Features):
        unknown: float = 0.0
        identifiers: tuple = ()
        ids: Any = None

        def of_best(self, score: np.ndarray, order: np.ndarray, zh: bool, w: Any) -> np.ndarray:
            best = np.array([self.ids[order[0]]])
            held = [any(vocabulary.contains(t, best)[0] for t, _ in g) for g in self.identifiers]
            missing = 1 - sum(held) / len(held) if held else 0.0
            return np.concatenate([super().of_best(score, order, zh, w), [self.unknown, missing]])

    features = s.features

    def more(terms: Any, q: np.ndarray, ids: np.ndarray) -> More:
        groups = terms.groups
        unknown = sum(not any(t in vocabulary for t, _ in g) for g in groups) / max(1, len(groups))
        identifiers = tuple(g for g in groups if len(g[0][0]) > 3 and IDENTIFIER.search(g[0][0]))
        return More(**features(terms, q, ids).__dict__, unknown=unknown, identifiers=identifiers, ids=ids)

    return mock.patch.object(s, "features", more)


if __name__ == "__main__":
    main()
