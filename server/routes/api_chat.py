"""`POST /api/chat`: answer a question from the FAQ, whole or streamed as server-sent events."""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any, AsyncIterator, Iterator, cast

from fastapi import APIRouter, Request

from kb import asking
from kb.cancel import Cancel
from kb.chat import ChatReply
from kb.hits import Hit
from kb.text import detect_lang

from ..deps import ChannelDep, ChatDep, EventsDep, InsightsDep, base_url
from ..permalinks import permalinks
from ..rendering.markdown import render_markdown
from ..schemas import ChatIn, ChatMode, ChatOut, ErrorOut, Lang, hit_out, see_also_out
from ..sessions import issue
from ..streaming import event_stream, read_in_thread

__all__ = ["router", "chat_out"]

log = logging.getLogger("kb.server")
router = APIRouter(prefix="/api", tags=["chat"])

_STREAM_DOC = (
    "With `Accept: text/event-stream` the answer is streamed: `event: sources` "
    '(`{"answered", "sources"}`), then `event: delta` (`{"text"}`) pieces as the answer is '
    "written, then `event: done` with the same object the JSON response has. When the LLM "
    'fails mid-answer, `done` carries the extractive answer (`mode: "fallback"`), which '
    "replaces the pieces."
)


def chat_out(reply: ChatReply, root: str, hl: str | None = None, session: str | None = None) -> ChatOut:
    return ChatOut(
        answer=reply.answer,
        answer_html=str(render_markdown(reply.answer)),
        answered=reply.answered,
        confidence=reply.confidence,
        state=reply.state,
        mode=cast(ChatMode, reply.mode),
        sources=[hit_out(h, root, hl) for h in reply.sources],
        lang=cast(Lang, reply.lang),
        session=session,
        note=reply.note or None,
        see_also=see_also_out(reply.see_also),
    )


def _event(name: str, data: Any) -> str:
    return f"event: {name}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n"


async def _sse(
    cancel: Cancel,
    sources: tuple[Hit, ...],
    answered: bool,
    events: Iterator[tuple[str, Any]],
    root: str,
    hl: str,
    session: str | None,
) -> AsyncIterator[str]:
    """The events as they are written (server/streaming.py: the LLM's stream is closed once the reader has gone)."""
    yield _event("sources", {"answered": answered, "sources": [hit_out(h, root, hl).model_dump() for h in sources]})
    reading = read_in_thread(events, cancel)
    try:
        async for name, value in reading:
            if name == "delta":
                yield _event("delta", {"text": value})
            else:
                if value.error:
                    log.warning("LLM answer replaced by the extractive one: %s", value.error)
                done = await asyncio.to_thread(chat_out, value, root, hl, session)  # Markdown rendered off the loop
                yield _event("done", done.model_dump())
    except Exception:  # the response has started; report in-band rather than cut the stream
        log.exception("chat stream failed")
        yield _event("error", {"ok": False, "error": "internal error", "status": 500})
    finally:  # the reader gone mid-stream: the events' reader closed (and with it the LLM's stream), not left to GC
        await reading.aclose()
        cancel.set()


@router.post(
    "/chat",
    response_model=ChatOut,
    description=_STREAM_DOC,
    responses={200: {"content": {"text/event-stream": {}}}, 422: {"model": ErrorOut}},
)
async def chat(
    request: Request, body: ChatIn, chat: ChatDep, insights: InsightsDep, events: EventsDep, channel: ChannelDep
) -> Any:
    """Ask a question; get the best entry's answer with its sources."""
    history = [turn.model_dump() for turn in body.history]
    root = base_url(request)
    href = permalinks(root)
    hl = body.hl or body.lang or detect_lang(body.message)
    session = issue(request, insights) if insights.feedback_on else None  # for votes from clients without cookies
    if "text/event-stream" in request.headers.get("accept", ""):
        cancel = Cancel()
        sources, answered, pieces = await asking.chat_stream(
            chat,
            events,
            body.message,
            history,
            channel=channel,
            href=href,
            hl=hl,
            about=body.about,
            cancelled=cancel,
        )
        return event_stream(_sse(cancel, sources, answered, pieces, root, hl, session))
    reply = await asking.chat(chat, events, body.message, history, channel=channel, href=href, hl=hl, about=body.about)
    if reply.error:
        log.warning("LLM answer replaced by the extractive one: %s", reply.error)
    return await asyncio.to_thread(chat_out, reply, root, hl, session)  # the answer's Markdown rendered off the loop
