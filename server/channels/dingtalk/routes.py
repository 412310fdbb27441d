"""`POST /dingtalk/robot`: the DingTalk robot (HTTP mode): a question in a direct message or an @-mention in a group.

The robot reads a message into a `BotMessage` and answers it as every chat bot does
(server/bots/flow.py, `respond`). DingTalk posts each message to the robot signed (`DingTalkMessageDep` checks the signature
and reads the body) and takes the answer from the response, as Markdown. Retrieval is quick
enough for that; a search that overruns `ACK_SECONDS` (a machine under load) is answered
"still looking" at once and followed up through the message's `sessionWebhook`, as is the
generated answer when an LLM is configured (the entries come first). A message is answered
once: another delivery of its `msgId` (a replay) gets an empty answer.
"""

from __future__ import annotations

import functools
import logging
from typing import Annotated, Any

from fastapi import APIRouter, BackgroundTasks, Depends, FastAPI, HTTPException, Request

from ...bots.delivery_ids import keep_bot, kept
from ...bots.flow import BotMessage
from ...deps import ChatDep, EventsDep, base_url
from ...schemas import ErrorOut
from ...settings import ServerSettings
from .bot import DingTalkBot
from .payload import RobotMessage, robot_message
from .signature import verify

__all__ = ["router", "install", "ACK_SECONDS"]

log = logging.getLogger("kb.server")
router = APIRouter(prefix="/dingtalk", tags=["dingtalk"])

ACK_SECONDS = 2.0  # longest wait for the search before answering "still looking"; DingTalk does not wait long
_ERRORS: dict[int | str, dict[str, Any]] = {
    400: {"model": ErrorOut},
    401: {"model": ErrorOut},
    404: {"model": ErrorOut},
}


def install(app: FastAPI, settings: ServerSettings) -> None:
    """The robot its routes answer with."""
    keep_bot(app, "dingtalk", DingTalkBot.of(settings))


DingTalkDep = Annotated[DingTalkBot, Depends(kept("dingtalk"))]


async def get_dingtalk_message(request: Request, bot: DingTalkDep) -> RobotMessage:
    """The message of a request DingTalk signed: 401 when unsigned, badly signed or stale, 400 when not of DingTalk's shape."""
    # `BadDingTalkSignature` (401) and `BadDingTalkPayload` (400) are answered, and logged, by server/error_handler.py.
    verify(bot.app_secret, request.headers.get("timestamp"), request.headers.get("sign"))
    return robot_message(await request.body())  # at most KB_MAX_BODY_BYTES (RequestLimits)


DingTalkMessageDep = Annotated[RobotMessage, Depends(get_dingtalk_message)]


@router.post("/robot", responses=_ERRORS)
async def robot(
    request: Request,
    message: DingTalkMessageDep,
    bot: DingTalkDep,
    chat: ChatDep,
    events: EventsDep,
    background: BackgroundTasks,
) -> Any:
    """Answer a message to the DingTalk robot (signed with the app's AppSecret)."""
    if message.robot_code and message.robot_code != bot.app_key:
        raise HTTPException(401, f"robotCode {message.robot_code[:64]!r} is not this robot's (KB_DINGTALK_APP_KEY)")
    text = message.text.content.strip() if message.msgtype == "text" else ""  # a picture, a file, rich text: none
    asked = BotMessage(text, (message.corp_id, message.conversation_id), message.msg_id, message.msgtype)
    webhook = message.session_webhook
    follow_up = bot.webhook.usable(webhook, message.session_webhook_expires)
    send = functools.partial(bot.webhook.post, webhook) if follow_up else None
    return await bot.flow.respond(chat, events, asked, base_url(request), ACK_SECONDS, send, background)
