"""An entry whose answer is links alone does not come first for a question it shares no word with."""

from __future__ import annotations

import json

import numpy as np
import pytest

from kb.hubs import demoted, links_only
from kb.knowledge import KnowledgeBase
from kb.settings import Settings
from tests.support.paths import DATA

LINKS_ONLY = "training-env-33d6816c"  # "Deepspeed & flash-attn": two bare links


@pytest.fixture(scope="module")
def kb(settings: Settings) -> KnowledgeBase:
    return KnowledgeBase.open(settings)


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        (
            "<https://github.com/lm-sys/FastChat/pull/177>\n<https://github.com/HazyResearch/flash-attention/issues/108>",
            True,
        ),
        ("https://example.org/a https://example.org/b", True),
        ("[https://example.org/a](https://example.org/a)", True),  # its text is the link again
        ("[the guide](https://example.org/a)", False),  # link text is words to read
        ("参考 [配置文件](https://github.com/alibaba/ChatLearn/blob/v1.0.3/docs/zh/config_yaml.md)。", False),
        ("See <https://example.org/a>", False),
        ("", False),
    ],
)
def test_links_only(answer: str, expected: bool) -> None:
    assert links_only(answer) is expected


def test_only_a_hub_sharing_no_word_is_brought_down() -> None:
    score = np.array([3.0, 1.0, -2.0, 2.0])
    links = np.array([True, True, False, False])
    coverage = np.array([0.0, 0.4, 0.0, 0.0])
    assert demoted(score, links, coverage).tolist() == [-2.0, 1.0, -2.0, 2.0]
    assert demoted(score, np.zeros(4, bool), coverage) is score


def test_the_shipped_corpus_has_one_links_only_entry(kb: KnowledgeBase) -> None:
    assert [e.id for e, bare in zip(kb.entries, kb.searcher.links_only) if bare] == [LINKS_ONLY]


@pytest.mark.parametrize("question", ["what's the weather in Paris", "hi", "tell me a joke", "hello"])
def test_a_question_near_no_entry_is_not_offered_the_links_first(kb: KnowledgeBase, question: str) -> None:
    result = kb.search_blocking(question, 10)
    assert not result.answered
    assert result.hits[0].entry.id != LINKS_ONLY
    assert LINKS_ONLY not in [h.entry.id for h in result.worth_showing()]


def test_a_question_in_its_words_still_finds_it(kb: KnowledgeBase) -> None:
    assert kb.search_blocking("deepspeed flash-attn", 3).hits[0].entry.id == LINKS_ONLY


@pytest.mark.slow
def test_no_out_of_scope_question_gets_a_links_only_entry_first_without_a_shared_word(kb: KnowledgeBase) -> None:
    for name in ("dev.jsonl", "holdout.jsonl", "real_tune.jsonl"):
        for line in (DATA / name).read_text(encoding="utf-8").splitlines():
            query = json.loads(line)
            if query["expect"]:
                continue
            best = kb.search_blocking(query["q"], 10).hits[0]
            assert best.entry.id != LINKS_ONLY or best.matched, (name, query["q"])
