"""The library's front door (`kb.asking`) and its event hook (`kb.events`): what each search, chat turn
and vote publishes, and the insights object without a database."""

from __future__ import annotations

import asyncio
import logging

import pytest

from kb import asking
from kb.chat import Chat
from kb.errors import InsightsOff, QueryError
from kb.events import Chatted, Event, Events, Searched, Voted
from kb.insights import Recorder
from kb.insights.service import Insights
from kb.knowledge import KnowledgeBase
from kb.settings import Settings


@pytest.fixture(scope="module")
def kb(settings: Settings) -> KnowledgeBase:
    return KnowledgeBase.open(settings)


def heard() -> tuple[Events, list[Event]]:
    events: list[Event] = []
    return Events([events.append]), events


def test_a_search_publishes_what_was_searched_and_returns_it_finished_for_the_reader(kb: KnowledgeBase) -> None:
    events, published = heard()
    found = asyncio.run(asking.search(kb, events, "如何续训", channel="web", hl="en", live="box-1"))
    assert [type(e) for e in published] == [Searched]
    event = published[0]
    assert isinstance(event, Searched)
    assert (event.result, event.channel, event.live, event.conversation) == (found.result, "web", "box-1", None)
    assert found.hl == "en" and found.result.lang == "zh"
    assert found.hits == found.result.in_language("en").hits
    assert found.worth_showing == found.hits[: len(found.result.worth_showing())] and found.shown >= 1


def test_a_search_not_asked_or_refused_publishes_nothing(kb: KnowledgeBase) -> None:
    events, published = heard()
    asyncio.run(asking.search(kb, events, "OOM", channel="web", asked=False))
    with pytest.raises(QueryError):
        asyncio.run(asking.search(kb, events, "   ", channel="api"))
    assert published == []


def test_a_chat_turn_publishes_its_question_with_the_subject_of_its_entry(kb: KnowledgeBase) -> None:
    events, published = heard()
    entry = kb.entries[0]
    reply = asyncio.run(
        asking.chat(Chat(kb), events, "how about on 2 nodes?", [], channel="api", href=str, about=entry.id)
    )
    assert published == [
        Chatted(
            "how about on 2 nodes?",
            [],
            reply.answered,
            reply.sources,
            "api",
            published[0].started,
            entry.localized("en").question,
        )
    ]  # type: ignore[union-attr]
    with pytest.raises(QueryError, match="about: no entry with id 'nope'"):
        asyncio.run(asking.chat(Chat(kb), events, "hi", [], channel="api", href=str, about="nope"))
    assert len(published) == 1


def test_browsing_a_filter_lists_its_entries_in_document_order(kb: KnowledgeBase) -> None:
    source = kb.entries[0].source
    hits = asking.browse(kb, source, None, "en")
    assert [h.entry.id for h in hits] == [e.id for e in kb.entries if e.source == source]
    assert [h.rank for h in hits] == list(range(1, len(hits) + 1))
    with pytest.raises(QueryError, match="unknown tag 'nope'"):
        asking.browse(kb, None, "nope", "en")


def test_a_listener_that_fails_is_logged_and_the_others_still_hear(caplog: pytest.LogCaptureFixture) -> None:
    def broken(event: Event) -> None:
        raise RuntimeError("boom")

    published: list[Event] = []
    vote = Voted("e1", True, "q", "session:s", "web")
    with caplog.at_level(logging.ERROR, logger="kb.events"):
        Events([broken, published.append]).publish(vote)
    assert published == [vote]
    assert "a listener failed on Voted" in caplog.text


def test_without_a_database_nothing_is_recorded_and_the_insights_say_why(kb: KnowledgeBase, settings: Settings) -> None:
    recorder = Recorder(None, settings, problem="the disk is read-only")
    recorder.hear(Voted("e1", True, "q", "session:s", "web"))  # no store: nothing to do, nothing raised
    insights = Insights(recorder)
    assert not insights.feedback_on
    with pytest.raises(InsightsOff, match="^nothing is recorded: the disk is read-only$"):
        asyncio.run(insights.report(kb, "7d"))
    with pytest.raises(InsightsOff, match=r"^links are off: .* \(the disk is read-only\)$"):
        asyncio.run(insights.run(insights.links.all))
    with pytest.raises(QueryError):  # the window is checked first
        asyncio.run(insights.report(kb, "forever"))
