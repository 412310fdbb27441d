"""Feishu (Lark): the bot's events and card callbacks (routes in `routes.py`; reading and verifying them, cards, the API client)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..channel import Channel
from ..plugin import ChannelPlugin
from .settings import FeishuSettings

__all__ = ["CHANNEL", "FeishuPlugin"]

if TYPE_CHECKING:
    from fastapi import APIRouter, FastAPI

    from ...settings import ServerSettings


class FeishuPlugin(ChannelPlugin):
    """`/feishu/events` (routes.py)."""

    def router(self) -> APIRouter:
        from .routes import router

        return router

    def install(self, app: FastAPI, settings: ServerSettings) -> None:
        from .routes import install

        install(app, settings)


def _status(settings: FeishuSettings) -> str:
    if settings.feishu_app_id:
        signed = "encrypted and signed" if settings.feishu_encrypt_key else "checked by token only (no Encrypt Key)"
        return f"Feishu bot on: /feishu/events, events {signed}, replies through {settings.feishu_base_url}"
    return "Feishu bot off: KB_FEISHU_APP_ID is not set, so /feishu/events answers 404"


CHANNEL = Channel(
    name="feishu",
    label_en="Feishu",
    label_zh="飞书",
    colour="#0284c7",
    colour_dark="#38bdf8",
    docs="docs/channels.md#feishu-lark-the-faq-bot",
    asks=("chat",),
    settings=("feishu_app_id", "feishu_app_secret", "feishu_verification_token"),
    plugin=FeishuPlugin(),
    prefix="/feishu/",
    off="the Feishu bot is off: set KB_FEISHU_APP_ID, KB_FEISHU_APP_SECRET and KB_FEISHU_VERIFICATION_TOKEN",
    platform=True,
    chat_ids="insights_chat_ids",
    settings_class=FeishuSettings,
    status=_status,
)
