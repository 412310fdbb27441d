"""What the request limits check (`RequestLimits` in server/middleware.py): query parameters that are
not UTF-8, and a body read through `CheckedBody`, which counts its bytes and checks JSON is UTF-8."""

from __future__ import annotations

import codecs
from urllib.parse import unquote_to_bytes

from fastapi import HTTPException
from starlette.datastructures import Headers
from starlette.types import Message, Receive

__all__ = ["BodyRefused", "CheckedBody", "bad_utf8_parameter", "is_json", "too_large"]


class BodyRefused(HTTPException):
    """Raised while the body is read; the route's error handler (or the middleware) answers with it."""


def bad_utf8_parameter(query_string: bytes) -> str | None:
    """The name of the first query parameter whose value is not UTF-8 once percent-decoded, if any."""
    if b"%" not in query_string and query_string.isascii():
        return None
    try:  # the usual case, decoded whole: the separators are ASCII, so no character spans two parameters
        unquote_to_bytes(query_string.replace(b"+", b" ")).decode("utf-8")
        return None
    except UnicodeDecodeError:
        pass
    for pair in query_string.split(b"&"):
        name, _, value = pair.partition(b"=")
        for part in (value, name):
            try:
                unquote_to_bytes(part.replace(b"+", b" ")).decode("utf-8")
            except UnicodeDecodeError:
                return unquote_to_bytes(name).decode("utf-8", "replace") or "query"
    return None


def is_json(headers: Headers) -> bool:
    media = headers.get("content-type", "").split(";", 1)[0].strip().lower()
    return media == "application/json" or media.endswith("+json")


def too_large(limit: int) -> str:
    return f"body: the request body is over {limit} bytes (KB_MAX_BODY_BYTES)"


class CheckedBody:
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
            raise BodyRefused(413, too_large(self.limit))
        if self._decoder is not None:
            try:
                self._decoder.decode(chunk, final=not message.get("more_body", False))
            except UnicodeDecodeError as exc:
                at = self.read - len(chunk) + exc.start
                raise BodyRefused(422, f"body: not valid UTF-8 (byte {at})") from None
        return message
