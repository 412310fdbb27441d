"""Asking: the library's front door: a search or a chat turn, finished for the reader, and an event for each.

Every channel (the pages, the JSON API, the widget, the chat platforms, the agents) asks through `search` and
`chat` (or `chat_stream`): they return the result in the reader's language and publish what was
asked to the listeners of `kb.events.Events` (the insights recorder among them), timed
from the call. A vote, from whichever channel, goes through `vote`: written before the channel
acknowledges it. `browse` lists the entries of a filter with no question; it is not asked,
so nothing is published.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Iterator, Sequence

from .answer import elsewhere_note
from .cancel import Cancel
from .chat import Chat, ChatReply, recent_turns
from .errors import InsightsOff
from .events import Chatted, Events, Searched, Voted
from .hits import Hit, SearchResult
from .knowledge import KnowledgeBase
from .see_also import Resolved

if TYPE_CHECKING:
    from .insights.service import Insights

__all__ = ["Found", "search", "chat", "chat_stream", "browse", "vote", "FEEDBACK_OFF"]

FEEDBACK_OFF = "feedback is off: votes cannot be recorded on this server (its log says why)"


@dataclass(frozen=True)
class Found:
    """A search finished for a reader: every hit in their language, how many to show, the note."""

    result: SearchResult  # as searched: entries in the question's language
    hl: str  # the reader's language
    hits: tuple[Hit, ...]  # every hit, each entry in `hl` where it has that version
    shown: int  # how many of `hits`, from the first, are worth showing
    note: str  # the question names a framework whose FAQ has no answer ("" for none)
    # Resolved tracker threads that may help a question the FAQ does not cover (kb.see_also): never its answer.
    see_also: tuple[Resolved, ...] = ()

    @property
    def worth_showing(self) -> tuple[Hit, ...]:
        return self.hits[: self.shown]


async def search(
    kb: KnowledgeBase,
    events: Events,
    question: str,
    *,
    channel: str,
    k: int | None = None,
    tags: Sequence[str] = (),
    source: str | None = None,
    lang: str | None = None,
    hl: str | None = None,
    judged: bool = True,
    live: str | None = None,
    conversation: tuple[str, str] | None = None,
    asked: bool = True,
    turn: bool = False,
    reads: str = "question",
    own_url: str = "",
) -> Found:
    """Search (`KnowledgeBase.search`) and publish a `Searched`, unless `asked` is False (a
    monitor's HEAD of a page is not someone asking). `hl` is the reader's language (default:
    the question's); `conversation` the team chat's (workspace, conversation) it was asked in. The
    result answers at the channel's operating point (KB_CHANNEL_PRECISION, KB_ANSWER_PRECISION).
    With `turn`, it is a chat turn of its own (a message to a chat bot, answered from the search):
    published as a `Chatted`, so it counts with the chats. `reads` is what the channel hands over (`kb.search.READS`:
    a question, or a whole issue): its confidence is the one fitted on that kind of input. `own_url`: the link of the
    tracker thread the question is, when the channel knows it (never offered it as "see also")."""
    started = time.perf_counter()
    result = await kb.search(
        question, k, tags, source, lang, judged=judged, precision=kb.precision_for(channel), reads=reads
    )
    if asked and turn:
        hits = result.hits
        events.publish(Chatted(question, (), result.answered, hits, channel, started, conversation=conversation))
    elif asked:
        events.publish(Searched(result, channel, started, live, conversation))
    hl = hl or result.lang
    shown = len(result.worth_showing())
    return Found(
        result, hl, result.in_language(hl).hits, shown, elsewhere_note(result, hl), kb.resolved_threads(result, own_url)
    )


async def chat(
    bot: Chat,
    events: Events,
    message: str,
    history: Sequence[dict[str, Any]],
    *,
    channel: str,
    href: Callable[[Hit], str],
    hl: str | None = None,
    about: str | None = None,
) -> ChatReply:
    """A chat turn's whole answer (`Chat.reply`), about the entry with id `about` if given; publishes a `Chatted`.
    The conversation is read as every channel's is: its newest turns (`kb.chat.recent_turns`)."""
    started = time.perf_counter()
    history = recent_turns(history)
    subject = bot.subject(about, message)
    reply = await bot.reply(message, history, hl, href, subject, bot.kb.precision_for(channel))
    events.publish(Chatted(message, history, reply.answered, reply.sources, channel, started, subject))
    return reply


async def chat_stream(
    bot: Chat,
    events: Events,
    message: str,
    history: Sequence[dict[str, Any]],
    *,
    channel: str,
    href: Callable[[Hit], str],
    hl: str | None = None,
    about: str | None = None,
    cancelled: Cancel | None = None,
) -> tuple[tuple[Hit, ...], bool, Iterator[tuple[str, Any]]]:
    """A chat turn streamed (`Chat.stream`): retrieved now, and published as a `Chatted` once retrieved;
    setting `cancelled` closes the LLM's stream. The conversation is read as `chat` reads it."""
    started = time.perf_counter()
    history = recent_turns(history)
    subject = bot.subject(about, message)
    precision = bot.kb.precision_for(channel)
    sources, answered, pieces = await bot.stream(message, history, hl, href, subject, cancelled, precision)
    events.publish(Chatted(message, history, answered, sources, channel, started, subject))
    return sources, answered, pieces


def browse(kb: KnowledgeBase, source: str | None, tag: str | None, hl: str) -> list[Hit]:
    """Every entry of a source and/or tag, in document order, each in `hl` where it has that
    version (a filter with no question); a QueryError names an unknown tag or source."""
    tags = (tag,) if tag else ()
    kb.searcher.check_filters(tags, source or None)
    subset = kb.searcher.filters.subset(tags, source or None)
    chosen = kb.entries if subset is None else [kb.entries[int(i)] for i in subset.ids()]
    return [Hit(entry=e.localized(hl), score=0.0, rank=i) for i, e in enumerate(chosen, 1)]


async def vote(insights: "Insights", voted: Voted) -> None:
    """Record a vote, from any channel, written to the insights database before this returns: `InsightsOff` when
    there is none to keep votes, `InsightsUnavailable` when it refuses this one (the channel says so rather than
    thanking the voter). The limits on how many votes a voter gives are the channel's to check first."""
    if not insights.feedback_on:
        raise InsightsOff(FEEDBACK_OFF)  # why there is no database was logged at start-up
    await insights.vote(voted)
