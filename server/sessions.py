"""Voting sessions: ids the server issues and signs, so that a vote counts once per answer per session.

A session is a random id with a keyed hash of it (`<id>.<signature>`), signed with the
insights store's key (the same for every worker sharing the database). A client cannot
make one up, and one it sends that the server did not sign is refused. Browsers on this
site get theirs in the `kb_session` cookie (HttpOnly, for the browser session) with the
pages that show vote buttons; the widget, which calls from other sites without cookies,
gets one in each `/api/chat` reply (`session`) and sends it back with its votes. Only a
keyed hash of the id is stored with a vote.

New sessions are cheap to ask for (any chat reply, any page without the cookie), so each
client address is given at most `SESSION_LIMIT` new ones an hour; beyond that it is given
the one session its address shares for the hour (a keyed hash of the address and the hour),
so minting more sessions adds no votes.
"""

from __future__ import annotations

import hmac
import re
import secrets
import time
from typing import TypeVar

from fastapi import Request, Response
from starlette.requests import HTTPConnection

from kb.insights.service import Insights

from .ratelimit import ClientLimit, client_address

__all__ = ["SESSION_COOKIE", "issue", "session_id", "with_session"]

SESSION_COOKIE = "kb_session"
R = TypeVar("R", bound=Response)
_SHAPE = re.compile(r"[A-Za-z0-9_-]{24}\.[0-9a-f]{32}")


def _signature(insights: Insights, session: str) -> str:
    return insights.pseudonym(f"voting session token:{session}")


def issue(connection: HTTPConnection, insights: Insights) -> str:
    """A new signed session (votes must be taken: `insights.feedback_on`); the shared one of the client's
    address for this hour once it has been given `SESSION_LIMIT` new ones."""
    limit: ClientLimit = connection.app.state.session_limit
    if limit.take(connection.scope):
        hour = int(time.time() // limit.period)
        session = insights.pseudonym(f"shared voting session:{client_address(connection.scope)}:{hour}")[:24]
    else:
        session = secrets.token_urlsafe(18)
    return f"{session}.{_signature(insights, session)}"


def session_id(insights: Insights, token: str | None) -> str | None:
    """The id in a session this server signed; None for anything else."""
    if not token or not _SHAPE.fullmatch(token) or not insights.feedback_on:
        return None
    session, _, signature = token.partition(".")
    return session if hmac.compare_digest(signature, _signature(insights, session)) else None


def with_session(request: Request, response: R, insights: Insights) -> R:
    """A page with vote buttons, setting the session cookie unless the browser has a valid one already."""
    if insights.feedback_on and not session_id(insights, request.cookies.get(SESSION_COOKIE)):
        response.set_cookie(  # no max-age: it lasts the browser session
            SESSION_COOKIE,
            issue(request, insights),
            path="/",
            httponly=True,
            samesite="lax",
            secure=request.url.scheme == "https",
        )
    return response
