"""Search past the flat-index size: the approximate (HNSW) index agrees with exact search,
filters still fill the k hits, and indexes written before the index kind was recorded load.

A synthetic corpus of a few thousand random vectors stands in for a large one; the
approximate index is forced with `write_index(..., approximate_above=0)`. Timings are not
tested here: `bench/bench_scale.py` measures them.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from kb import dense
from kb.entries import Entry
from kb.errors import IndexUnreadable
from kb.filters import Subset
from kb.glossary import Glossary
from kb.index import read_index, write_index
from kb.knowledge import KnowledgeBase
from kb.scoring import Weights
from kb.search import Searcher
from kb.settings import Settings

N = 3000
DIM = 32


def unit(x: np.ndarray) -> np.ndarray:
    return (x / np.linalg.norm(x, axis=-1, keepdims=True)).astype(np.float32)


def corpus_vectors(n: int = N, seed: int = 0) -> np.ndarray:
    """Unit vectors around a few dozen centres, as sentence embeddings cluster by topic."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(40, DIM))
    return unit(centres[rng.integers(0, 40, n)] + 0.5 * rng.normal(size=(n, DIM)))


def tags_of(i: int) -> tuple[str, ...]:
    return ("demo",) + (("even",) if i % 2 == 0 else ()) + (("rare",) if i % 97 == 0 else ())


def make_entries(n: int = N) -> list[Entry]:
    return [
        Entry(
            id=f"demo-{i:05d}",
            question=f"question {i} about topic{i % 40}",
            answer=f"answer {i} mentions ident{i}",
            source=f"src{i % 3}",
            source_title="Synthetic FAQ",
            source_version="1",
            source_url="https://example.com/faq.md",
            framework="Demo",
            section="",
            url=f"https://example.com/faq.md#{i}",
            lang="zh" if i % 5 == 0 else "en",
            tags=tags_of(i),
            line=i + 1,
        )
        for i in range(n)
    ]


def queries(vectors: np.ndarray, count: int = 100, seed: int = 1, noise: float = 0.1) -> tuple[np.ndarray, np.ndarray]:
    """Query vectors near some entries: an entry's vector plus noise; and those entries' ids."""
    rng = np.random.default_rng(seed)
    near = rng.choice(len(vectors), count, replace=False)
    return unit(vectors[near] + noise * rng.normal(size=(count, DIM))), near


def exact_top(vectors: np.ndarray, q: np.ndarray, k: int, allowed: np.ndarray | None = None) -> set[int]:
    scores = vectors @ q
    if allowed is not None:
        scores = np.where(allowed, scores, -np.inf)
    return set(np.argsort(-scores)[:k].tolist())


@pytest.fixture(scope="module")
def vectors() -> np.ndarray:
    return corpus_vectors()


@pytest.fixture(scope="module")
def approximate(tmp_path_factory, vectors) -> Path:
    """An index directory holding the corpus in HNSW."""
    path = tmp_path_factory.mktemp("scale") / "index"
    write_index(path, make_entries(), vectors, unit(np.ones((4, DIM))), "demo-model", "abc", approximate_above=0)
    return path


@pytest.fixture(scope="module")
def searcher(approximate) -> Searcher:
    index = read_index(approximate)
    # On this synthetic corpus the cosine alone must decide.
    weights = Weights(rank_coef=(1.0, 0.0, 0.0, 0.0, 0.0, 0.0))
    return Searcher(index.entries, index.vectors, None, Glossary(()), index.background, weights=weights)  # type: ignore[arg-type]


def test_meta_records_the_index_kind(approximate, tmp_path, vectors):
    meta = json.loads((approximate / "meta.json").read_text())
    assert (meta["index_kind"], meta["ef_search"]) == ("hnsw", dense.HNSW_EF_SEARCH)
    assert read_index(approximate).meta.index_kind == "hnsw"

    small = tmp_path / "index"
    write_index(small, make_entries(50), vectors[:50], unit(np.ones((4, DIM))), "demo-model", "abc")
    meta = json.loads((small / "meta.json").read_text())
    assert (meta["index_kind"], meta["ef_search"]) == ("flat", 0)


def test_approximate_top_10_agrees_with_exact(approximate, vectors):
    index = dense.DenseIndex(read_index(approximate).vectors)
    assert index.kind == dense.HNSW
    q, _ = queries(vectors)
    recall = np.mean([len(set(index.nearest(v, 10).tolist()) & exact_top(vectors, v, 10)) / 10 for v in q])
    assert recall >= 0.98


@pytest.mark.parametrize(
    "walk_step", [dense.EXACT_PER_WALK_STEP, 0], ids=["filter-searched-exactly", "filter-in-the-graph"]
)
@pytest.mark.parametrize(
    ("filters", "keep"),
    [
        ({"tags": ("rare",)}, lambda e: "rare" in e.tags),  # 31 entries: 1%
        ({"tags": ("even",), "lang": "zh"}, lambda e: "even" in e.tags and e.lang == "zh"),  # 10%
        ({"source": "src1"}, lambda e: e.source == "src1"),  # a third
    ],
)
def test_filters_fill_k_hits_with_the_nearest_matching_entries(
    searcher, vectors, monkeypatch, walk_step, filters, keep
):
    monkeypatch.setattr(dense, "EXACT_PER_WALK_STEP", walk_step)
    allowed = np.array([keep(e) for e in searcher.entries])
    q, _ = queries(vectors, count=20)
    found = []
    for v in q:
        plan = searcher.plan("question", k=10, **filters)
        hits = searcher.rank(plan, v).hits
        assert len(hits) == 10 and all(keep(h.entry) for h in hits)
        ids = {int(h.entry.id.split("-")[1]) for h in hits}
        found.append(len(ids & exact_top(vectors, v, 10, allowed)) / 10)
    assert np.mean(found) >= 0.9  # the words "question" match every entry: cosine decides


def test_a_filtered_graph_walk_that_finds_too_few_falls_back_to_exact_search(searcher, vectors, monkeypatch):
    monkeypatch.setattr(dense, "EXACT_PER_WALK_STEP", 0)
    monkeypatch.setattr(dense, "MAX_FILTERED_EF", 1)  # the walk keeps too few candidates
    allowed = Subset(N, ids=np.arange(0, N, 10))
    q, _ = queries(vectors, count=10)
    for v in q:
        found = searcher.dense.nearest(v, 200, allowed)
        assert len(found) == 200 and set(found.tolist()) == exact_top(vectors, v, 200, np.arange(N) % 10 == 0)


def test_an_entry_the_vectors_miss_is_found_by_its_words(vectors):
    entries = make_entries()
    index = dense.build(vectors, approximate_above=0)
    # Words weigh as much as the cosine, whatever the shipped calibration says: what is tested
    # is that the entry becomes a candidate at all.
    words_count = Weights(rank_coef=(1.0, 1.0, 0.0, 0.0, 0.0, 0.0))
    searcher = Searcher(
        entries,
        index,
        None,
        Glossary(()),
        unit(np.ones((4, DIM))),
        candidates=5,
        weights=words_count,  # type: ignore[arg-type]
    )
    q, near = queries(vectors, count=50, seed=3, noise=0.3)
    # Entries whose vector is a little too far from their query to be among the 5 nearest.
    missed = [
        (v, int(i)) for v, i in zip(q, near) if i not in exact_top(vectors, v, 5) and i in exact_top(vectors, v, 30)
    ]
    assert missed
    for v, target in missed:
        hit = searcher.rank(searcher.plan(f"ident{target}", k=5), v).hits[0]
        assert hit.entry.id == f"demo-{target:05d}" and hit.matched[0] == f"ident{target}"


def test_results_do_not_depend_on_the_number_of_candidates_for_clear_winners(vectors):
    entries = make_entries(600)
    index = dense.build(vectors[:600])
    wide = Searcher(entries, index, None, Glossary(()), unit(np.ones((4, DIM))), candidates=600)  # type: ignore[arg-type]
    narrow = Searcher(entries, index, None, Glossary(()), unit(np.ones((4, DIM))), candidates=30)  # type: ignore[arg-type]
    q, _ = queries(vectors[:600], count=30)
    for text, v in zip(["topic3 answer", "ident17 question", "mentions"] * 10, q):
        assert [h.entry.id for h in wide.rank(wide.plan(text, k=5), v).hits] == [
            h.entry.id for h in narrow.rank(narrow.plan(text, k=5), v).hits
        ]


def test_index_written_before_the_kind_was_recorded_loads_as_flat(tmp_path, vectors):
    path = tmp_path / "index"
    write_index(path, make_entries(50), vectors[:50], unit(np.ones((4, DIM))), "demo-model", "abc")
    meta_path = path / "meta.json"
    meta = json.loads(meta_path.read_text())
    del meta["index_kind"], meta["ef_search"]
    meta["format_version"] = 1
    meta_path.write_text(json.dumps(meta))
    index = read_index(path)
    assert (index.meta.index_kind, index.meta.format_version) == ("flat", 1)
    assert dense.DenseIndex(index.vectors).nearest(vectors[7], 1).tolist() == [7]


def test_a_kind_that_disagrees_with_the_file_is_refused(approximate, tmp_path):
    copy = tmp_path / "index"
    shutil.copytree(approximate, copy)
    meta = json.loads((copy / "meta.json").read_text())
    meta["index_kind"] = "flat"
    (copy / "meta.json").write_text(json.dumps(meta))
    with pytest.raises(IndexUnreadable, match="vectors.faiss holds a hnsw index; meta.json says flat"):
        read_index(copy)


def test_related_entries_on_the_approximate_index(approximate, searcher, vectors, tmp_path):
    index = read_index(approximate)
    kb = KnowledgeBase(
        settings=Settings(data_dir=tmp_path), meta=index.meta, path=index.path, searcher=searcher, sources=[]
    )
    agree = []
    for i in range(0, N, 60):
        related = kb.related(f"demo-{i:05d}", k=5)
        ids = [int(h.entry.id.split("-")[1]) for h in related]
        assert len(ids) == 5 and i not in ids
        assert [h.rank for h in related] == [1, 2, 3, 4, 5]
        assert all(a.score >= b.score for a, b in zip(related, related[1:]))
        agree.append(len(set(ids) & (exact_top(vectors, vectors[i], 6) - {i})) / 5)
    assert np.mean(agree) >= 0.98
