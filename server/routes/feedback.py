"""`POST /api/feedback`: a vote on an answer, from the search page, the chat page or the widget.

One vote per answer (an entry given for a question) per browser session: a second vote
replaces the first. The session is the `kb_session` cookie, set on the first vote, or an
id the client sends when it sends no cookies (the widget on another site). Only a keyed
hash of it is stored.
"""

from __future__ import annotations

import secrets
from typing import Literal

from fastapi import APIRouter, HTTPException, Request, Response
from pydantic import BaseModel, Field

from kb.errors import QueryError
from kb.insights import Reason, Vote

from ..deps import ChannelDep, KBDep, RecorderDep, SettingsDep
from ..schemas import ErrorOut

__all__ = ["router", "FeedbackIn", "FeedbackOut", "SESSION_COOKIE", "MAX_COMMENT"]

router = APIRouter(prefix="/api", tags=["feedback"])

SESSION_COOKIE = "kb_session"
MAX_COMMENT = 1000


class FeedbackIn(BaseModel):
    entry_id: str = Field(min_length=1, max_length=200, description="the entry given as the answer")
    helpful: bool
    message: str = Field(description="the question it answered, as asked")
    reason: Reason | None = Field(default=None, description="why it did not help (with `helpful: false` only)")
    comment: str | None = Field(default=None, max_length=MAX_COMMENT, description="a free-text comment")
    session: str | None = Field(
        default=None, min_length=8, max_length=128,
        description="an id the client keeps for one browser session, when it sends no cookies",
    )


class FeedbackOut(BaseModel):
    ok: Literal[True] = True


@router.post(
    "/feedback", status_code=202, response_model=FeedbackOut,
    responses={404: {"model": ErrorOut}, 422: {"model": ErrorOut}, 503: {"model": ErrorOut}},
)
async def feedback(
    request: Request, response: Response, body: FeedbackIn, kb: KBDep, recorder: RecorderDep,
    settings: SettingsDep, channel: ChannelDep,
) -> FeedbackOut:
    """Vote an answer helpful or not (one vote per answer per browser session)."""
    if not recorder.feedback_on:
        raise HTTPException(503, f"feedback is off: {recorder.problem}")
    kb.get(body.entry_id)  # an unknown entry is a 404
    message = body.message.strip()
    if not message:
        raise QueryError("message", "the question the answer was for is empty")
    if len(message) > settings.max_query_chars:
        limit = settings.max_query_chars
        raise QueryError("message", f"the question is {len(message)} characters; the limit is {limit}")
    if body.helpful and body.reason is not None:
        raise QueryError("reason", f"{body.reason!r} is a reason for `helpful: false`; this vote is helpful")
    if body.session:
        identity = f"client:{body.session}"
    else:
        cookie = request.cookies.get(SESSION_COOKIE, "")
        if not (8 <= len(cookie) <= 128):
            cookie = secrets.token_urlsafe(18)
            response.set_cookie(  # no max-age: it lasts the browser session
                SESSION_COOKIE, cookie, path="/", httponly=True, samesite="lax", secure=request.url.scheme == "https"
            )
        identity = f"cookie:{cookie}"
    recorder.vote(Vote(
        entry_id=body.entry_id, helpful=body.helpful, question=message, voter=recorder.pseudonym(identity),
        channel=channel, reason=body.reason, comment=(body.comment or "").strip() or None,
    ))
    return FeedbackOut()
