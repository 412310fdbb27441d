"""`POST /dingtalk/robot`: the DingTalk robot (HTTP mode): a question in a direct message or an @-mention in a group.

DingTalk posts each message to the robot signed (`DingTalkMessageDep` checks the signature
and reads the body) and takes the answer from the response, as Markdown. Retrieval is quick
enough for that; a search that overruns `ACK_SECONDS` (a machine under load) is answered
"still looking" at once and followed up through the message's `sessionWebhook`, as is the
written answer when an LLM is configured (the entries come first). A message is answered
once: another delivery of its `msgId` (a replay) gets an empty answer.
"""

from __future__ import annotations

import functools
import logging
from typing import Annotated, Any

from fastapi import APIRouter, BackgroundTasks, Depends, FastAPI, HTTPException, Request, Response
from starlette.concurrency import run_in_threadpool

from kb.chat import Chat, Turn
from kb.errors import QueryError
from kb.text import detect_lang

from ...deps import ChatDep, EventsDep, base_url
from ...rendering.strings import Translator
from ...replays import keep_guard
from ...replies import Asked, asks_for_help, help_lang, written
from ...schemas import ErrorOut
from ...settings import ServerSettings
from .bot import DingTalkBot
from .markdown import answer_message, help_message, notice_message, written_message
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
    app.state.dingtalk = bot = DingTalkBot.of(settings)
    keep_guard(app, "dingtalk", bot.guard)


async def get_dingtalk(request: Request) -> DingTalkBot:
    """The DingTalk robot the app was made with."""
    bot: DingTalkBot = request.app.state.dingtalk
    return bot


DingTalkDep = Annotated[DingTalkBot, Depends(get_dingtalk)]


async def get_dingtalk_message(request: Request, bot: DingTalkDep) -> RobotMessage:
    """The message of a request DingTalk signed: 401 when unsigned, badly signed or stale, 400 when not of DingTalk's shape."""
    # `BadDingTalkSignature` (401) and `BadDingTalkPayload` (400) are answered, and logged, by server/errors.py.
    verify(bot.app_secret, request.headers.get("timestamp"), request.headers.get("sign"))
    return robot_message(await request.body())  # at most KB_MAX_BODY_BYTES (RequestLimits)


DingTalkMessageDep = Annotated[RobotMessage, Depends(get_dingtalk_message)]


def _write_answer(bot: DingTalkBot, chat: Chat, turn: Turn, root: str, webhook: str) -> None:
    """Background task: the LLM's answer from the entries already given, posted to the conversation."""
    reply = written(chat, turn, root, "DingTalk")
    if reply is None:
        bot.webhook.post(webhook, notice_message(Translator(turn.lang)("bot_llm_failed")))
        return
    bot.webhook.post(webhook, written_message(reply.answer, reply.sources, turn.lang, root))


async def _reply_late(bot: DingTalkBot, asked: Asked, root: str, webhook: str) -> None:
    """Background task: the answer to a search that overran `ACK_SECONDS`, posted to the conversation."""
    try:
        turn = await asked.turn()
        assert turn is not None  # waited for as long as it took
        message = answer_message(asked.reply(turn), root)
    except QueryError as exc:
        message = notice_message(exc.message)
    await run_in_threadpool(bot.webhook.post, webhook, message)


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
    if not bot.guard.replays.first(message.msg_id):
        log.info("DingTalk message %s was delivered before; not answered again", message.msg_id[:64])
        return Response(status_code=200)
    if message.msgtype != "text":  # a picture, a file, rich text: no text to tell the language by
        return notice_message("\n\n".join(Translator(lang)("bot_text_only") for lang in ("en", "zh")))
    text = message.text.content.strip()
    if asks_for_help(text):
        return help_message(help_lang(text))
    waiting = bot.guard.chats.wait(message.conversation_id)
    if waiting:
        busy = Translator(detect_lang(text))("bot_busy", limit=bot.guard.chats.limit, retry=waiting)
        return notice_message(busy)
    root = base_url(request)
    webhook = message.session_webhook
    follow_up = bot.webhook.usable(webhook, message.session_webhook_expires)
    asked = Asked(chat, events, text, "dingtalk", (message.corp_id, message.conversation_id))
    late = functools.partial(_reply_late, bot, asked, root, webhook)
    turn = await asked.in_time(ACK_SECONDS if follow_up else None, late, background, "DingTalk")
    if isinstance(turn, str):
        return notice_message(turn)
    pending = follow_up and chat.writes(turn)
    if pending:
        background.add_task(_write_answer, bot, chat, turn, root, webhook)
    return answer_message(asked.reply(turn, pending), root)
