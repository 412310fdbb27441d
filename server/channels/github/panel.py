"""GitHub's panel on `/insights`: the answers suggest mode keeps for a maintainer to post or dismiss.

`Channel.panel` names this module; the insights page asks it for its panel's context and includes
its template, whether the bot is on (the panel says it has nothing waiting) or off with answers
still kept from before.
"""

from __future__ import annotations

from typing import Any

from fastapi import Request

from kb.insights.service import Insights

from .suggestions import KeptSuggestions

__all__ = ["TEMPLATE", "panel"]

TEMPLATE = "_insights_suggested.html"


async def panel(request: Request, insights: Insights) -> dict[str, Any] | None:
    """The panel's context: the suggested answers, those posted lately (server/channels/github/suggested.py);
    None when the bot is off and nothing waits."""
    suggested = await KeptSuggestions(insights).suggestions()
    if not (suggested or request.app.state.settings.github_webhook_secret):
        return None
    posted = list(getattr(request.app.state, "github_posted", ()))
    return {"template": TEMPLATE, "suggested": suggested, "posted": posted}
