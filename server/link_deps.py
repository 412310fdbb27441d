"""The links' route dependencies, shared by the admin JSON API (server/routes/taught_links.py) and the /insights
page's forms (server/routes/insights.py): the links' own rate limit, the insights where links are kept, and a
change served at once.
"""

from __future__ import annotations

import logging
from typing import Annotated

from fastapi import Depends, Request

from kb.insights.service import Insights

from .deps import InsightsDep
from .ratelimit import ClientLimit
from .reload import Reloader

__all__ = ["LINK_LIMIT", "LinkLimitDep", "LinksDep", "limit_links", "links_on", "served_at_once"]

log = logging.getLogger("kb.server")

LINK_LIMIT = ("link requests", 60, 60.0)  # what, how many, in how many seconds (as `VOTE_LIMIT`)


async def limit_links(request: Request) -> None:
    """At most LINK_LIMIT link requests per client (429 beyond), counted before the token is compared."""
    state = request.app.state
    limit = getattr(state, "link_limit", None)
    if limit is None:
        limit = state.link_limit = ClientLimit(*LINK_LIMIT)
    limit.check(request.scope)


async def links_on(insights: InsightsDep) -> Insights:
    """The insights, where links are kept; InsightsOff (503 with the reason) when the server has no database."""
    insights.check_links()
    return insights


LinkLimitDep = Annotated[None, Depends(limit_links)]
LinksDep = Annotated[Insights, Depends(links_on)]


async def served_at_once(reloader: Reloader) -> None:
    """Serve the links as they now are from this replica (the others see them at their next check)."""
    try:
        await reloader.relearn()
    except Exception as exc:  # kept in the database: the watch teaches the build them at its next check
        log.warning("the links changed but could not be read back at once (%s); the next reload check tries again", exc)
