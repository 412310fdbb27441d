"""A chat bot's vote: taken as every channel's is (`server.votes.take_vote`, its voter the platform's user), and
what to tell the voter, in their language: thanks, or why it was not taken."""

from __future__ import annotations

import logging

from fastapi import HTTPException, Request

from kb.errors import InsightsOff, InsightsUnavailable
from kb.events import Voted
from kb.insights.service import Insights

from ..rendering.strings import Translator
from ..votes import take_vote

log = logging.getLogger("kb.server")

__all__ = ["bot_vote"]


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
