"""Route dependencies as `Annotated` aliases, the one way to what `create_app` keeps on `app.state`.

The settings `create_app` resolved, the recorder and the listeners to what is asked
(`Events`), the insights, the reloader and the limits on sign-in attempts and votes; the
build a request is pinned to (its knowledge base and chat); and what a request says: its
language, its channel, a Slack form, a DingTalk message, the admin token, a page's form token;
and the Feishu and DingTalk bots (404 while they are off).
"""

from __future__ import annotations

import logging
from typing import Annotated, Literal
from urllib.parse import parse_qs

from fastapi import Depends, Form, HTTPException, Query, Request
from starlette.requests import HTTPConnection

from kb.chat import Chat
from kb.events import Events
from kb.insights import REASONS, Recorder
from kb.insights.service import Insights
from kb.knowledge import KnowledgeBase

from .admin_auth import check_admin, check_admin_form, check_bearer, check_on
from .dingtalk import BadDingTalkPayload, BadDingTalkSignature, DingTalkBot, RobotMessage, robot_message
from .dingtalk import verify as verify_dingtalk
from .feishu import FeishuBot
from .forms import check_form, from_other_site
from .ratelimit import LogBudget
from .refit import Refit
from .reload import Reloader, pinned
from .rendering.templates import request_lang
from .settings import ServerSettings
from .slack.signature import BadSlackSignature, verify

__all__ = [
    "SettingsDep",
    "KBDep",
    "ChatDep",
    "LangDep",
    "SlackFormDep",
    "FeishuDep",
    "DingTalkDep",
    "DingTalkMessageDep",
    "RecorderDep",
    "ReloaderDep",
    "RefitDep",
    "InsightsDep",
    "ChannelDep",
    "AdminDep",
    "AdminOnDep",
    "BearerDep",
    "AdminFormDep",
    "FormTokenDep",
    "SignInLimitDep",
    "VoteLimitDep",
    "limit_answer_votes",
    "app_settings",
    "base_url",
    "feedback_context",
    "ChannelParam",
    "channel_of",
    "get_kb",
    "get_recorder",
    "EventsDep",
    "get_events",
]

log = logging.getLogger("kb.server")

# The dependencies are `async def` on purpose: FastAPI runs a plain `def` dependency in the
# thread pool, a thread hop per request for what is an attribute lookup.


def app_settings(connection: HTTPConnection) -> ServerSettings:
    """The settings `create_app` resolved, for code outside a route (the error handler)."""
    return connection.app.state.settings


async def get_settings(request: Request) -> ServerSettings:
    return app_settings(request)


async def get_kb(request: Request) -> KnowledgeBase:
    return pinned(request.scope).kb


async def get_chat(request: Request) -> Chat:
    return pinned(request.scope).chat


async def get_lang(request: Request) -> str:
    return request_lang(request)


async def get_recorder(request: Request) -> Recorder:
    return request.app.state.recorder


async def get_events(request: Request) -> Events:
    return request.app.state.events


async def get_insights(request: Request) -> Insights:
    """One per app, over its recorder (the gap finder it keeps embeds question vectors once across reports)."""
    state = request.app.state
    insights = getattr(state, "insights", None)
    if insights is None:
        insights = state.insights = Insights(state.recorder)
    return insights


async def get_reloader(request: Request) -> Reloader:
    return request.app.state.reloader


async def get_refit(request: Request) -> Refit:
    return request.app.state.refit


SettingsDep = Annotated[ServerSettings, Depends(get_settings)]
KBDep = Annotated[KnowledgeBase, Depends(get_kb)]


# The `channel` query parameter, as a dependency declares it and as a route that reads it itself does.
ChannelParam = Annotated[
    Literal["web", "widget", "api"] | None,
    Query(
        description="where the question comes from, for the insights page (default: `widget` for a call "
        "from another site's page, else `api`)"
    ),
]


def channel_of(request: Request, channel: str | None) -> str:
    """The channel a question or vote is recorded under: as given, else `widget` when another site's page calls."""
    if channel is not None:
        return channel
    return "widget" if from_other_site(request) else "api"  # only the widget calls from other sites' pages


async def get_channel(request: Request, channel: ChannelParam = None) -> str:
    """The channel a question or vote is recorded under: as given, else `widget` when another site's page calls."""
    return channel_of(request, channel)


async def get_slack_form(request: Request, settings: SettingsDep) -> dict[str, str]:
    """The form fields of a request Slack signed: 404 while Slack is off, 401 when unsigned, badly signed or stale."""
    secret = settings.slack_signing_secret
    if not secret:
        raise HTTPException(
            404, "the Slack routes are off: set KB_SLACK_SIGNING_SECRET to the Slack app's signing secret"
        )
    body = (
        await request.body()
    )  # at most KB_MAX_BODY_BYTES: a larger one is refused with 413 as it is read (RequestLimits)
    headers = request.headers
    try:
        # Over the raw bytes, before anything is parsed.
        verify(secret, headers.get("x-slack-request-timestamp"), headers.get("x-slack-signature"), body)
    except BadSlackSignature as exc:
        client = request.client.host if request.client else "?"
        # Slack routes are not rate-limited (Slack retries on its own schedule), so the log lines are.
        refused: LogBudget = request.app.state.slack_refused_log
        refused.warning(
            log, "Slack request to %s from %s refused: %s", request.url.path, client, exc, cause=_cause(request, exc)
        )
        raise HTTPException(401, f"not a valid Slack request: {exc}") from None
    fields = parse_qs(body.decode("utf-8", "replace"), keep_blank_values=True)
    return {name: values[-1] for name, values in fields.items()}


async def get_feishu(request: Request) -> FeishuBot:
    """The Feishu bot: 404 while it is off."""
    bot: FeishuBot | None = request.app.state.feishu
    if bot is None:
        raise HTTPException(
            404, "the Feishu bot is off: set KB_FEISHU_APP_ID, KB_FEISHU_APP_SECRET and KB_FEISHU_VERIFICATION_TOKEN"
        )
    return bot


async def get_dingtalk(request: Request) -> DingTalkBot:
    """The DingTalk robot: 404 while it is off."""
    bot: DingTalkBot | None = request.app.state.dingtalk
    if bot is None:
        raise HTTPException(404, "the DingTalk robot is off: set KB_DINGTALK_APP_KEY and KB_DINGTALK_APP_SECRET")
    return bot


async def get_dingtalk_message(request: Request, bot: Annotated[DingTalkBot, Depends(get_dingtalk)]) -> RobotMessage:
    """The message of a request DingTalk signed: 401 when unsigned, badly signed or stale, 400 when not of DingTalk's shape."""
    headers = request.headers
    try:
        verify_dingtalk(bot.app_secret, headers.get("timestamp"), headers.get("sign"))
    except BadDingTalkSignature as exc:
        client = request.client.host if request.client else "?"
        # The robot's route is not rate-limited (DingTalk's servers send for everyone), so the log lines are.
        bot.guard.refused.warning(
            log, "DingTalk request to %s from %s refused: %s", request.url.path, client, exc, cause=_cause(request, exc)
        )
        raise HTTPException(401, f"not a valid DingTalk request: {exc}") from None
    try:
        return robot_message(await request.body())  # at most KB_MAX_BODY_BYTES (RequestLimits)
    except BadDingTalkPayload as exc:  # signed, yet not a message: a 400, one line within the budget
        client = request.client.host if request.client else "?"
        bot.guard.refused.warning(
            log, "DingTalk request to %s from %s refused: %s", request.url.path, client, exc, cause=_cause(request, exc)
        )
        raise


def _cause(request: Request, refusal: Exception) -> str:
    """A refusal's cause for its log budget: the route (a path matched exactly) and the kind of refusal."""
    return f"{request.url.path} {type(refusal).__name__}"


async def require_admin_on(settings: SettingsDep) -> None:
    """The admin routes and the insights' forms: 404 while KB_ADMIN_TOKEN is not set."""
    check_on(settings)


async def require_admin(request: Request, settings: SettingsDep) -> None:
    """The admin routes: 404 while KB_ADMIN_TOKEN is not set, 401 without the token (or the sign-in cookie)."""
    check_admin(request, settings)


async def require_bearer(request: Request, settings: SettingsDep) -> None:
    """The `/admin/` JSON routes: 404 while KB_ADMIN_TOKEN is not set, 401 without it as a bearer token."""
    check_bearer(request, settings)


async def require_admin_form(request: Request, settings: SettingsDep, form_token: Annotated[str, Form()] = "") -> None:
    """The insights' forms that change something: the bearer token, or the sign-in cookie with the page's form token,
    from this site (server/admin_auth.py)."""
    check_admin_form(request, settings, form_token)


async def limit_sign_in(request: Request) -> None:
    """At most SIGN_IN_LIMIT attempts per client, counted before the token is compared (429 beyond)."""
    request.app.state.sign_in_limit.check(request.scope)


async def limit_votes(request: Request) -> None:
    """At most VOTE_LIMIT votes per client (429 beyond)."""
    request.app.state.vote_limit.check(request.scope)


def limit_answer_votes(request: Request, entry_id: str) -> None:
    """At most ANSWER_VOTE_LIMIT votes per client on one answer (an entry), whatever the sessions (429 beyond)."""
    request.app.state.answer_vote_limit.check(request.scope, entry_id)


def feedback_context(insights: Insights) -> dict[str, object]:
    """What a page needs to show vote buttons (templates/_votes.html): whether votes are taken, and the reasons."""
    return {"feedback": insights.feedback_on, "feedback_reasons": REASONS}


def base_url(request: Request) -> str:
    """This server's root URL, ending in "/", for permalinks: KB_BASE_URL; else the scheme (`https` when a trusted
    proxy says so) and the address the request reached, never the `Host` header a client writes."""
    configured = app_settings(request).base_url
    if configured:
        return configured.rstrip("/") + "/"
    host, port = request.scope.get("server") or ("localhost", None)
    scheme = request.url.scheme
    default = {"http": 80, "https": 443}.get(scheme)
    host = f"[{host}]" if ":" in host else host  # an IPv6 address
    return f"{scheme}://{host}/" if port in (None, default) else f"{scheme}://{host}:{port}/"


ChatDep = Annotated[Chat, Depends(get_chat)]
LangDep = Annotated[str, Depends(get_lang)]
SlackFormDep = Annotated[dict[str, str], Depends(get_slack_form)]
FeishuDep = Annotated[FeishuBot, Depends(get_feishu)]
DingTalkDep = Annotated[DingTalkBot, Depends(get_dingtalk)]
DingTalkMessageDep = Annotated[RobotMessage, Depends(get_dingtalk_message)]
RecorderDep = Annotated[Recorder, Depends(get_recorder)]
EventsDep = Annotated[Events, Depends(get_events)]
ReloaderDep = Annotated[Reloader, Depends(get_reloader)]
RefitDep = Annotated[Refit, Depends(get_refit)]
InsightsDep = Annotated[Insights, Depends(get_insights)]
ChannelDep = Annotated[str, Depends(get_channel)]
AdminDep = Annotated[None, Depends(require_admin)]
AdminOnDep = Annotated[None, Depends(require_admin_on)]
BearerDep = Annotated[None, Depends(require_bearer)]
AdminFormDep = Annotated[None, Depends(require_admin_form)]
FormTokenDep = Annotated[None, Depends(check_form)]
SignInLimitDep = Annotated[None, Depends(limit_sign_in)]
VoteLimitDep = Annotated[None, Depends(limit_votes)]
