"""`POST /feishu/events`: the Feishu (Lark) bot: a question in a direct message or an @-mention in a group, and its buttons.

Feishu posts every event and card callback to this one URL (server/channels/feishu/events.py reads and
verifies them). It waits 3 seconds for an event's answer and sends the event again without
one, so a question is acknowledged at once and answered in the background (the chat bots' flow,
server/bots/flow.py, `answer_later`): its reply is a
card sent through the open platform's API (server/channels/feishu/client.py) as a reply to the
question, and with an LLM a second card with the generated answer follows. An event is
answered once: another delivery of an event id (Feishu's retry, or a replay) is acknowledged
and dropped. A press of Helpful or Not helpful on a card records a vote, as the web's do, and
is answered with a toast.
"""

from __future__ import annotations

import functools
import logging
from typing import Annotated, Any

from fastapi import APIRouter, BackgroundTasks, Depends, FastAPI, Request

from kb.events import Voted
from kb.insights.service import Insights

from ...bots.delivery_ids import keep_bot, kept
from ...bots.flow import BotMessage
from ...bots.votes import bot_vote
from ...deps import ChatDep, EventsDep, InsightsDep, base_url
from ...schemas import ErrorOut
from ...settings import ServerSettings
from .bot import FeishuBot
from .card import button_vote
from .events import Challenge, Other, Press

__all__ = ["router", "install"]

log = logging.getLogger("kb.server")
router = APIRouter(prefix="/feishu", tags=["feishu"])

_ERRORS: dict[int | str, dict[str, Any]] = {401: {"model": ErrorOut}, 404: {"model": ErrorOut}}
_TAKEN = {"msg": "ok"}


def install(app: FastAPI, settings: ServerSettings) -> None:
    """The bot its routes answer with (lark-oapi is imported with it, only when the bot is on)."""
    keep_bot(app, "feishu", FeishuBot.of(settings))


FeishuDep = Annotated[FeishuBot, Depends(kept("feishu"))]


async def _vote(request: Request, press: Press, insights: Insights) -> dict[str, Any]:
    """A vote button pressed: the vote written (`take_vote`), a toast in the reply's language saying so or why not."""
    vote = button_vote(press.value)
    if vote is None:
        log.info("Feishu: a card callback that is not one of this bot's votes; ignored")
        return {}
    voted = Voted(vote.entry_id, vote.helpful, vote.question, f"feishu:{press.tenant}:{press.user}", "feishu")
    kept, said = await bot_vote(request, insights, voted, vote.lang)
    return {"toast": {"type": "success" if kept else "warning", "content": said}}


@router.post("/events", responses=_ERRORS)
async def feishu_events(
    request: Request,
    bot: FeishuDep,
    chat: ChatDep,
    events: EventsDep,
    insights: InsightsDep,
    background: BackgroundTasks,
) -> Any:
    """Take an event or a card callback from Feishu (verified with the app's token and Encrypt Key)."""
    body = await request.body()  # at most KB_MAX_BODY_BYTES (RequestLimits)
    received = bot.events.read(request.headers, body)  # else `BadFeishuRequest`, a 401 (server/error_handler.py)
    if isinstance(received, Challenge):
        return {"challenge": received.challenge}
    if isinstance(received, Other):
        log.info("Feishu event %s is not one this bot answers; acknowledged and ignored", received.event_type)
        return _TAKEN
    if received.event_id and not bot.guard.delivered.first(received.event_id):
        log.info("Feishu event %s was delivered before; not answered again", received.event_id)
        return _TAKEN
    if isinstance(received, Press):
        return await _vote(request, received, insights)
    if received.chat_type != "p2p" and not received.mentioned:
        return _TAKEN  # a group message the bot is not asked in
    kind = "text" if received.kind in ("text", "post") else received.kind  # an image, a file, a sticker: no text
    message = BotMessage(
        received.text.strip() if kind == "text" else "", (received.tenant, received.chat_id), kind=kind
    )
    send = functools.partial(bot.client.reply, received.message_id)
    background.add_task(bot.flow.answer_later, chat, events, message, base_url(request), send)
    return _TAKEN
