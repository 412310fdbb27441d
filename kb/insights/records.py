"""The insights records: questions and votes as the store keeps them, and what its reads return.

What is kept: the question text (its first `MAX_TEXT` characters), its language, where it
was asked (channel), the best entry and its score, whether it was answered, how long it
took. Votes keep the entry, the question, helpful or not, an optional reason and comment,
and a keyed hash of the voter's session (or Slack user): enough to allow one vote per entry,
not enough to name anyone.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Literal, Mapping, get_args

__all__ = [
    "Question",
    "Vote",
    "QuestionCount",
    "Comment",
    "EntryVotes",
    "EntryHits",
    "DailyCount",
    "Totals",
    "PendingAnswer",
    "PENDING_STATES",
    "Channel",
    "Reason",
    "KINDS",
    "REASONS",
    "LANGS",
    "MAX_TEXT",
]

# The name of the place a question was asked or a vote given (`web`, `slack`, `mcp`, ...): the app's
# channels name themselves (server/channels/); the library keeps whichever name it is given.
Channel = str
Reason = Literal["wrong", "outdated", "incomplete", "unclear", "off_topic"]  # why an answer did not help
KINDS = ("search", "chat")
REASONS: tuple[str, ...] = get_args(Reason)
LANGS = ("zh", "en")  # the languages questions are counted by
# Characters kept of a question or comment: a pasted log or a long chat history is stored as
# its start, which is what identifies it (and far more than the embedder reads of it).
MAX_TEXT = 1000
PENDING_STATES = ("waiting", "claimed")  # a pending answer on the list, or taken by a Post or Dismiss


@dataclass(frozen=True)
class Question:
    """One search or chat question as recorded."""

    text: str
    lang: str
    channel: str  # the channel's name (server/channels/)
    answered: bool
    top_entry: str | None
    top_score: float | None
    latency_ms: float
    kind: str = "search"  # one of KINDS
    asked_at: float = field(default_factory=time.time)
    chat_workspace: str | None = None  # a team chat's workspace: Slack team, Feishu tenant, DingTalk organisation
    chat_conversation: str | None = None  # and its conversation: Slack channel, Feishu chat, DingTalk conversation
    margin: float | None = None  # the best entry's score less the second's
    previous: str | None = None  # the question asked just before, in the same conversation or search box


@dataclass(frozen=True)
class Vote:
    """Helpful or not, for one entry given as the answer to one question."""

    entry_id: str
    helpful: bool
    question: str  # empty when the channel does not say (Slack's buttons)
    voter: str  # `InsightsStore.pseudonym(...)` of a session id, never the id itself
    channel: str
    reason: str | None = None  # one of REASONS
    comment: str | None = None
    voted_at: float = field(default_factory=time.time)


@dataclass(frozen=True)
class QuestionCount:
    """A question text (case and spacing aside) and how often it was asked."""

    text: str
    lang: str
    count: int
    first_asked: float
    last_asked: float
    channels: tuple[str, ...]


@dataclass(frozen=True)
class Comment:
    question: str
    reason: str | None
    comment: str | None
    voted_at: float
    channel: str


@dataclass(frozen=True)
class EntryVotes:
    """An entry someone found unhelpful: its votes, the reasons given and the comments."""

    entry_id: str
    unhelpful: int
    helpful: int
    reasons: tuple[tuple[str, int], ...]
    comments: tuple[Comment, ...]


@dataclass(frozen=True)
class EntryHits:
    """An entry given as the answer: how often, and how it was voted."""

    entry_id: str
    hits: int
    helpful: int
    unhelpful: int


@dataclass(frozen=True)
class DailyCount:
    day: str  # YYYY-MM-DD, UTC
    channel: str
    lang: str
    count: int


@dataclass(frozen=True)
class Totals:
    questions: int
    answered: int
    helpful: int
    unhelpful: int


@dataclass(frozen=True)
class PendingAnswer:
    """A channel's draft answer to a thread, kept for a maintainer to post or dismiss (one a thread).

    `thread` is the channel's name for where it was asked, unique within the channel; `platform` holds the
    channel's own ids (what it needs to post there), kept as JSON and handed back as given: the library never
    reads it. `state` is one of PENDING_STATES: `waiting` on the list, `claimed` by the one Post or Dismiss
    acting on it."""

    channel: str
    thread: str
    question: str
    answer: str  # the answer as the channel would post it
    entry_id: str  # the entry it answers with
    confidence: float
    url: str = ""  # the thread's address
    platform: Mapping[str, Any] = field(default_factory=dict)
    drafted_at: float = field(default_factory=time.time)
    state: str = "waiting"
    claimed_at: float | None = None
