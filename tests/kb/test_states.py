"""The three answer states (answered, may answer, not covered) and the certainty of a question asked in an
entry's own words, on the shipped FAQs and calibration, as a reader meets them."""

from __future__ import annotations

import asyncio

import pytest

from kb import asking
from kb.answer import compose_answer, reply_to
from kb.channel_points import DRAFT_PRECISION
from kb.evaluate import load_queries
from kb.events import Events
from kb.knowledge import KnowledgeBase
from kb.settings import Settings
from kb.verbatim import verbatim_key
from tests.support.paths import ROOT

RESUME_ENTRY = "slime-b0ab398d"
PARAPHRASE = "how do I resume training in slime?"  # slime's FAQ answers it; its confidence is under 0.8's point


@pytest.fixture(scope="module")
def kb(settings: Settings) -> KnowledgeBase:
    """The shipped calibration at the strictest default point a channel declares (GitHub's comment mode)."""
    return KnowledgeBase.open(settings.with_(answer_precision=0.9, channel_precision=""))


def test_a_question_is_its_entrys_own_whatever_its_case_punctuation_spaces_or_width() -> None:
    key = verbatim_key("How do I resume training?")
    assert key == verbatim_key("  how do i RESUME   training ") == verbatim_key("Ｈｏｗ do I resume training？")
    assert verbatim_key("如何续训？") == verbatim_key("如何 续训") != key
    assert verbatim_key("?!…") == ""


def test_every_entrys_own_question_and_alternate_asked_as_it_stands_is_answered_at_0_9(kb: KnowledgeBase) -> None:
    searcher = kb.searcher
    asked = [(v.question, e.id) for e in kb.entries for v in e.versions()]
    learned = zip(searcher.learned.questions, searcher.learned.owners)
    asked += [(q.question, searcher.entries[o].id) for q, o in learned if o >= 0]  # alternates, not the not-covered
    assert len(asked) > 100
    shared = {
        verbatim_key(q) for q, e in asked if {e2 for q2, e2 in asked if verbatim_key(q2) == verbatim_key(q)} != {e}
    }
    missed = []
    for question, entry in asked:
        if verbatim_key(question) in shared:  # two entries' own question: neither is certain
            continue
        result = kb.search_blocking(question)
        if not (result.answered and result.state == "answered" and result.hits[0].entry.id == entry):
            missed.append((question, entry, result.confidence))
    assert missed == []


def test_the_readmes_demo_question_is_answered_with_its_entry(kb: KnowledgeBase) -> None:
    for question in ("how do I resume training", "How do I resume training?", "如何续训"):
        result = kb.search_blocking(question)
        assert result.answered and result.confidence == 1.0, question
        assert result.hits[0].entry.id == RESUME_ENTRY, question


def test_between_the_floor_and_the_point_the_first_entry_may_answer(kb: KnowledgeBase) -> None:
    result = kb.search_blocking(PARAPHRASE)
    floor, point = kb.searcher.weights.floor, kb.searcher.weights.threshold(0.9)
    assert floor <= result.confidence < point
    assert not result.answered and result.state == "likely" and result.hits[0].entry.id == RESUME_ENTRY
    answer = compose_answer(result, "en")
    assert answer.state == "likely" and f"confidence {result.confidence:.2f}" in answer.text
    assert "No confident answer" not in answer.text
    # The entry's answer whole, quoted apart under the line that says it is not certain, then the others.
    entry = result.hits[0].entry
    opening, quoted = answer.text.split("\n\n", 1)
    assert opening.startswith("The first entry may answer this") and opening.endswith("but it is not certain:")
    assert f"> {entry.answer.strip().splitlines()[0]}" in quoted and "> Source: [" in quoted
    others = quoted.split("Other entries:\n")[1].splitlines()
    assert len(others) == len(answer.sources) - 1 > 0 and all(line.startswith("- [") for line in others)
    assert entry.question not in quoted.split("Other entries:")[1]
    reply = reply_to(answer.sources, answer.answered, "zh", state=answer.state, confidence=answer.confidence)
    assert not reply.answered and reply.best is not None and reply.best.id == RESUME_ENTRY
    assert "可能回答" in reply.notice and reply.entries_label == "chat_others"
    assert [h.entry.id for h in reply.entries] == [h.entry.id for h in answer.sources[1:]]


def test_questions_far_outside_the_field_are_never_answered_and_lie_below_the_floor(kb: KnowledgeBase) -> None:
    far = load_queries(ROOT / "tests" / "data" / "far_outside.jsonl")
    assert len(far) >= 20
    for query in far:
        result = kb.search_blocking(query.q, precision=0.5)
        assert (result.answered, result.state) == (False, "not_covered"), (query.q, result.confidence)
        assert "FAQ 中没有把握的答案" in compose_answer(result, "zh").text or not result.hits


def test_questions_near_the_field_but_outside_the_faqs_are_never_answered_at_a_channels_point(
    kb: KnowledgeBase,
) -> None:
    """Other frameworks' errors and other tools' settings (Kubernetes, PyTorch Lightning, TensorRT, conda, ...), in
    both languages: none is answered at the lowest point a channel takes by default (a draft's), though a few may
    lie above the floor and be offered as "may answer"."""
    near = load_queries(ROOT / "tests" / "data" / "near_outside.jsonl")
    assert len(near) >= 40 and {q.lang for q in near} == {"en", "zh"}
    answered = [q.q for q in near if kb.search_blocking(q.q, precision=DRAFT_PRECISION).state == "answered"]
    assert answered == []


def test_through_a_channel_a_question_between_the_floor_and_its_point_may_answer_and_a_lower_point_answers(
    kb: KnowledgeBase,
) -> None:
    events = Events()
    found = asyncio.run(asking.search(kb, events, PARAPHRASE, channel="web"))
    weights = kb.searcher.weights
    assert weights.floor <= found.result.confidence < weights.threshold(kb.precision_for("web"))
    assert found.result.state == "likely"
    assert found.result.at(kb.searcher.weights.threshold(0.5)).state == "answered"
