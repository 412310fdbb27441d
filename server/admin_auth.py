"""Who may see the insights and act as the admin: the admin token (`KB_ADMIN_TOKEN`), sent as a bearer token or kept
in a sign-in cookie.

Without a token set, the admin routes answer 404. The cookie holds a keyed hash of the
token, not the token, so changing the token signs every browser out. One rule for every
action that changes something: the bearer token, or the sign-in cookie together with the
form token of a page this site served, posted from this site (`check_admin_form`). The
`/admin/` JSON routes have no form, so they take the bearer token only (`check_bearer`).
Reading (the insights page, its CSV exports) takes either.
"""

from __future__ import annotations

import hashlib
import hmac
from urllib.parse import urlsplit

from fastapi import HTTPException, Request, Response

from .forms import check_form
from .settings import ServerSettings

__all__ = [
    "COOKIE",
    "COOKIE_PATH",
    "check_on",
    "signed_in",
    "token_matches",
    "check_admin",
    "check_bearer",
    "check_admin_form",
    "same_origin",
    "sign_in",
    "sign_out",
]

COOKIE = "kb_admin"
COOKIE_PATH = "/insights"
COOKIE_MAX_AGE = 7 * 24 * 3600
_OFF = "the admin routes (/insights, /admin) are off: set KB_ADMIN_TOKEN to a secret token to turn them on"
BEARER_NEEDED = (
    "this needs the admin token: send the header `Authorization: Bearer <KB_ADMIN_TOKEN>` "
    "(the /insights sign-in cookie is not taken here)"
)
_NEEDED = "send the header `Authorization: Bearer <KB_ADMIN_TOKEN>` (or, for the insights, sign in at /insights)"


def check_on(settings: ServerSettings) -> None:
    """404 while no admin token is set."""
    if not settings.admin_token:
        raise HTTPException(404, _OFF)


def _cookie_value(token: str) -> str:
    return hmac.new(token.encode("utf-8"), b"kb insights sign-in", hashlib.sha256).hexdigest()


def token_matches(settings: ServerSettings, given: str) -> bool:
    token = settings.admin_token
    return bool(token) and hmac.compare_digest(given.encode("utf-8"), token.encode("utf-8"))


def bearer(request: Request, settings: ServerSettings) -> bool:
    """Whether the request carries the admin token as `Authorization: Bearer`."""
    scheme, _, credentials = request.headers.get("authorization", "").partition(" ")
    return scheme.lower() == "bearer" and token_matches(settings, credentials.strip())


def signed_in(request: Request, settings: ServerSettings) -> bool:
    """A matching bearer token, or the cookie a sign-in set."""
    return bearer(request, settings) or _cookie_signed_in(request, settings)


def _cookie_signed_in(request: Request, settings: ServerSettings) -> bool:
    cookie, token = request.cookies.get(COOKIE, ""), settings.admin_token
    # As bytes: a cookie is whatever the client sent (`kb_admin=é`), and compare_digest takes only ASCII str.
    expected = _cookie_value(token).encode("ascii") if token else b""
    return bool(cookie) and bool(token) and hmac.compare_digest(cookie.encode("utf-8", "replace"), expected)


def check_admin(request: Request, settings: ServerSettings) -> None:
    """For the admin routes (`AdminDep`): 404 while off, 401 without the token."""
    check_on(settings)
    if not signed_in(request, settings):
        raise HTTPException(401, f"this needs the admin token: {_NEEDED}", headers={"WWW-Authenticate": "Bearer"})


def check_bearer(request: Request, settings: ServerSettings) -> None:
    """For the `/admin/` JSON routes (`BearerDep`): 404 while off, 401 without the bearer token (a cookie is not enough)."""
    check_on(settings)
    if not bearer(request, settings):
        raise HTTPException(401, BEARER_NEEDED, headers={"WWW-Authenticate": "Bearer"})


def check_admin_form(request: Request, settings: ServerSettings, form_token: str) -> None:
    """For the insights' forms that change something (`AdminFormDep`): 404 while off; 403 from another site's page;
    then the bearer token, or the sign-in cookie with this browser's form token (401 with neither, 403 without the
    form token)."""
    check_on(settings)
    same_origin(request)
    if bearer(request, settings):
        return
    if not _cookie_signed_in(request, settings):
        raise HTTPException(401, f"this needs the admin token: {_NEEDED}", headers={"WWW-Authenticate": "Bearer"})
    check_form(request, form_token)


def same_origin(request: Request) -> None:
    """403 for a form posted from another site's page. The sign-in cookie is SameSite=Strict, so
    a browser does not send it with such a post anyway; this says so instead of asking to sign in."""
    origin = request.headers.get("origin")
    if origin and urlsplit(origin).netloc != request.headers.get("host", ""):
        raise HTTPException(403, f"a form from {origin[:200]} may not change the insights; use the /insights page")


def sign_in(response: Response, request: Request, settings: ServerSettings) -> None:
    response.set_cookie(
        COOKIE,
        _cookie_value(settings.admin_token),
        max_age=COOKIE_MAX_AGE,
        path=COOKIE_PATH,
        httponly=True,
        samesite="strict",
        secure=request.url.scheme == "https",
    )


def sign_out(response: Response) -> None:
    response.delete_cookie(COOKIE, path=COOKIE_PATH, httponly=True, samesite="strict")
