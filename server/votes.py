"""Votes from every channel: counted against the same limits, then written (`kb.asking.vote`) before the channel
acknowledges them.

A page's or the widget's vote is limited per client address: every vote request, before anything
in it is looked at (`VOTE_LIMIT`, the route's dependency), and those on one answer
(`ANSWER_VOTE_LIMIT`, here); a chat platform's comes from the platform's servers for everyone, so
the same two limits count per voter (the platform's user) instead, both here. A chat bot's vote
goes through `server.bots.votes.bot_vote`, which says to the voter what became of it.
"""

from __future__ import annotations

from fastapi import HTTPException, Request

from kb import asking
from kb.events import Voted
from kb.insights.service import Insights

from .ratelimit import ClientLimit

__all__ = ["take_vote"]


async def take_vote(request: Request, insights: Insights, voted: Voted, voter: str = "") -> None:
    """Count `voted` against the limits (by `voter` when a platform sends it, else by the client's address) and write
    it. A 429 when over a limit, `InsightsOff` or `InsightsUnavailable` when it cannot be kept: nothing is written."""
    state = request.app.state
    vote_limit: ClientLimit = state.vote_limit
    answer_limit: ClientLimit = state.answer_vote_limit
    if not voter:  # VOTE_LIMIT was counted by the route, for every request
        answer_limit.check(request.scope, voted.entry_id)
    else:
        for limit, key in ((vote_limit, voter), (answer_limit, f"{voter} {voted.entry_id}")):
            retry = limit.wait(key)
            if retry:
                raise HTTPException(
                    429,
                    f"too many {limit.what} from this voter: the limit is {limit.limit}; try again in {retry} s",
                    {"Retry-After": str(retry)},
                )
    await asking.vote(insights, voted)
