"""`POST /api/feedback`: a vote on an answer, from the search page, the chat page or the widget.

One vote per answer (an entry) per session the server issued: a second vote on the same
entry, for whichever question, replaces the first. The session is the `kb_session` cookie
the pages set, or the `session` an `/api/chat` reply carried, for clients that send no
cookies (the widget on another site); see server/sessions.py. Votes are also limited per
client (`VOTE_LIMIT`).
"""

from __future__ import annotations

from typing import Literal

from fastapi import APIRouter, HTTPException, Request
from pydantic import BaseModel, Field

from kb.errors import QueryError
from kb.events import Voted
from kb.insights import Reason
from kb.stacktrace import fits, too_long

from ..deps import ChannelDep, EventsDep, InsightsDep, KBDep, SettingsDep, VoteLimitDep
from ..schemas import ErrorOut
from ..sessions import SESSION_COOKIE, session_id

__all__ = ["router", "FeedbackIn", "FeedbackOut", "MAX_COMMENT", "FEEDBACK_OFF"]

router = APIRouter(prefix="/api", tags=["feedback"])

MAX_COMMENT = 1000
FEEDBACK_OFF = "feedback is off: votes cannot be recorded on this server (its log says why)"
_NO_SESSION = (
    "session: a vote needs a session this server issued: the kb_session cookie its pages set, "
    "or the `session` of an /api/chat reply"
)


class FeedbackIn(BaseModel):
    entry_id: str = Field(min_length=1, max_length=200, description="the entry given as the answer")
    helpful: bool
    message: str = Field(description="the question it answered, as asked")
    reason: Reason | None = Field(default=None, description="why it did not help (with `helpful: false` only)")
    comment: str | None = Field(default=None, max_length=MAX_COMMENT, description="a free-text comment")
    session: str | None = Field(
        default=None,
        max_length=128,
        description="the `session` of an /api/chat reply, for clients that send no cookies (the widget)",
    )


class FeedbackOut(BaseModel):
    ok: Literal[True] = True


@router.post(
    "/feedback",
    status_code=202,
    response_model=FeedbackOut,
    responses={403: {"model": ErrorOut}, 404: {"model": ErrorOut}, 422: {"model": ErrorOut}, 503: {"model": ErrorOut}},
)
async def feedback(
    request: Request,
    body: FeedbackIn,
    kb: KBDep,
    insights: InsightsDep,
    events: EventsDep,
    settings: SettingsDep,
    channel: ChannelDep,
    _: VoteLimitDep,
) -> FeedbackOut:
    """Vote an answer helpful or not (one vote per answer per session)."""
    if not insights.feedback_on:
        raise HTTPException(503, FEEDBACK_OFF)  # the reason (a path, SQLite's error) was logged at start-up
    kb.get(body.entry_id)  # an unknown entry is a 404
    message = body.message.strip()
    if not message:
        raise QueryError("message", "the question the answer was for is empty")
    if not fits(message, settings.max_query_chars):  # a pasted trace may be longer, as in a search
        raise QueryError("message", too_long("question", len(message), settings.max_query_chars))
    if body.helpful and body.reason is not None:
        raise QueryError("reason", f"{body.reason!r} is a reason for `helpful: false`; this vote is helpful")
    session = session_id(insights, body.session if body.session is not None else request.cookies.get(SESSION_COOKIE))
    if session is None:
        raise HTTPException(403, _NO_SESSION)
    events.publish(
        Voted(
            entry_id=body.entry_id,
            helpful=body.helpful,
            question=message,
            voter=f"session:{session}",
            channel=channel,
            reason=body.reason,
            comment=(body.comment or "").strip() or None,
        )
    )
    return FeedbackOut()
