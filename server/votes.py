"""Votes from every channel: counted against the same limits, then written (`kb.asking.vote`) before the channel
acknowledges them.

A page's or the widget's vote is limited per client address: every vote request, before anything
in it is looked at (`VOTE_LIMIT`, the route's dependency), and those on one answer
(`ANSWER_VOTE_LIMIT`, here); a chat platform's comes from the platform's servers for everyone, so
the same two limits count per voter (the platform's user) instead, both here.
"""

from __future__ import annotations

import logging

from fastapi import HTTPException, Request

from kb import asking
from kb.errors import InsightsOff, InsightsUnavailable
from kb.events import Voted
from kb.insights.service import Insights

from .ratelimit import ClientLimit
from .rendering.strings import Translator

log = logging.getLogger("kb.server")

__all__ = ["take_vote", "bot_vote"]


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


async def bot_vote(request: Request, insights: Insights, voted: Voted, lang: str) -> tuple[bool, str]:
    """A chat platform's vote (its voter the platform's user) taken as every channel's is: what to tell the voter,
    in their language: (True, thanks) when it is written, else (False, why it is not)."""
    t = Translator(lang)
    try:
        await take_vote(request, insights, voted, voter=voted.voter)
    except HTTPException as exc:  # over a limit
        log.info("%s vote on %s not taken: %s", voted.channel, voted.entry_id, exc.detail)
        return False, t("bot_vote_limit", retry=(exc.headers or {}).get("Retry-After", "60"))
    except (InsightsOff, InsightsUnavailable) as exc:
        log.warning("%s vote on %s not recorded: %s", voted.channel, voted.entry_id, exc)
        return False, t("bot_vote_failed")
    log.info(
        "%s feedback: %s on entry %s",
        voted.channel.capitalize(),
        "helpful" if voted.helpful else "not helpful",
        voted.entry_id,
    )
    return True, t("bot_thanks")
