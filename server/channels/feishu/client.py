"""Sending to Feishu: a card as the reply to a message, through the open platform's HTTP API.

The client fetches the app's tenant access token (`/open-apis/auth/v3/tenant_access_token/internal`,
the App ID and App Secret in the body) when it first needs one and keeps it until ten minutes
before it expires, then sends the card (`/open-apis/im/v1/messages/{message_id}/reply`,
`msg_type: interactive`) with it. Every call goes through `Outbound`: only to KB_FEISHU_BASE_URL,
and a redirect is not followed, so the App Secret and the token reach no other host. It sends
with a blocking client, so `reply` is called from a worker thread. A reply that fails (the
platform down, slower than `TIMEOUT`, redirecting, or refusing with an error code) is logged as
one line, within a budget, and not raised: the question was acknowledged already and nothing
retries it.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from typing import Any
from urllib.parse import quote

import httpx

from ...outbound import Outbound
from ...ratelimit import LogBudget

__all__ = ["FeishuClient", "TIMEOUT", "RENEW_EARLY"]

log = logging.getLogger("kb.server")

TIMEOUT = 10.0  # seconds for each call to the open platform (the token's, the message's)
RENEW_EARLY = 600  # seconds before a tenant access token expires that a new one is fetched
TOKEN_PATH = "/open-apis/auth/v3/tenant_access_token/internal"


class FeishuRefused(Exception):
    """The open platform answered with an error code (`code: 10014, msg: app secret invalid`)."""


class FeishuClient:
    """One app's client: its App ID and App Secret, on the open platform at `base_url`."""

    def __init__(self, app_id: str, app_secret: str, base_url: str, timeout: float | None = None):
        self.base_url = base_url.rstrip("/")
        self.outbound = Outbound("Feishu", "KB_FEISHU_BASE_URL", self.base_url)
        self._credentials = {"app_id": app_id, "app_secret": app_secret}
        self._timeout = timeout or TIMEOUT
        self._token = ("", 0.0)  # the tenant access token, and the monotonic time to renew it at
        self._token_lock = threading.Lock()
        self._failures = LogBudget()

    def _call(self, path: str, body: dict[str, Any], token: str = "") -> dict[str, Any]:
        """POST `body` to the open platform's `path`; its answer when its `code` is 0, else `FeishuRefused`."""
        headers = {"Authorization": f"Bearer {token}"} if token else None
        response = self.outbound.post(f"{self.base_url}{path}", body, headers, self._timeout)
        try:
            answer = response.json()
        except ValueError:
            raise ValueError(f"HTTP {response.status_code}, not JSON: {response.text[:200]}") from None
        if not isinstance(answer, dict) or answer.get("code") != 0:
            said = answer if isinstance(answer, dict) else {}
            raise FeishuRefused(f"code: {said.get('code')}, msg: {str(said.get('msg', ''))[:200]}")
        return answer

    def _tenant_token(self) -> str:
        """The app's tenant access token, fetched when there is none or it is within `RENEW_EARLY` of expiring."""
        with self._token_lock:
            token, renew_at = self._token
            if token and time.monotonic() < renew_at:
                return token
            answer = self._call(TOKEN_PATH, self._credentials)
            token = str(answer.get("tenant_access_token", ""))
            expire = answer.get("expire")
            lasts = float(expire) if isinstance(expire, int) and not isinstance(expire, bool) else 0.0
            self._token = (token, time.monotonic() + lasts - RENEW_EARLY)
            return token

    def reply(self, message_id: str, card: dict[str, Any]) -> bool:
        """Send `card` as the reply to the message `message_id`; whether Feishu took it (a failure is logged)."""
        body = {"msg_type": "interactive", "content": json.dumps(card, ensure_ascii=False)}
        try:
            token = self._tenant_token()
        except (httpx.HTTPError, ValueError, FeishuRefused) as exc:  # a timeout, no connection, a redirect, refused
            self._not_sent(message_id, exc)
            return False
        try:
            self._call(f"/open-apis/im/v1/messages/{quote(message_id, safe='')}/reply", body, token)
        except (httpx.HTTPError, ValueError) as exc:
            self._not_sent(message_id, exc)
            return False
        except FeishuRefused as exc:
            self._failures.warning(
                log, "Feishu: the answer to message %s was refused (%s): %s", message_id, self.base_url, exc
            )
            return False
        return True

    def _not_sent(self, message_id: str, exc: Exception) -> None:
        self._failures.warning(
            log,
            "Feishu: the answer to message %s was not sent (%s): %s: %s",
            message_id,
            self.base_url,
            type(exc).__name__,
            exc,
        )
