"""Which hits a reader sees: the entries close to an answer's score, or the nearest three
when nothing answers; measured on real searches of the shipped FAQs."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from kb.evaluate import is_expected, load_queries
from kb.hits import NEAREST_MAX, SHOW_MAX
from kb.knowledge import KnowledgeBase
from kb.settings import Settings
from tests.support.paths import DATA


@pytest.fixture(scope="module")
def kb(settings: Settings) -> KnowledgeBase:
    return KnowledgeBase.open(settings)


@pytest.mark.parametrize("query", ["asdfqwerzxcv", "how to bake sourdough bread at home", "周末去哪里爬山比较好"])
def test_nothing_answers_so_at_most_three_nearest(kb: KnowledgeBase, query: str) -> None:
    result = kb.search_blocking(query, k=10)
    assert result.answered is False and len(result.hits) == 10
    assert result.worth_showing() == result.hits[:NEAREST_MAX]


@pytest.mark.parametrize(
    ("query", "question"),
    [
        ("sglang illegal memory access", "Sglang shows an “an illegal memory access was encountered” error."),
        ("如何续训", "How do I resume training?"),
        ("max_tokens_per_gpu OOM", None),
    ],
)
def test_an_answer_comes_with_only_the_entries_close_to_it(kb: KnowledgeBase, query: str, question: str | None) -> None:
    result = kb.search_blocking(query, k=10)
    shown = result.worth_showing()
    assert result.answered and 1 <= len(shown) < 10
    assert shown == result.hits[: len(shown)]  # the best ones, in order
    if question:
        assert shown[0].entry.localized("en").question == question


@pytest.mark.slow
@pytest.mark.parametrize(("file", "share"), [("real_tune.jsonl", 0.95), ("dev.jsonl", 0.95)])
def test_the_right_entries_are_kept_and_few_others(kb: KnowledgeBase, file: str, share: float) -> None:
    """On 95% of the answered questions whose right entries are in the top ten, they are all
    shown (the margin was chosen on real_tune, where it keeps 97%), and few others are."""
    kept, counts = [], []
    for query in load_queries(DATA / file):
        result = kb.search_blocking(query.q, k=SHOW_MAX)
        if not (query.answerable and result.answered):
            continue
        shown = result.worth_showing()
        counts.append(len(shown))
        right = [h for h in result.hits if is_expected(h.entry, query.expect)]
        if right:
            kept.append(all(h in shown for h in right))
    assert len(kept) >= 30
    assert sum(kept) / len(kept) >= share
    assert sum(counts) / len(counts) < 4


def test_the_api_says_how_many_hits_deserve_showing(client: TestClient) -> None:
    body = client.get("/api/search", params={"q": "asdfqwerzxcv", "k": 10}).json()
    assert body["answered"] is False and len(body["hits"]) == 10 and body["shown"] == 3
    body = client.get("/api/search", params={"q": "sglang illegal memory access", "k": 10}).json()
    assert body["answered"] is True and 1 <= body["shown"] < 10
    assert "--sglang-mem-fraction-static" in body["hits"][0]["answer"]


def test_the_search_page_shows_no_answer_plainly_with_three_nearest(client: TestClient) -> None:
    page = client.get("/search", params={"q": "asdfqwerzxcv"}, headers={"Accept-Language": "en"}).text
    assert page.count('class="result"') == 3
    assert "The FAQ has no confident answer to this." in page and "Nearest entries, which may not answer it" in page
    page = client.get("/search", params={"q": "asdfqwerzxcv"}, headers={"Accept-Language": "zh"}).text
    assert "FAQ 里没有把握回答这个问题。" in page and "最接近的条目" in page


def test_the_search_page_shows_the_entries_close_to_an_answer(client: TestClient) -> None:
    page = client.get("/search", params={"q": "sglang illegal memory access"}, headers={"Accept-Language": "en"}).text
    assert 1 <= page.count('class="result"') < 10
    assert '<div class="no-answer" data-no-answer hidden>' in page
