"""Where the server may post to: each channel's allowed bases, no redirect followed, nothing sent elsewhere.

Every call a channel makes to a platform goes through an `Outbound`: Slack's answers to a
request's `response_url` (under KB_SLACK_RESPONSE_BASE, `https://hooks.slack.com`), Feishu's
open platform (KB_FEISHU_BASE_URL) and DingTalk's session webhooks (KB_DINGTALK_WEBHOOK_BASE).
A URL read from a request is posted to only when it is under its channel's base (same scheme,
host and port, below the base's path, no user name); a platform's redirect is never followed,
so a body carrying a credential (Feishu's App Secret, a bearer token) reaches only the base it
was meant for. The bases are https, or http on this machine for a test's stand-in (the settings
check that).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

import httpx

__all__ = ["Outbound", "OutboundRefused", "on_base"]


def on_base(url: str, base: str) -> bool:
    """Whether `url` is on the origin `base` (same scheme, host and port), below its path."""
    given, allowed = urlsplit(url), urlsplit(base)
    return (
        (given.scheme, given.netloc.lower()) == (allowed.scheme, allowed.netloc.lower())
        and not given.username
        and given.path.startswith(allowed.path.rstrip("/") + "/")
    )


class OutboundRefused(httpx.HTTPError):
    """A post not made (its URL is not under the channel's base) or a redirect not followed.

    An `httpx.HTTPError`, so a caller that logs a failed post logs this one the same way.
    """


class Outbound:
    """One channel's posts: only to URLs under `base` (the setting `setting`), never following a redirect."""

    def __init__(self, channel: str, setting: str, base: str):
        self.channel = channel
        self.setting = setting
        self.base = base

    def allows(self, url: str) -> bool:
        """Whether `url` may be posted to."""
        return on_base(url, self.base)

    def refusal(self, url: str) -> str:
        """Why `url` is not posted to, for a log line."""
        return f"{url[:200]!r} is not under {self.setting} ({self.base}); nothing posted"

    def post(self, url: str, body: Any, headers: dict[str, str] | None = None, timeout: float = 10.0) -> httpx.Response:
        """POST `body` as JSON to `url`; `OutboundRefused` when `url` is not allowed or the answer is a redirect."""
        if not self.allows(url):
            raise OutboundRefused(self.refusal(url))
        response = httpx.post(url, json=body, headers=headers, timeout=timeout, follow_redirects=False)
        if response.is_redirect:
            where = response.headers.get("location", "")[:200]
            raise OutboundRefused(f"answered HTTP {response.status_code} to {where!r}; redirects are not followed")
        return response
