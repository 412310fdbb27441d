"""GitHub's panel on `/insights`: the answers suggest mode keeps for a maintainer to post or dismiss.

The channel's plugin (`GitHubPlugin.panel`) hands the insights page this panel's context, drawn with
`templates/_insights_suggested.html` beside it, whether the bot is on (the panel says it has nothing waiting) or off with answers
still kept from before.
"""

from __future__ import annotations

from typing import Any

from fastapi import Request

from kb.insights.service import Insights

from .suggestions import KeptSuggestions

__all__ = ["panel", "SAID"]

# What a Post or Dismiss from the page came to, said beside its row (strings `suggested_said_<code>`).
SAID = ("posted", "dismissed", "no_token", "no_base_url", "refused", "gone")


async def panel(request: Request, insights: Insights) -> dict[str, Any] | None:
    """The panel's context: the suggested answers, those posted lately (server/channels/github/suggestion_routes.py);
    None when the bot is off and nothing waits."""
    suggested = await KeptSuggestions(insights).suggestions()
    if not (suggested or request.app.state.settings.github_webhook_secret):
        return None
    posted = list(getattr(request.app.state, "github_posted", ()))
    settings = request.app.state.settings
    bot_on = bool(settings.github_webhook_secret)  # the Post and Dismiss routes are this replica's when it is on
    can_post = ""  # why Post cannot work here ("" when it can): its button is not shown
    if not bot_on:
        can_post = "bot_off"
    elif not (settings.github_token or (settings.github_app_id and settings.github_private_key)):
        can_post = "no_token"
    elif not settings.base_url:
        can_post = "no_base_url"
    return {
        "suggested": suggested,
        "posted": posted,
        "cannot_post": can_post,
        "can_dismiss": bot_on,
        "said": _said(request),
    }


def _said(request: Request) -> dict[str, Any] | None:
    """What the last Post or Dismiss came to, from the page's address (`said`, `repo`, `number`), with GitHub's
    own words when this replica acted on it; None without one."""
    params = request.query_params
    code, repo, number = params.get("said", ""), params.get("repo", ""), params.get("number", "")
    if code not in SAID or not repo or not number.isdigit():
        return None
    detail = getattr(request.app.state, "github_said", {}).get((repo, int(number)), "")
    return {"code": code, "issue": f"{repo}#{number}", "detail": detail if code == "refused" else ""}
