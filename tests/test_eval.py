"""Retrieval quality on the query sets, measured as `kb eval` measures it.

dev.jsonl is the development set; holdout.jsonl was written separately from the corpus,
without sight of the development set, to check that the figures carry over.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kb.errors import SourceError
from kb.evaluate import evaluate, is_expected, load_queries
from kb.knowledge import KnowledgeBase

DATA = Path(__file__).parent / "data"


@pytest.fixture(scope="module")
def kb(settings):
    return KnowledgeBase.open(settings)


@pytest.mark.parametrize(("name", "recall_at_1", "mrr"), [("dev", 0.95, 0.97), ("holdout", 0.93, 0.95)])
def test_retrieval_quality(kb, name, recall_at_1, mrr):
    report = evaluate(kb.search, load_queries(DATA / f"{name}.jsonl"))
    assert report.overall.recall_at_1 >= recall_at_1, report.to_dict()["misses"]
    assert report.overall.mrr_at_10 >= mrr, report.to_dict()["misses"]
    assert all(s.recall_at_1 >= 0.91 for s in report.by_lang.values()), report.by_lang
    assert report.abstained == report.out_of_scope, "every out-of-scope query abstains"
    assert report.overall.false_abstention <= 0.03


def test_is_expected_normalises_like_the_format_says(kb):
    entry = next(e for e in kb.entries if "PIPESTATUS" in e.answer)
    assert is_expected(entry, ["pipestatus"])
    assert is_expected(entry, [entry.id])
    assert not is_expected(entry, ["no such words"])


def test_bad_query_file_names_the_line(tmp_path):
    path = tmp_path / "q.jsonl"
    path.write_text('{"id": "a", "q": "x", "expect": [], "lang": "en"}\n{"id": "b"}\n', encoding="utf-8")
    with pytest.raises(SourceError, match=r"q.jsonl:2: not a query object \(KeyError: 'q'\)"):
        load_queries(path)


def test_empty_query_file_is_an_error(tmp_path):
    path = tmp_path / "q.jsonl"
    path.write_text("\n", encoding="utf-8")
    with pytest.raises(SourceError, match="no queries in the file"):
        load_queries(path)
