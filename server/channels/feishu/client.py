"""Sending to Feishu: a card as the reply to a message, through lark-oapi's client for the open platform.

The SDK fetches the app's tenant access token (`/open-apis/auth/v3/tenant_access_token/internal`)
when it first needs one and keeps it until ten minutes before it expires, then sends the card
(`/open-apis/im/v1/messages/{message_id}/reply`, `msg_type: interactive`) on the domain given
(`KB_FEISHU_BASE_URL`). It sends with `requests`, which blocks, so `reply` is called from a
worker thread. A reply that fails (the platform down, slower than `TIMEOUT`, or refusing
with an error code) is logged as one line, within a budget, and not raised: the question was
acknowledged already and nothing retries it.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from ...ratelimit import LogBudget

__all__ = ["FeishuClient", "TIMEOUT"]

log = logging.getLogger("kb.server")

TIMEOUT = 10.0  # seconds for each call to the open platform (the token's, the message's)


class FeishuClient:
    """One app's client: its App ID and App Secret, on the open platform at `base_url`."""

    def __init__(self, app_id: str, app_secret: str, base_url: str, timeout: float | None = None):
        import lark_oapi as lark  # a 3-second import: only when the Feishu bot is on

        self.base_url = base_url
        self._client = (
            lark.Client.builder()
            .app_id(app_id)
            .app_secret(app_secret)
            .domain(base_url)
            .timeout(timeout or TIMEOUT)
            .log_level(lark.LogLevel.WARNING)
            .build()
        )
        self._failures = LogBudget()

    def reply(self, message_id: str, card: dict[str, Any]) -> bool:
        """Send `card` as the reply to the message `message_id`; whether Feishu took it (a failure is logged)."""
        from lark_oapi.api.im.v1 import ReplyMessageRequest, ReplyMessageRequestBody

        body = ReplyMessageRequestBody.builder().msg_type("interactive").content(json.dumps(card, ensure_ascii=False))
        request = ReplyMessageRequest.builder().message_id(message_id).request_body(body.build()).build()
        try:
            response = self._client.im.v1.message.reply(request)
        except Exception as exc:  # requests' timeouts and refused connections, the token refused, a body not JSON
            self._failures.warning(
                log,
                "Feishu: the answer to message %s was not sent (%s): %s: %s",
                message_id,
                self.base_url,
                type(exc).__name__,
                exc,
            )
            return False
        if not response.success():
            self._failures.warning(
                log,
                "Feishu: the answer to message %s was refused (%s): code %s: %s",
                message_id,
                self.base_url,
                response.code,
                response.msg,
            )
            return False
        return True
