"""`POST /slack/command` (the `/faq` slash command) and `POST /slack/interactive` (the buttons on its replies).

Both are verified by `SlackFormDep` (the Slack signature over the raw body) and answer
within Slack's 3-second limit: retrieval is enough for the reply itself; a written LLM
answer, a shared answer and a thank-you go to the request's `response_url` afterwards,
as background tasks that run once the response has been sent. A search that overruns
`ACK_SECONDS` (a machine under load) is acknowledged at once and answered the same way.
The command is answered by the chat bots' one flow (server/bots/flow.py, `respond`).
As every chat bot, a command is answered once (its `trigger_id` sent again is not) and each
channel asks at most `CHAT_LIMIT` questions a minute.
"""

from __future__ import annotations

import functools
import logging
from typing import Annotated, Any
from urllib.parse import parse_qs

import httpx
from fastapi import APIRouter, BackgroundTasks, Depends, FastAPI, Request, Response
from fastapi.responses import JSONResponse

from kb.errors import EntryNotFound
from kb.events import Voted

from ...bots.delivery_ids import DeliveryIds, Guard, keep_guard
from ...bots.flow import BotFlow, BotMessage, Renderer
from ...bots.votes import bot_vote
from ...deps import ChatDep, EventsDep, InsightsDep, KBDep, SettingsDep, base_url
from ...outbound import Outbound
from ...ratelimit import LogBudget
from ...rendering.strings import Translator
from ...schemas import ErrorOut
from ...settings import ServerSettings
from .blocks import (
    RELATED_SHOWN,
    actions_lang,
    generated_message,
    help_message,
    notice_message,
    reply_message,
    shared_message,
)
from .payload import block_actions
from .signature import MAX_AGE_SECONDS, verify

__all__ = ["router", "install", "post_to_slack", "ResponseUrls", "POST_TIMEOUT", "ACK_SECONDS"]

log = logging.getLogger("kb.server")
router = APIRouter(prefix="/slack", tags=["slack"])

POST_TIMEOUT = 10.0  # seconds for a post to Slack's response_url
ACK_SECONDS = 2.0  # longest wait for the search before acknowledging; Slack gives up at 3 s
_ERRORS: dict[int | str, dict[str, Any]] = {401: {"model": ErrorOut}, 404: {"model": ErrorOut}}


def install(app: FastAPI, settings: ServerSettings) -> None:
    """What the routes keep between requests, as every chat bot does (`Guard`): the commands' trigger ids (one
    sent again is not answered again), each channel's limit, the budget of log lines for refused requests."""
    app.state.slack = keep_guard(app, "slack", Guard(DeliveryIds(2 * MAX_AGE_SECONDS)))
    markup = Renderer(reply_message, generated_message, help_message, notice_message)
    app.state.slack_flow = BotFlow("slack", "Slack", app.state.slack, markup)
    app.state.slack_response_urls = ResponseUrls(settings.slack_response_base)


async def get_slack_form(request: Request, settings: SettingsDep) -> dict[str, str]:
    """The form fields of a request Slack signed: 401 when unsigned, badly signed or stale."""
    body = await request.body()  # at most KB_MAX_BODY_BYTES: a larger one is refused with 413 as it is read
    headers = request.headers
    # Over the raw bytes, before anything is parsed; a `BadSlackSignature` is answered 401 (server/error_handler.py).
    verify(
        settings.slack_signing_secret, headers.get("x-slack-request-timestamp"), headers.get("x-slack-signature"), body
    )
    fields = parse_qs(body.decode("utf-8", "replace"), keep_blank_values=True)
    return {name: values[-1] for name, values in fields.items()}


SlackFormDep = Annotated[dict[str, str], Depends(get_slack_form)]


class ResponseUrls:
    """Posts to the `response_url`s under KB_SLACK_RESPONSE_BASE (`Outbound`); a failure is one log line, within a budget."""

    def __init__(self, base: str):
        self.outbound = Outbound("Slack", "KB_SLACK_RESPONSE_BASE", base)
        self._failures = LogBudget()

    def usable(self, response_url: str) -> str:
        """`response_url` when it may be posted to; else "" and a log line (nothing will be posted to it)."""
        if response_url and not self.outbound.allows(response_url):
            self._failures.warning(log, "Slack: response_url %s", self.outbound.refusal(response_url))
            return ""
        return response_url

    def post(self, response_url: str, message: dict[str, Any]) -> None:
        """Post a message to a `response_url` as a new message (a failure is logged, not raised)."""
        if not response_url:
            self._failures.warning(log, "Slack request had no response_url; nothing posted")
            return
        if not self.outbound.allows(response_url):
            self._failures.warning(log, "Slack: response_url %s", self.outbound.refusal(response_url))
            return
        try:
            response = self.outbound.post(response_url, {**message, "replace_original": False}, timeout=POST_TIMEOUT)
        except httpx.HTTPError as exc:
            self._failures.warning(log, "posting to Slack's response_url failed: %s: %s", type(exc).__name__, exc)
            return
        if response.status_code >= 400:
            self._failures.warning(
                log, "Slack's response_url answered HTTP %s: %s", response.status_code, response.text[:200]
            )


def post_to_slack(request: Request, response_url: str, message: dict[str, Any]) -> None:
    """Post a message to a `response_url` through the app's `ResponseUrls`."""
    urls: ResponseUrls = request.app.state.slack_response_urls
    urls.post(response_url, message)


@router.post("/command", response_class=JSONResponse, responses=_ERRORS)
async def command(
    request: Request, form: SlackFormDep, chat: ChatDep, events: EventsDep, background: BackgroundTasks
) -> Any:
    """Answer a `/faq` slash command from Slack (signed by Slack)."""
    if form.get("ssl_check"):
        return Response(status_code=200)
    chat_id = (form.get("team_id", ""), form.get("channel_id", ""))
    message = BotMessage(form.get("text", "").strip(), chat_id, form.get("trigger_id", ""))
    urls: ResponseUrls = request.app.state.slack_response_urls
    response_url = urls.usable(form.get("response_url", ""))  # a written or late answer follows only to Slack
    send = functools.partial(urls.post, response_url) if response_url else None
    flow: BotFlow = request.app.state.slack_flow
    return await flow.respond(chat, events, message, base_url(request), ACK_SECONDS, send, background)


@router.post("/interactive", responses={400: {"model": ErrorOut}, **_ERRORS})
async def interactive(
    request: Request, form: SlackFormDep, kb: KBDep, insights: InsightsDep, background: BackgroundTasks
) -> Response:
    """Handle a button on a `/faq` reply: share it in the channel, or helpful / not helpful."""
    payload = block_actions(form.get("payload", ""))  # signed, yet not an interaction: `BadSlackPayload`, a 400
    if payload is None:
        return Response(status_code=200)  # other interaction types are not ours
    response_url, user_id = payload.response_url, payload.user.id
    for action in payload.actions[:1]:
        action_id, entry_id = action.action_id, action.value
        t = Translator(actions_lang(action.block_id))
        if action_id == "kb_share":
            try:
                entry = kb.get(entry_id)
            except EntryNotFound:
                background.add_task(post_to_slack, request, response_url, notice_message(t("slack_entry_gone")))
                continue
            related = kb.related(entry_id, RELATED_SHOWN, t.lang)
            message = shared_message(entry.localized(t.lang), related, t.lang, base_url(request), user_id)
            background.add_task(post_to_slack, request, response_url, message)
        elif action_id in ("kb_helpful", "kb_unhelpful"):
            voted = Voted(entry_id, action_id == "kb_helpful", "", f"slack:{payload.team_id}:{user_id}", "slack")
            _, said = await bot_vote(request, insights, voted, t.lang)
            background.add_task(post_to_slack, request, response_url, notice_message(said))
        else:
            log.info("Slack action %r is not one of ours; ignored", action_id)
    return Response(status_code=200)
