"""A source's scope: ROLL's Ascend NPU entries answer the questions that name an NPU, and only those;
every other question is searched as if they were not there."""

from __future__ import annotations

import numpy as np
import pytest

from kb.entries import Entry
from kb.knowledge import KnowledgeBase
from kb.scope import Scopes, names
from kb.settings import Settings

NPU = ("NPU", "Ascend", "昇腾", "CANN", "HCCL")


@pytest.mark.parametrize(
    "text",
    [
        "NPU out of memory",
        "two npus",
        "import torch_npu fails",
        "npu-smi info",
        "昇腾910B 上报错",
        "HCCL_CONNECT_TIMEOUT",
    ],
)
def test_a_word_is_named_whole_in_any_case_and_plural(text):
    assert any(names(text, word) for word in NPU)


@pytest.mark.parametrize("text", ["cannot load the model", "sort ascending", "GPU out of memory", "inputs", "CANNED"])
def test_a_word_inside_another_is_not_named(text):
    assert not any(names(text, word) for word in NPU)


def entry(number: int, scope: tuple[str, ...] = ()) -> Entry:
    return Entry(str(number), f"q{number}", "a", "s", "S", "", "", "", "", "", "en", scope=scope)


def test_entries_of_an_unnamed_scope_are_left_out_except_one_asked_in_its_own_words():
    scopes = Scopes([entry(0), entry(1, NPU), entry(2), entry(3, NPU)])
    ids = np.arange(4)
    assert scopes.kept(ids, "vLLM is slow").tolist() == [0, 2]
    assert scopes.kept(ids, "vLLM is slow on NPU").tolist() == [0, 1, 2, 3]
    assert scopes.kept(ids, "vLLM is slow", keep=3).tolist() == [0, 2, 3]
    # a filter that chose only the scope's entries keeps them: they are what the asker picked
    assert scopes.kept(np.array([1, 3]), "vLLM is slow").tolist() == [1, 3]
    assert scopes.beside(0, ids).tolist() == [0, 2]
    assert scopes.beside(1, ids).tolist() == [0, 1, 2, 3]
    assert not Scopes([entry(0)]) and Scopes([entry(0)]).kept(ids, "x") is ids


@pytest.fixture(scope="module")
def kb(settings: Settings) -> KnowledgeBase:
    return KnowledgeBase.open(settings)


def sources(kb: KnowledgeBase, query: str) -> set[str]:
    return {hit.entry.source for hit in kb.search_blocking(query, k=10).hits}


@pytest.mark.parametrize(
    "query",
    [
        "vLLM inference is slow",
        "vLLM 推理速度慢",
        "out of memory during training",
        "Ray worker node exits right after it starts",
        "too many open files, how do I raise the ulimit",
        "ImportError when importing triton",
    ],
)
def test_questions_that_name_no_npu_never_meet_the_npu_entries(kb, query):
    assert "roll-npu" not in sources(kb, query)


@pytest.mark.parametrize(
    ("query", "question"),
    [
        ("vLLM inference is slow on NPU", "NPU 上 vLLM 推理速度慢"),
        ("NPU 显存不足", "NPU 显存不足"),
        ("npu-smi shows no device inside the docker container", "容器内 NPU 不可见"),
        ("容器里看不到昇腾卡", "容器内 NPU 不可见"),
    ],
)
def test_questions_that_name_an_npu_find_its_entries(kb, query, question):
    assert kb.search_blocking(query).hits[0].entry.question == question


def test_the_npu_source_filter_and_its_own_questions_reach_its_entries(kb):
    assert all(hit.entry.source == "roll-npu" for hit in kb.search_blocking("vLLM is slow", source="roll-npu").hits)
    tagged = kb.search_blocking("memory is not enough", tags=["npu"]).hits
    assert tagged and tagged[0].entry.question == "NPU 显存不足"
    own = kb.search_blocking("ulimit Too Low")  # an entry's own question names none of the words
    assert own.hits[0].entry.question == "ulimit 不足" and own.confidence == 1.0


def test_an_entry_outside_the_scope_is_not_related_to_the_npu_entries(kb):
    gpu = next(e for e in kb.entries if e.source == "roll" and "vllm" in e.text.lower())
    assert all(hit.entry.source != "roll-npu" for hit in kb.related(gpu.id, k=5))
    npu = next(e for e in kb.entries if e.source == "roll-npu")
    assert {hit.entry.source for hit in kb.related(npu.id, k=5)} & {"roll-npu"}
