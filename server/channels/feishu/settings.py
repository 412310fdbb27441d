"""Feishu's (Lark's) settings: the app's credentials, its Encrypt Key and the open platform it posts through."""

from __future__ import annotations

from dataclasses import dataclass

from kb.settings import check_origin, setting

from ..chat_ids import ChatIdSettings

__all__ = ["FeishuSettings"]


@dataclass(frozen=True)
class FeishuSettings(ChatIdSettings):
    """The Feishu app's settings (`KB_FEISHU_*`), one part of the server's (server/settings.py composes them)."""

    feishu_app_id: str = setting(
        "",
        "the Feishu (Lark) app's App ID; with `KB_FEISHU_APP_SECRET` and `KB_FEISHU_VERIFICATION_TOKEN` it turns the "
        "bot on (one without the others stops start-up, naming the missing one; see "
        "[Feishu](channels.md#feishu-lark-the-faq-bot)) (empty: Feishu off)",
    )
    feishu_app_secret: str = setting("", "the app's App Secret, for its tenant access token")
    feishu_verification_token: str = setting(
        "",
        "the app's Verification Token, which every event and card callback must carry",
    )
    feishu_encrypt_key: str = setting(
        "",
        "the app's Encrypt Key: events come encrypted and signed, and a signed request more than 5 minutes old is "
        "refused (recommended) (empty: none)",
    )
    feishu_base_url: str = setting(
        "https://open.feishu.cn",
        "the open platform the bot's cards are sent through: `https://open.larksuite.com` for a Lark app",
    )

    def check(self) -> None:
        """Stop start-up on an open platform that is not an https origin."""
        check_origin("KB_FEISHU_BASE_URL", self.feishu_base_url)
