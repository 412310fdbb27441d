"""Forms the site's own pages post (the chat, insights sign-in and sign-out): a token ties each to a page this site served.

Another site cannot make a reader's browser post them. A page with such a form sets a
random token in the `kb_form` cookie (HttpOnly, `SameSite=Strict`) and puts the same value
in a hidden field `form_token`; a post is taken only when the two match, and when its
`Origin`, if the browser sends one, is this site. Anything else is a 403 that says to
reload the page.
"""

from __future__ import annotations

import hmac
import re
import secrets
from typing import Annotated, TypeVar
from urllib.parse import urlsplit

from fastapi import Form, HTTPException, Request, Response

from .rendering.strings import Translator
from .rendering.templates import request_lang

__all__ = ["FORM_COOKIE", "FORM_FIELD", "form_token", "with_form_token", "check_form", "from_other_site"]

FORM_COOKIE = "kb_form"
FORM_FIELD = "form_token"  # the parameter of `check_form`
_SHAPE = re.compile(r"[A-Za-z0-9_-]{32}")
R = TypeVar("R", bound=Response)


def from_other_site(request: Request) -> bool:
    """Whether the request names another site as its `Origin` (`null` included); False when it sends none."""
    origin = request.headers.get("origin")
    return origin is not None and urlsplit(origin).netloc != request.headers.get("host", "")


def form_token(request: Request) -> str:
    """The token for this browser's forms: the one in its cookie, else a new one (set by `with_form_token`)."""
    token = request.cookies.get(FORM_COOKIE, "")
    if not _SHAPE.fullmatch(token):
        token = getattr(request.state, "new_form_token", "") or secrets.token_urlsafe(24)
        request.state.new_form_token = token
    return token


def with_form_token(request: Request, response: R) -> R:
    """A page with a form, setting the token cookie if `form_token` had to make a new one."""
    token = getattr(request.state, "new_form_token", "")
    if token:
        response.set_cookie(
            FORM_COOKIE, token, path="/", httponly=True, samesite="strict", secure=request.url.scheme == "https"
        )
    return response


def check_form(request: Request, form_token: Annotated[str, Form()] = "") -> None:
    """403 unless the posted form carries this browser's token (its `form_token` field) and comes from this site.

    A dependency (`FormTokenDep`): the route declares its other fields with `Form()`."""
    cookie = request.cookies.get(FORM_COOKIE, "")
    sent = form_token.encode("utf-8", "replace")
    matches = bool(_SHAPE.fullmatch(cookie)) and hmac.compare_digest(sent, cookie.encode())
    if from_other_site(request) or not matches:
        raise HTTPException(403, Translator(request_lang(request))("form_expired"))
