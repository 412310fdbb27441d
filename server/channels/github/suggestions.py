"""Suggest mode's answers, kept in the library's pending answers: an issue or Discussion as a thread of `github`.

The library keeps a channel's draft answers waiting for a maintainer (`kb.insights.records.PendingAnswer`), one a
thread; this channel names a thread `owner/name#number` and keeps in the answer's `platform` column what it needs to
post there later: the repository, the number, the kind (issue or Discussion), a Discussion's node id and the App
installation the issue came through. `KeptSuggestions` reads and writes them through the insights service.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from kb.insights.records import PendingAnswer

if TYPE_CHECKING:
    from kb.insights.service import Insights

__all__ = ["CHANNEL", "SuggestedAnswer", "KeptSuggestions", "thread_of", "to_pending", "from_pending"]

CHANNEL = "github"


@dataclass(frozen=True)
class SuggestedAnswer:
    """The bot's answer to an issue or Discussion in `suggest` mode, kept for a maintainer to post or dismiss."""

    repo: str  # owner/name
    number: int
    kind: str  # "issue" or "discussion"
    title: str
    url: str
    entry_id: str  # the entry it answers with
    confidence: float
    comment: str  # the comment as the bot would post it
    node_id: str = ""  # a Discussion's, to comment on it
    installation: int = 0  # the GitHub App installation the issue came through (0: none)
    suggested_at: float = field(default_factory=time.time)


def thread_of(repo: str, number: int) -> str:
    """The pending answer's thread for `repo`#`number`."""
    return f"{repo}#{number}"


def to_pending(answer: SuggestedAnswer) -> PendingAnswer:
    """The suggestion as the library keeps it, GitHub's ids in `platform`."""
    platform = {
        "repo": answer.repo,
        "number": answer.number,
        "kind": answer.kind,
        "node_id": answer.node_id,
        "installation": answer.installation,
    }
    return PendingAnswer(
        CHANNEL,
        thread_of(answer.repo, answer.number),
        answer.title,
        answer.comment,
        answer.entry_id,
        answer.confidence,
        answer.url,
        platform,
        answer.suggested_at,
    )


def from_pending(pending: PendingAnswer) -> SuggestedAnswer:
    """A pending answer of this channel as the suggestion it keeps (its ids read back from `platform`)."""
    ids = pending.platform
    return SuggestedAnswer(
        str(ids["repo"]),
        int(ids["number"]),
        str(ids["kind"]),
        pending.question,
        pending.url,
        pending.entry_id,
        pending.confidence,
        pending.answer,
        str(ids.get("node_id", "")),
        int(ids.get("installation", 0)),
        pending.drafted_at,
    )


class KeptSuggestions:
    """Suggest mode's answers in the insights database (`kb.insights.service.Insights`'s pending answers)."""

    def __init__(self, insights: Insights):
        self.insights = insights

    async def suggest(self, answer: SuggestedAnswer) -> None:
        """Keep `answer` for its issue, over the one suggested before (the issue edited)."""
        await self.insights.run(self.insights.pending.keep, to_pending(answer))

    async def suggestions(self) -> list[SuggestedAnswer]:
        """The suggested answers waiting for a maintainer, newest first."""
        return [from_pending(p) for p in await self.insights.run(self.insights.pending.waiting, CHANNEL)]

    async def drop_suggestion(self, repo: str, number: int) -> bool:
        """Forget the answer suggested for `repo`#`number` (the issue closed, or no longer answered)."""
        return await self.insights.run(self.insights.pending.drop, CHANNEL, thread_of(repo, number))

    async def claim(self, repo: str, number: int) -> PendingAnswer | None:
        """The answer suggested for `repo`#`number`, for this caller alone to post or dismiss (None: gone already);
        `from_pending` reads it, `settle` or `release` ends the claim."""
        return await self.insights.run(self.insights.pending.claim, CHANNEL, thread_of(repo, number))

    async def settle(self, claimed: PendingAnswer) -> None:
        """A claimed answer posted or dismissed: it leaves the list."""
        await self.insights.run(self.insights.pending.settle, claimed)

    async def release(self, claimed: PendingAnswer) -> None:
        """A claimed answer that could not be posted: back on the list, unless its issue has a newer one."""
        await self.insights.run(self.insights.pending.release, claimed)
