"""`POST /insights/suggested/post` and `/dismiss`: the GitHub bot's suggested answers (suggest mode), posted or
dismissed from the insights page's "Suggested answers for GitHub issues" with one click.

Admin only and CSRF-safe as the page's other forms: the sign-in cookie or the bearer token, the page's form token
and this site's `Origin` (server/admin_auth.py). Post publishes the comment as comment mode does, through the same
API client: on an issue, the bot's one comment found again (its own, holding its marker: updated, never a second);
on a Discussion, a comment. Post needs KB_BASE_URL, where the comment links its entries (409 naming the setting
without it). The page shows the comment before it is posted and links it after. Dismiss forgets the suggestion
and takes `KB_GITHUB_SUGGEST_LABEL` off the issue. A Post or a Dismiss first claims the suggestion in the insights
database, so that of several at once (two tabs, a double click, two workers) one acts and the others get 404.
Either way the suggestion leaves the page; one the API refuses is put back, and the page says why (502).
From the page itself (a browser's form, asking for HTML) every outcome comes back to the page, said beside the
row (`said`): posted, dismissed, or why not, never an error page of its own; a client asking for JSON gets
the status and the error.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from dataclasses import dataclass
from typing import Annotated, Any
from urllib.parse import urlencode

from fastapi import APIRouter, Form, HTTPException, Request
from fastapi.responses import RedirectResponse, Response

from kb.errors import shown
from kb.insights import DEFAULT_SINCE

from ...deps import AdminFormDep, InsightsDep
from ...exceptions import ServerError
from ...link_deps import LinkLimitDep
from .client import GitHubAPI, GitHubUnavailable
from .comment import MARKER
from .suggestions import KeptSuggestions, SuggestedAnswer, from_pending

__all__ = ["router", "NotPosted", "NoBaseURL", "ACTIONS", "Posted", "posted_lately", "said_on_page"]

log = logging.getLogger("kb.server")
router = APIRouter(tags=["insights"])

ACTIONS = ("post", "dismiss")
PRIVATE = {"Cache-Control": "no-store", "X-Robots-Tag": "noindex"}
POST_DEADLINE = 20.0  # seconds a Post waits for GitHub, all calls together, before the page says it was not posted
POSTED_SHOWN = 10  # answers posted lately whose comments the page links


class NotPosted(ServerError):
    """GitHub did not take the suggested answer (no token or App to post with, or the API refused it)."""

    status = 502
    on_page = "refused"  # what the page says (panel.SAID): GitHub refused it or did not answer


class NoToken(NotPosted):
    """Post with neither KB_GITHUB_TOKEN nor the GitHub App: nothing to post with."""

    on_page = "no_token"


def api_as(request: Request, installation: int) -> GitHubAPI | None:
    """The API as the GitHub App's `installation` (when the App is set and the issue came through one), else as
    KB_GITHUB_TOKEN's user; None without either."""
    return api_of(request.app, installation)


def api_of(app: Any, installation: int) -> GitHubAPI | None:
    """`api_as`, for the app itself (work that outlives a request)."""
    state, settings = app.state, app.state.settings
    shared = {"client": state.github_connections, "logins": state.github_logins, "locks": state.github_issue_locks}
    tokens = state.github_tokens
    if tokens is not None and installation:
        return GitHubAPI(settings.github_api_url, lambda: tokens.token(installation), login=tokens.login, **shared)
    if settings.github_token:
        return GitHubAPI(settings.github_api_url, settings.github_token, **shared)
    return None


class NoBaseURL(ServerError):
    """Post without KB_BASE_URL: the comment would link its entries at an address nobody outside can reach."""

    status = 409
    on_page = "no_base_url"


async def _post(api: GitHubAPI | None, answer: SuggestedAnswer) -> str:
    """The suggested comment published as comment mode does; its URL."""
    where = f"{answer.repo}#{answer.number}"
    if api is None:
        raise NoToken(
            f"{where}: not posted: the GitHub bot has no token to post with "
            "(set KB_GITHUB_TOKEN, or KB_GITHUB_APP_ID and KB_GITHUB_PRIVATE_KEY)"
        )
    try:
        async with asyncio.timeout(POST_DEADLINE):
            if answer.kind == "discussion":
                return await api.comment_on_discussion(answer.node_id, answer.comment)
            return await api.upsert_issue_comment(answer.repo, answer.number, answer.comment, MARKER)
    except GitHubUnavailable as exc:
        raise NotPosted(f"{where}: not posted: {exc}") from None
    except TimeoutError:
        raise NotPosted(f"{where}: not posted: GitHub did not answer within {POST_DEADLINE:g} s") from None


@router.post("/insights/suggested/{action}", include_in_schema=False)
async def suggested_answer(
    request: Request,
    action: str,
    _limit: LinkLimitDep,
    _: AdminFormDep,
    insights: InsightsDep,
    repo: Annotated[str, Form(max_length=200)] = "",
    number: Annotated[int, Form(ge=1, le=2**31)] = 1,
    since: Annotated[str, Form(max_length=100)] = DEFAULT_SINCE,
) -> Response:
    """Post a suggested answer to its issue, or dismiss it; from the page, the outcome said beside its row."""
    if action not in ACTIONS:
        raise HTTPException(404, f"no suggested answer action {shown(action)}; the actions are post and dismiss")
    try:
        said = await _act(request, action, insights, repo, number)
    except (NotPosted, NoBaseURL, HTTPException) as exc:
        if not _from_page(request):
            raise
        said = getattr(exc, "on_page", "gone")
        said_on_page(request.app)[(repo, number)] = str(getattr(exc, "detail", "") or exc)  # for this replica's page
    return _back(since, said, repo, number) if _from_page(request) else _back(since)


async def _act(request: Request, action: str, insights: Any, repo: str, number: int) -> str:
    """Post or dismiss; what the page says of it (panel.SAID)."""
    settings = request.app.state.settings
    if action == "post" and not settings.base_url:
        raise NoBaseURL(
            f"{shown(repo)}#{number}: not posted: set KB_BASE_URL to this site's public address "
            "(https://faq.example.com): the comment links its entries there"
        )
    kept = KeptSuggestions(insights)
    claimed = await kept.claim(repo, number)  # one Post or Dismiss acts on it, in any process
    if claimed is None:
        raise HTTPException(404, f"no answer is suggested for {shown(repo)}#{number} (posted or dismissed already?)")
    answer = from_pending(claimed)
    api = api_as(request, answer.installation)
    label = settings.github_suggest_label
    if action == "post":
        try:
            url = await _post(api, answer)
        except Exception:
            await kept.release(claimed)
            raise
        await kept.settle(claimed)
        log.info("GitHub %s#%s: the suggested answer was posted by a maintainer %s", repo, number, url)
        posted_lately(request.app).appendleft(Posted(answer.repo, answer.number, url, time.time()))
        return "posted"
    await kept.settle(claimed)
    if api is not None and label and answer.kind == "issue":
        try:
            await api.remove_label(repo, number, label)
        except GitHubUnavailable as exc:  # the suggestion goes all the same: the label is a hint, not the record
            log.warning("GitHub %s#%s: the label %s was not taken off: %s", repo, number, label, exc)
    return "dismissed"


def _from_page(request: Request) -> bool:
    """Whether the form came from the page (a browser asks for HTML), not from a client asking for JSON."""
    accept = request.headers.get("accept", "")
    return "text/html" in accept and "application/json" not in accept


def _back(since: str, said: str = "", repo: str = "", number: int = 0) -> RedirectResponse:
    """Back to the insights page's suggested answers, saying what became of the one acted on."""
    query = {"since": since, **({"said": said, "repo": repo, "number": str(number)} if said else {})}
    return RedirectResponse(f"/insights?{urlencode(query)}#suggested", status_code=303, headers=PRIVATE)


def said_on_page(app: Any) -> dict[tuple[str, int], str]:
    """Why the last forms of this replica failed, by issue: GitHub's words, beside the row's message."""
    if not hasattr(app.state, "github_said"):
        app.state.github_said = {}
    kept: dict[tuple[str, int], str] = app.state.github_said
    if len(kept) > POSTED_SHOWN:
        kept.pop(next(iter(kept)))
    return kept


@dataclass(frozen=True)
class Posted:
    """A suggested answer a maintainer posted: where, and the comment's address on GitHub."""

    repo: str
    number: int
    url: str
    at: float


def posted_lately(app: Any) -> deque[Posted]:
    """The answers posted from this process lately, newest first (the page links each posted comment)."""
    if not hasattr(app.state, "github_posted"):
        app.state.github_posted = deque(maxlen=POSTED_SHOWN)
    kept: deque[Posted] = app.state.github_posted
    return kept
