"""Slack request signatures: `v0=` + hex HMAC-SHA256 of `v0:{timestamp}:{raw body}`, checked before parsing.

See Slack's "Verifying requests from Slack". A request is refused when either header is
missing, the timestamp is more than five minutes from now (a replay), or the signature
does not match; the comparison takes the same time whichever byte differs.
"""

from __future__ import annotations

import hashlib
import hmac
import time

from ...exceptions import ServerError
from ..timestamps import off_by, said

__all__ = ["BadSlackSignature", "sign", "verify", "MAX_AGE_SECONDS", "MAX_TIMESTAMP_DIGITS"]

MAX_AGE_SECONDS = 300
MAX_TIMESTAMP_DIGITS = 12  # Unix seconds have 10 digits until the year 2286


class BadSlackSignature(ServerError):
    """A request that does not carry a valid, fresh Slack signature; the message says which part failed."""

    status = 401
    channel = "slack"
    sender = "Slack request to {path}"
    refusal = "not a valid Slack request"


def sign(secret: str, timestamp: str, body: bytes) -> str:
    """The `X-Slack-Signature` value Slack sends for this timestamp and body."""
    base = b"v0:" + timestamp.encode("ascii") + b":" + body
    return "v0=" + hmac.new(secret.encode("utf-8"), base, hashlib.sha256).hexdigest()


def verify(secret: str, timestamp: str | None, signature: str | None, body: bytes, now: float | None = None) -> None:
    """Raise `BadSlackSignature` unless `signature` signs `body` at a `timestamp` within five minutes of `now`."""
    if not timestamp:
        raise BadSlackSignature("the X-Slack-Request-Timestamp header is missing")
    if not signature:
        raise BadSlackSignature("the X-Slack-Signature header is missing")
    if not (timestamp.isascii() and timestamp.isdigit()):
        raise BadSlackSignature(f"X-Slack-Request-Timestamp {timestamp[:40]!r} is not a whole number of seconds")
    if len(timestamp) > MAX_TIMESTAMP_DIGITS:
        raise BadSlackSignature(
            f"X-Slack-Request-Timestamp has {len(timestamp)} digits; a Unix time in seconds has at most {MAX_TIMESTAMP_DIGITS}"
        )
    age = off_by(int(timestamp), time.time() if now is None else now, MAX_AGE_SECONDS)
    if age is not None and age > 0:
        raise BadSlackSignature(
            f"X-Slack-Request-Timestamp is {said(age)}; Slack requests older than {MAX_AGE_SECONDS} s "
            "are refused (a replay, or this server's clock is wrong)"
        )
    if age is not None:
        raise BadSlackSignature(
            f"X-Slack-Request-Timestamp is {said(age)}; more than {MAX_AGE_SECONDS} s ahead "
            "is refused (is this server's clock behind?)"
        )
    expected = sign(secret, timestamp, body)
    if not hmac.compare_digest(expected.encode("ascii"), signature.encode("utf-8", "replace")):
        raise BadSlackSignature(
            "X-Slack-Signature does not match the body (is KB_SLACK_SIGNING_SECRET the app's secret?)"
        )
