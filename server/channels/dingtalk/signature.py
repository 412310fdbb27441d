"""DingTalk robot signatures: the `timestamp` and `sign` headers of each message DingTalk posts to the robot.

`sign` is the Base64 HMAC-SHA256, keyed with the app's AppSecret, of the `timestamp` header
(milliseconds), a line break and the AppSecret (DingTalk's "receive messages" guide). A
message is refused when either header is missing, the timestamp is more than an hour from
now (DingTalk's own rule), or the signature does not match; the comparison takes the same
time whichever byte differs. The signature covers the timestamp, not the body: a message
replayed within the hour is caught by its `msgId` (server/bots/delivery_ids.py).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import time

from ...exceptions import ServerError
from ..timestamps import off_by, said, whole_number

__all__ = ["BadDingTalkSignature", "sign", "verify", "MAX_AGE_MS"]

MAX_AGE_MS = 3600 * 1000
MAX_TIMESTAMP_DIGITS = 15  # Unix milliseconds have 13 digits until the year 2286


class BadDingTalkSignature(ServerError):
    """A message that does not carry a valid, fresh DingTalk signature; the message says which part failed."""

    status = 401
    channel = "dingtalk"
    sender = "DingTalk request to {path}"
    refusal = "not a valid DingTalk request"


def sign(secret: str, timestamp: str) -> str:
    """The `sign` header DingTalk sends with this `timestamp`."""
    digest = hmac.new(secret.encode("utf-8"), f"{timestamp}\n{secret}".encode("utf-8"), hashlib.sha256).digest()
    return base64.b64encode(digest).decode("ascii")


def verify(secret: str, timestamp: str | None, signature: str | None, now: float | None = None) -> None:
    """Raise `BadDingTalkSignature` unless `signature` signs `timestamp`, within an hour of `now` (seconds)."""
    if not timestamp:
        raise BadDingTalkSignature("the timestamp header is missing")
    if not signature:
        raise BadDingTalkSignature("the sign header is missing")
    sent_ms = whole_number(timestamp, MAX_TIMESTAMP_DIGITS)
    if sent_ms is None:
        raise BadDingTalkSignature(f"timestamp {timestamp[:40]!r} is not a Unix time in milliseconds")
    age = off_by(sent_ms / 1000, time.time() if now is None else now, MAX_AGE_MS / 1000)
    if age is not None:
        raise BadDingTalkSignature(
            f"timestamp is {said(age)}; DingTalk messages more than an hour away are refused "
            "(a replay, or this server's clock is wrong)"
        )
    if not hmac.compare_digest(sign(secret, timestamp).encode("ascii"), signature.encode("utf-8", "replace")):
        raise BadDingTalkSignature("sign does not match the timestamp (is KB_DINGTALK_APP_SECRET the app's AppSecret?)")
