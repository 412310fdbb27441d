"""Request limits checked before a route runs: the body size, and text that is not UTF-8.

- A body over `KB_MAX_BODY_BYTES` gets 413: at once when `Content-Length` says so, else
  (a chunked body) as soon as the bytes read pass the limit, so a large body is never
  held in memory.
- A query parameter whose percent-encoded bytes are not UTF-8 (`?q=%FF`) gets 422 naming
  the parameter; without this check they would be searched as U+FFFD.
- A JSON body that is not UTF-8 gets 422 naming `body` (the framework would answer a
  vague 400).

All three answer like the app's own errors: JSON on the API, the error page on pages.
"""

from __future__ import annotations

import codecs
from urllib.parse import unquote_to_bytes

from fastapi import HTTPException
from starlette.datastructures import Headers
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from .errors import send_error

__all__ = ["RequestLimits", "BodyRefused", "bad_utf8_parameter"]


class BodyRefused(HTTPException):
    """Raised while the body is read; the route's error handler (or the middleware) answers with it."""


def bad_utf8_parameter(query_string: bytes) -> str | None:
    """The name of the first query parameter whose value is not UTF-8 once percent-decoded, if any."""
    if b"%" not in query_string and query_string.isascii():
        return None
    for pair in query_string.split(b"&"):
        name, _, value = pair.partition(b"=")
        for part in (value, name):
            try:
                unquote_to_bytes(part.replace(b"+", b" ")).decode("utf-8")
            except UnicodeDecodeError:
                return unquote_to_bytes(name).decode("utf-8", "replace") or "query"
    return None


def _is_json(headers: Headers) -> bool:
    media = headers.get("content-type", "").split(";", 1)[0].strip().lower()
    return media == "application/json" or media.endswith("+json")


class RequestLimits:
    """ASGI middleware: refuse too-large bodies (413) and text that is not UTF-8 (422).

    The body limit is read from `app.state.settings` at request time, because
    `create_app(None)` reads the settings only when the app starts.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        bad = bad_utf8_parameter(scope.get("query_string", b""))
        if bad is not None:
            await send_error(scope, receive, send, 422, f"{bad}: not valid UTF-8 (percent-encoded bytes in the URL)")
            return
        settings = getattr(getattr(scope.get("app"), "state", None), "settings", None)
        limit: int = settings.max_body_bytes if settings is not None else 0
        headers = Headers(scope=scope)
        length = headers.get("content-length", "")
        if limit and length.isdigit() and int(length) > limit:
            await send_error(scope, receive, send, 413, _too_large(limit))
            return
        checked = _CheckedBody(receive, limit, _is_json(headers))
        started = False

        async def send_watching(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, checked.receive, send_watching)
        except BodyRefused as refused:
            if started:  # the route answered before it read the whole body; nothing more to say
                raise
            await send_error(scope, receive, send, refused.status_code, refused.detail)


def _too_large(limit: int) -> str:
    return f"body: the request body is over {limit} bytes (KB_MAX_BODY_BYTES)"


class _CheckedBody:
    """The `receive` a route reads the body through: counts the bytes and checks JSON is UTF-8 as they arrive."""

    def __init__(self, receive: Receive, limit: int, json: bool):
        self._receive = receive
        self.limit = limit
        self.read = 0
        self._decoder = codecs.getincrementaldecoder("utf-8")() if json else None

    async def receive(self) -> Message:
        message = await self._receive()
        if message["type"] != "http.request":
            return message
        chunk: bytes = message.get("body", b"")
        self.read += len(chunk)
        if self.limit and self.read > self.limit:
            raise BodyRefused(413, _too_large(self.limit))
        if self._decoder is not None:
            try:
                self._decoder.decode(chunk, final=not message.get("more_body", False))
            except UnicodeDecodeError as exc:
                at = self.read - len(chunk) + exc.start
                raise BodyRefused(422, f"body: not valid UTF-8 (byte {at})") from None
        return message
