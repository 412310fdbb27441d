"""`POST /feishu/events`: the Feishu (Lark) bot: a question in a direct message or an @-mention in a group, and its buttons.

Feishu posts every event and card callback to this one URL (server/feishu/events.py reads and
verifies them). It waits 3 seconds for an event's answer and sends the event again without
one, so a question is acknowledged at once and answered in the background: its reply is a
card sent through the open platform's API (server/feishu/client.py) as a reply to the
question, and with an LLM a second card with the written answer follows. An event is
answered once: another delivery of an event id (Feishu's retry, or a replay) is acknowledged
and dropped. A press of Helpful or Not helpful on a card records a vote, as the web's do, and
is answered with a toast.
"""

from __future__ import annotations

import logging
from typing import Any

from fastapi import APIRouter, BackgroundTasks, HTTPException, Request
from starlette.concurrency import run_in_threadpool

from kb.chat import Chat
from kb.errors import QueryError
from kb.events import Events, Voted
from kb.text import detect_lang

from ..deps import ChatDep, EventsDep, FeishuDep, base_url
from ..feishu import (
    BadFeishuRequest,
    Challenge,
    FeishuBot,
    Message,
    Other,
    Press,
    answer_card,
    button_vote,
    help_card,
    notice_card,
    written_card,
)
from ..rendering.strings import Translator
from ..replies import Asked, asks_for_help, help_lang, written
from ..schemas import ErrorOut
from ..settings import ServerSettings

__all__ = ["router", "log_status"]

log = logging.getLogger("kb.server")
router = APIRouter(prefix="/feishu", tags=["feishu"])

_ERRORS: dict[int | str, dict[str, Any]] = {401: {"model": ErrorOut}, 404: {"model": ErrorOut}}
_TAKEN = {"msg": "ok"}


def log_status(settings: ServerSettings) -> None:
    """Say at start-up whether the Feishu bot is on."""
    if settings.feishu_on:
        signed = "encrypted and signed" if settings.feishu_encrypt_key else "checked by token only (no Encrypt Key)"
        log.info("Feishu bot on: /feishu/events, events %s, replies through %s", signed, settings.feishu_base_url)
    else:
        log.info("Feishu bot off: KB_FEISHU_APP_ID is not set, so /feishu/events answers 404")


async def _send(bot: FeishuBot, message_id: str, card: dict[str, Any]) -> None:
    await run_in_threadpool(bot.client.reply, message_id, card)


async def _answer(bot: FeishuBot, chat: Chat, events: Events, message: Message, root: str) -> None:
    """Background task: the answer to a message, sent as a card; with an LLM, the written answer follows."""
    text = message.text
    if message.kind not in ("text", "post"):  # an image, a file, a sticker: no text to tell the language by
        both = "\n\n".join(Translator(lang)("bot_text_only") for lang in ("en", "zh"))
        await _send(bot, message.message_id, notice_card(both))
        return
    if asks_for_help(text):
        await _send(bot, message.message_id, help_card(help_lang(text)))
        return
    asked = Asked(chat, events, text, "feishu", (message.tenant, message.chat_id))
    t = Translator(asked.lang)
    try:
        turn = await asked.turn()
    except QueryError as exc:
        await _send(bot, message.message_id, notice_card(exc.message))
        return
    assert turn is not None  # waited for as long as it took
    pending = chat.writes(turn)
    await _send(bot, message.message_id, answer_card(asked.reply(turn, pending), text, root))
    if pending:
        reply = await run_in_threadpool(written, chat, turn, root, "Feishu")
        if reply is None:
            card = notice_card(t("bot_llm_failed"))
        else:
            card = written_card(reply.answer, reply.sources, turn.lang, text, root)
        await _send(bot, message.message_id, card)


def _vote(press: Press, events: Events) -> dict[str, Any]:
    """A vote button pressed: the vote recorded, a toast in the reply's language."""
    vote = button_vote(press.value)
    if vote is None:
        log.info("Feishu: a card callback that is not one of this bot's votes; ignored")
        return {}
    log.info("Feishu feedback: %s on entry %s", "helpful" if vote.helpful else "not helpful", vote.entry_id)
    voter = f"feishu:{press.tenant}:{press.user}"
    events.publish(Voted(vote.entry_id, vote.helpful, vote.question, voter, "feishu"))
    return {"toast": {"type": "success", "content": Translator(vote.lang)("bot_thanks")}}


@router.post("/events", responses=_ERRORS)
async def feishu_events(
    request: Request, bot: FeishuDep, chat: ChatDep, events: EventsDep, background: BackgroundTasks
) -> Any:
    """Take an event or a card callback from Feishu (verified with the app's token and Encrypt Key)."""
    body = await request.body()  # at most KB_MAX_BODY_BYTES (RequestLimits)
    try:
        received = bot.events.read(request.headers, body)
    except BadFeishuRequest as exc:
        client = request.client.host if request.client else "?"
        bot.guard.refused.warning(log, "Feishu request from %s refused: %s", client, exc, cause=exc.cause)
        raise HTTPException(401, f"not a valid Feishu request: {exc}") from None
    if isinstance(received, Challenge):
        return {"challenge": received.challenge}
    if isinstance(received, Other):
        log.info("Feishu event %s is not one this bot answers; acknowledged and ignored", received.event_type)
        return _TAKEN
    if received.event_id and not bot.guard.replays.first(received.event_id):
        log.info("Feishu event %s was delivered before; not answered again", received.event_id)
        return _TAKEN
    if isinstance(received, Press):
        return _vote(received, events)
    if received.chat_type != "p2p" and not received.mentioned:
        return _TAKEN  # a group message the bot is not asked in
    waiting = bot.guard.chats.wait(received.chat_id)
    if waiting:
        t = Translator(detect_lang(received.text))
        card = notice_card(t("bot_busy", limit=bot.guard.chats.limit, retry=waiting))
        background.add_task(_send, bot, received.message_id, card)
        return _TAKEN
    background.add_task(_answer, bot, chat, events, received, base_url(request))
    return _TAKEN
