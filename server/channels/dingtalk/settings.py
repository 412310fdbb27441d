"""DingTalk's settings: the app's AppKey and AppSecret, and the only address late answers are posted to."""

from __future__ import annotations

from dataclasses import dataclass

from kb.settings import check_origin, setting

from ..chat_ids import ChatIdSettings

__all__ = ["DingTalkSettings"]


@dataclass(frozen=True)
class DingTalkSettings(ChatIdSettings):
    """The DingTalk app's settings (`KB_DINGTALK_*`), one part of the server's (server/settings.py composes them)."""

    dingtalk_app_key: str = setting(
        "",
        "the DingTalk app's AppKey (its robot's `robotCode`); with `KB_DINGTALK_APP_SECRET` it turns the robot on (see "
        "[DingTalk](channels.md#dingtalk-the-faq-robot)) (empty: DingTalk off)",
    )
    dingtalk_app_secret: str = setting("", "the app's AppSecret, which signs every message DingTalk sends the robot")
    dingtalk_webhook_base: str = setting(
        "https://oapi.dingtalk.com",
        "the only address the robot posts late answers to: a message's `sessionWebhook` anywhere else is not used",
    )

    def check(self) -> None:
        """Stop start-up on a webhook base that is not an https origin."""
        check_origin("KB_DINGTALK_WEBHOOK_BASE", self.dingtalk_webhook_base)
