"""The security headers, in one place: those on every response, and those on every page."""

from __future__ import annotations

__all__ = ["SECURITY_HEADERS", "PAGE_HEADERS", "ON_EVERY_RESPONSE"]

# Every response carries these, JSON, errors and static files included (`SecurityHeaders`
# in server/middleware.py; an error's response in server/error_handler.py): `nosniff` keeps a
# browser from running a JSON answer or a text file as a script or page whatever its
# content; `Referrer-Policy` sends other sites only this server's origin, never the query.
SECURITY_HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "strict-origin-when-cross-origin",
}

# The same as ASGI header pairs, lower-case bytes, for the middleware.
ON_EVERY_RESPONSE = tuple((name.lower().encode(), value.encode()) for name, value in SECURITY_HEADERS.items())

# Pages (server/rendering/templates.py) load scripts, styles and fonts from this server only;
# nothing inline, no CDN. They differ by the reader's language, from the header or the cookie.
PAGE_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' https: data:; "
        "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'self'"
    ),
    "Vary": "Accept-Language, Cookie",
}
