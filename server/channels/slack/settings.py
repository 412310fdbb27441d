"""Slack's settings: the app's signing secret, where answers are posted, whether team and channel ids are kept."""

from __future__ import annotations

from dataclasses import dataclass

from kb.settings import check_origin, setting

__all__ = ["SlackSettings"]


@dataclass(frozen=True)
class SlackSettings:
    """The Slack app's settings (`KB_SLACK_*`), one part of the server's (server/settings.py composes them)."""

    slack_signing_secret: str = setting(
        "",
        "the Slack app's signing secret; every Slack request is verified with it (empty: Slack off)",
    )
    slack_response_base: str = setting(
        "https://hooks.slack.com",
        "the only address Slack answers (a written answer, a late one, a shared entry, a thank-you) are posted to: a "
        "request's `response_url` anywhere else is not used and the refusal is logged; see [outbound "
        "calls](deployment.md#outbound-calls)",
    )
    insights_slack_ids: bool = setting(False, "also record Slack team and channel ids with questions")

    def check(self) -> None:
        """Stop start-up on a response base that is not an https origin."""
        check_origin("KB_SLACK_RESPONSE_BASE", self.slack_response_base)
