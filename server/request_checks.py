"""The request checks (`RequestLimits` in server/middleware.py): query parameters that are
not UTF-8, and a body read through `CheckedBody`, which counts its bytes and checks JSON is UTF-8;
and how deep a platform's JSON may nest (`too_deep`), checked before it is parsed."""

from __future__ import annotations

import codecs
import re
from urllib.parse import unquote_to_bytes

from fastapi import HTTPException
from starlette.datastructures import Headers
from starlette.types import Message, Receive

__all__ = ["BodyRefused", "CheckedBody", "MAX_JSON_DEPTH", "bad_utf8_parameter", "is_json", "too_deep", "too_large"]

# How deep a platform's JSON (Slack's, Feishu's, DingTalk's) may nest its arrays and objects:
# their payloads go 5 or 6 levels down; Python's parser, and what walks the result, fail
# long before 1,000.
MAX_JSON_DEPTH = 32
_STRUCTURE = re.compile(r'["\\\[\]{}]')  # what changes the depth or whether it is inside a string


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


def too_deep(text: str | bytes, limit: int = MAX_JSON_DEPTH) -> bool:
    """Whether the JSON `text` nests arrays and objects deeper than `limit`, brackets inside strings not counted.

    Linear in the text, and it stops at the first level past `limit`; a text that is not JSON
    gets an answer too (the parser then says what is wrong with it).
    """
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    depth, in_string, escaped_at = 0, False, -1
    for found in _STRUCTURE.finditer(text):
        char, at = found.group(), found.start()
        if in_string:
            if at == escaped_at:
                continue
            if char == "\\":
                escaped_at = at + 1
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            if depth > limit:
                return True
        elif char in "]}":
            depth -= 1
    return False
