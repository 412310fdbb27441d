"""Posting to a DingTalk conversation: a message to the `sessionWebhook` the question came with.

A `sessionWebhook` lets the robot post to the conversation a message came from, without a
token, until `sessionWebhookExpiredTime` (about 90 minutes). It comes in a signed message,
but it is still a URL read from a request: the robot posts only to URLs under
KB_DINGTALK_WEBHOOK_BASE (DingTalk's `https://oapi.dingtalk.com`), so no message can make
it post anywhere else. A post that fails (DingTalk down, slower than `POST_TIMEOUT`, an error
code) is logged as one line, within a budget, and not raised: nothing retries it.
"""

from __future__ import annotations

import logging
import time
from typing import Any

import httpx

from ...outbound import Outbound, on_base
from ...ratelimit import LogBudget

__all__ = ["SessionWebhook", "on_base", "POST_TIMEOUT"]

log = logging.getLogger("kb.server")

POST_TIMEOUT = 10.0  # seconds for a post to a sessionWebhook


class SessionWebhook:
    """Posts messages to the session webhooks under `base`."""

    def __init__(self, base: str):
        self.base = base
        self.outbound = Outbound("DingTalk", "KB_DINGTALK_WEBHOOK_BASE", base)
        self._failures = LogBudget()

    def usable(self, url: str, expires_ms: int, now: float | None = None) -> bool:
        """Whether a message's webhook may be posted to: given, on the base, and not expired."""
        if not url:
            return False
        if not self.outbound.allows(url):
            self._failures.warning(
                log,
                "DingTalk: sessionWebhook %r is not under KB_DINGTALK_WEBHOOK_BASE (%s); nothing posted",
                url[:200],
                self.base,
            )
            return False
        if expires_ms and expires_ms < (time.time() if now is None else now) * 1000:
            self._failures.warning(log, "DingTalk: the sessionWebhook expired; nothing posted")
            return False
        return True

    def post(self, url: str, message: dict[str, Any]) -> bool:
        """Post `message` to `url` (checked with `usable` first); whether DingTalk took it (a failure is logged)."""
        try:
            response = self.outbound.post(url, message, timeout=POST_TIMEOUT)
            answer = response.json() if response.status_code < 400 else {}
        except (httpx.HTTPError, ValueError) as exc:  # a timeout, a refused connection, a body not JSON
            self._failures.warning(
                log, "DingTalk: posting to the sessionWebhook failed: %s: %s", type(exc).__name__, exc
            )
            return False
        answer = answer if isinstance(answer, dict) else {}
        if response.status_code >= 400 or answer.get("errcode", 0) != 0:
            said = answer.get("errmsg") or response.text[:200]
            self._failures.warning(log, "DingTalk: the sessionWebhook answered HTTP %s: %s", response.status_code, said)
            return False
        return True
