""" "See also" (kb/see_also.py, kb/thread_search.py) with the real bundled embedder and the shipped FAQs' index: the
resolved threads searched as the entries are, shown below a `likely` or `not_covered` result (never an answered
one), best first, one a draft, at most three; never the question's own thread (its link, or its text); never on a
short title alone; never an accepted entry's thread already among the entries; each text embedded once across loads
and read back from the embedding cache."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from kb.harvest import Draft, ThreadQuestion
from kb.hits import SearchResult
from kb.insights import InsightsStore, store_path
from kb.knowledge import KnowledgeBase
from kb.see_also import MAX_SHOWN, MIN_BODY, MIN_SCORE, Resolved, SeeAlso, stored_threads, threads_of
from kb.settings import Settings
from kb.thread_search import ThreadText

URL = "https://github.com/THUDM/slime/issues/{}"
NPU = "How to run slime on Huawei Ascend NPU cards?"


def draft(number: int, question: str, answer: str, asked: tuple[ThreadQuestion, ...] = (), url: str = "") -> Draft:
    return Draft("THUDM/slime", number, url or URL.format(number), "issue", question, answer, {}, alternates=asked)


NPU_ANSWER = "Use the mindspeed backend image and pass `--device npu`: slime trains on Ascend 910B NPU cards."
DRAFTS = [
    draft(
        1,
        "How do I run slime on Huawei Ascend NPUs?\n\nWe have 910B NPU cards and want to train with slime on them.",
        NPU_ANSWER,
        (
            ThreadQuestion(
                "does slime support ascend npu\n\nCan slime run on Huawei NPU cards at all?", URL.format(2), 2
            ),
        ),
    ),  # fmt: skip
    draft(
        3,
        "Where does slime write its wandb logs?\n\nI set `--use-wandb` and cannot find the run.",
        "Runs go to the project `--wandb-project` names.",
    ),  # fmt: skip
    draft(4, "Ascend NPU", "Fixed in #123."),  # a short title, and nothing else of the question
    draft(5, "Does slime run on Ascend NPU cards?\n\nOn Huawei hardware.", NPU_ANSWER, url="http://example.com/5"),
]


@pytest.fixture(scope="module")
def kb(settings: Settings) -> KnowledgeBase:
    return KnowledgeBase.open(settings)


def asked(kb: KnowledgeBase, question: str, state: str = "not_covered") -> SearchResult:
    """A real search of `question`, in the state a test needs."""
    result = kb.search_blocking(question)
    confidence = {"answered": 0.95, "likely": 0.6, "not_covered": 0.1}[state]
    made = replace(result, confidence=confidence, point=0.9, floor=0.5)
    assert made.state == state
    return made


def loaded(kb: KnowledgeBase, index: SeeAlso | None = None, drafts: list[Draft] = DRAFTS) -> SeeAlso:
    index = index if index is not None else SeeAlso()
    index.load(threads_of(drafts), kb.searcher.embedder)
    return index


def test_threads_of_drafts_waiting_and_accepted() -> None:
    elsewhere = draft(8, "Does slime run on NPUs?", "Yes.", url="https://evil.example/THUDM/slime/issues/8")
    grouped = threads_of([DRAFTS[0], DRAFTS[3], elsewhere], [(DRAFTS[1], "written-1a2b3c4d")])
    assert grouped == [
        [
            (
                Resolved("How do I run slime on Huawei Ascend NPUs?", URL.format(1), "THUDM/slime", 1),
                ThreadText(
                    "How do I run slime on Huawei Ascend NPUs?",
                    "We have 910B NPU cards and want to train with slime on them.",
                    NPU_ANSWER,
                ),  # fmt: skip
            ),
            (
                Resolved("does slime support ascend npu", URL.format(2), "THUDM/slime", 2),
                ThreadText("does slime support ascend npu", "Can slime run on Huawei NPU cards at all?", NPU_ANSWER),
            ),
        ],
        [],  # its link is not https
        [],  # nor on the tracker's host
        [
            (
                Resolved("Where does slime write its wandb logs?", URL.format(3), "THUDM/slime", 3, "written-1a2b3c4d"),
                ThreadText(
                    "Where does slime write its wandb logs?",
                    "I set `--use-wandb` and cannot find the run.",
                    "Runs go to the project `--wandb-project` names.",
                ),  # fmt: skip
            )
        ],
    ]


def test_a_question_the_faq_may_not_answer_is_shown_the_best_threads_one_a_draft(kb: KnowledgeBase) -> None:
    index = loaded(kb)
    for state in ("not_covered", "likely"):
        shown = index.near(asked(kb, NPU, state), kb.searcher)
        assert 0 < len(shown) <= MAX_SHOWN
        numbers = [t.number for t in shown]
        assert numbers[0] == 1 and 2 not in numbers  # the NPU draft first, as its own thread (the answer's)
        assert 5 not in numbers and 3 not in numbers  # not https; not about it
    assert index.near(asked(kb, NPU, "answered"), kb.searcher) == ()  # never below an answer
    assert index.near(asked(kb, "How do I set the learning rate schedule for GRPO?"), kb.searcher) == ()


def test_the_threads_are_ranked_by_their_words_and_meaning_as_entries_are(kb: KnowledgeBase) -> None:
    ranked = loaded(kb).ranked(asked(kb, "slime wandb logs: where is the run written?"), kb.searcher)
    assert ranked[0].thread.number == 3 and ranked[0].score >= MIN_SCORE and ranked[0].body >= MIN_BODY
    assert all(found.score <= ranked[0].score for found in ranked)
    no_adapter = kb.searcher.with_adapter(None)  # the query adapter is the searcher's: another one ranks otherwise
    if kb.searcher.adapter is not None:
        again = loaded(kb).ranked(asked(kb, "slime wandb logs: where is the run written?"), no_adapter)
        assert [f.score for f in again] != [f.score for f in ranked]


def test_a_short_title_alone_is_not_evidence_enough(kb: KnowledgeBase) -> None:
    result = asked(kb, "Ascend NPU for slime training")
    everything = loaded(kb, SeeAlso(min_score=-1e9, min_body=0.0)).near(result, kb.searcher)
    assert 4 in [t.number for t in everything]  # its title is the question's very words
    ranked = {f.thread.number: f for f in loaded(kb).ranked(result, kb.searcher)}
    assert ranked[4].body < MIN_BODY  # but nothing else of it holds them
    assert 4 not in [t.number for t in loaded(kb, SeeAlso(min_score=-1e9)).near(result, kb.searcher)]


def test_never_the_questions_own_thread(kb: KnowledgeBase) -> None:
    index = loaded(kb, SeeAlso(min_score=-1e9, min_body=0.0))
    wandb = "Where does slime write its wandb logs?"
    assert 3 not in [t.number for t in index.near(asked(kb, wandb), kb.searcher)]  # its own title
    reworded = "Where are the wandb logs slime writes, when I set --use-wandb?"
    assert 3 in [t.number for t in index.near(asked(kb, reworded), kb.searcher)]
    assert 3 not in [t.number for t in index.near(asked(kb, reworded), kb.searcher, URL.format(3))]  # its link
    whole = "Where does slime write its wandb logs?\nI set `--use-wandb` and cannot find the run."  # a whole issue
    assert 3 not in [t.number for t in index.near(asked(kb, whole), kb.searcher)]


def test_an_accepted_thread_is_shown_unless_its_entry_is_among_the_entries(kb: KnowledgeBase) -> None:
    result = asked(kb, NPU)
    entry = result.hits[0].entry.id
    index = SeeAlso()
    index.load(threads_of([], [(DRAFTS[0], entry)]), kb.searcher.embedder)
    assert index.near(result, kb.searcher) == ()  # its entry is listed above: not again as a thread
    listed_elsewhere = replace(result, hits=result.hits[1:])
    assert [t.entry_id for t in index.near(listed_elsewhere, kb.searcher)] == [entry]


def test_nothing_under_the_threshold_without_a_vector_or_of_another_model(kb: KnowledgeBase) -> None:
    result = asked(kb, NPU)
    assert loaded(kb).near(result, kb.searcher)
    assert loaded(kb, SeeAlso(min_score=1e9)).near(result, kb.searcher) == ()
    assert loaded(kb).near(replace(result, vector=None), kb.searcher) == ()
    assert loaded(kb).near(replace(result, vector=np.ones(7, np.float32)), kb.searcher) == ()
    assert SeeAlso().near(result, kb.searcher) == ()


def test_a_whole_issue_is_held_to_its_own_thresholds(kb: KnowledgeBase) -> None:
    """A whole issue's many words each weigh less: a search that read one is shown threads at the issue thresholds."""
    issue = replace(asked(kb, NPU), reads="issue")
    assert kb.search_blocking(NPU, reads="issue").reads == "issue" and asked(kb, NPU).reads == "question"
    strict_questions = loaded(kb, SeeAlso(min_score=1e9))
    assert strict_questions.near(issue, kb.searcher) and not strict_questions.near(asked(kb, NPU), kb.searcher)
    assert loaded(kb, SeeAlso(issue_min_score=1e9)).near(issue, kb.searcher) == ()


def test_each_text_is_embedded_once_and_a_decided_draft_forgotten(kb: KnowledgeBase) -> None:
    embedder = kb.searcher.embedder
    index = loaded(kb)
    runs = sum(embedder.runs.snapshot()[0])
    assert index.load(threads_of(DRAFTS[1:]), embedder) == len(DRAFTS) - 2  # the NPU draft decided; 5 is not https
    assert sum(embedder.runs.snapshot()[0]) == runs  # nothing embedded again
    assert all(t.number not in (1, 2) for t in index.near(asked(kb, NPU), kb.searcher))


def test_a_new_process_reads_the_vectors_from_the_embedding_cache(kb: KnowledgeBase, tmp_path: Path) -> None:
    embedder = kb.searcher.embedder
    cache = tmp_path / "cache" / "embeddings.sqlite"
    first = SeeAlso()
    first.load(threads_of(DRAFTS), embedder, cache)  # embeds them, and keeps them
    runs = sum(embedder.runs.snapshot()[0])
    second = SeeAlso()  # as a server starting, or another replica
    assert second.load(threads_of(DRAFTS), embedder, cache) == len(DRAFTS)
    assert sum(embedder.runs.snapshot()[0]) == runs  # nothing embedded
    result = asked(kb, NPU)
    assert second.near(result, kb.searcher) == first.near(result, kb.searcher) and second.near(result, kb.searcher)
    broken = tmp_path / "not-a-database.sqlite"
    broken.write_bytes(b"x" * 100)
    assert SeeAlso().load(threads_of(DRAFTS[:1]), embedder, broken) == 2  # a cache it cannot read is no cache


def test_the_threads_held_are_the_drafts_waiting_and_those_accepted(tmp_path: Path) -> None:
    store = InsightsStore(store_path(tmp_path))
    try:
        store.drafts.keep([DRAFTS[0], DRAFTS[1], DRAFTS[2]])
        assert store.drafts.decide("THUDM/slime", 3, "accepted", "written-1a2b3c4d")
        assert store.drafts.decide("THUDM/slime", 4, "dismissed")
        held = {t.number: t.entry_id for group in stored_threads(store) for t, _ in group}
    finally:
        store.close()
    assert held == {1: "", 2: "", 3: "written-1a2b3c4d"}  # the dismissed one is gone; the accepted one is its entry's
