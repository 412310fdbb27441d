"""Events: what the library tells its listeners each time someone asks or votes, and the list of listeners.

`kb.asking` publishes a `Searched` for a search, a `Chatted` for a chat turn; a vote is a
`Voted`. A listener is any callable taking an event (the insights recorder,
`kb.insights.recorder.Recorder.hear`, is one). Publishing is a plain call per listener on
the caller's thread: a listener must return at once (the recorder queues and returns), and
one that raises is logged and does not cost the reader their answer.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Sequence

from .hits import Hit, SearchResult

__all__ = ["Searched", "Chatted", "Voted", "Event", "Listener", "Events"]

log = logging.getLogger("kb.events")


@dataclass(frozen=True, slots=True)
class Searched:
    """A search made for someone; `started` is its `time.perf_counter()`."""

    result: SearchResult
    channel: str  # where the question came from: web, widget, api, slack, feishu, dingtalk, ...
    started: float
    live: str | None = None  # the search box of a search sent as the reader types
    # (workspace, conversation) of a team chat: a Slack team and channel, a Feishu tenant and
    # chat, a DingTalk organisation and conversation
    conversation: tuple[str, str] | None = None


@dataclass(frozen=True, slots=True)
class Chatted:
    """A chat turn answered: the message as asked, the conversation before it, what retrieval found."""

    message: str
    history: Sequence[dict[str, Any]]
    answered: bool
    sources: Sequence[Hit]
    channel: str
    started: float
    subject: str = ""  # the question of the entry the conversation is about
    conversation: tuple[str, str] | None = None  # a team chat's (workspace, conversation), as `Searched` has it


@dataclass(frozen=True, slots=True)
class Voted:
    """A vote on an answer. `voter` names who voted ("session:<id>", "slack:<team>:<user>", "feishu:<tenant>:<user>");
    a listener that keeps it keeps only a keyed hash."""

    entry_id: str
    helpful: bool
    question: str
    voter: str
    channel: str
    reason: str | None = None
    comment: str | None = None


Event = Searched | Chatted | Voted
Listener = Callable[[Event], None]


class Events:
    """The listeners, called in order with each event published."""

    def __init__(self, listeners: Iterable[Listener] = ()):
        self.listeners: list[Listener] = list(listeners)

    def publish(self, event: Event) -> None:
        for listener in self.listeners:
            try:
                listener(event)
            except Exception:  # a listener's bug must not cost the reader their answer
                log.exception("a listener failed on %s", type(event).__name__)
