"""`POST /api/feedback`: a vote on an answer, from the search page, the chat page or the widget.

One vote per answer (an entry) per session the server issued: a second vote on the same
entry, for whichever question, replaces the first. The session is the `kb_session` cookie
the pages set, or the `session` an `/api/chat` reply carried, for clients that send no
cookies (the widget on another site); see server/sessions.py. Votes are also limited per
client (`VOTE_LIMIT`) and per client and answer (`ANSWER_VOTE_LIMIT`), and a client is given
few new sessions, so one client cannot move an answer's score.

The vote is written to the insights database before the 202 (in a worker thread): a vote
acknowledged is kept even if the server is killed right after. One the database refuses is
a 503 and is not kept, so the client knows to try again.
"""

from __future__ import annotations

from typing import Literal

from fastapi import APIRouter, HTTPException, Request
from pydantic import BaseModel, Field

from kb.asking import FEEDBACK_OFF
from kb.errors import InsightsUnavailable, QueryError
from kb.events import Voted
from kb.insights import Reason
from kb.stacktrace import fits, too_long

from ..deps import ChannelDep, InsightsDep, KBDep, SettingsDep, VoteLimitDep
from ..schemas import ErrorOut
from ..sessions import SESSION_COOKIE, session_id
from ..votes import take_vote

__all__ = ["router", "FeedbackIn", "FeedbackOut", "MAX_COMMENT", "FEEDBACK_OFF"]

router = APIRouter(prefix="/api", tags=["feedback"])

MAX_COMMENT = 1000
RETRY_AFTER = 5  # seconds, after a vote the database refused
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
    responses={
        403: {"model": ErrorOut},
        404: {"model": ErrorOut},
        422: {"model": ErrorOut},
        429: {"model": ErrorOut},
        503: {"model": ErrorOut},
    },
)
async def feedback(
    request: Request,
    body: FeedbackIn,
    kb: KBDep,
    insights: InsightsDep,
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
    vote = Voted(
        entry_id=body.entry_id,
        helpful=body.helpful,
        question=message,
        voter=f"session:{session}",
        channel=channel,
        reason=body.reason,
        comment=(body.comment or "").strip() or None,
    )
    try:
        await take_vote(request, insights, vote)  # the limit per client and answer, then written
    except InsightsUnavailable as exc:
        raise HTTPException(503, str(exc), {"Retry-After": str(RETRY_AFTER)}) from None
    return FeedbackOut()
