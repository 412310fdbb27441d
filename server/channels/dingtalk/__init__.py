"""DingTalk: the robot's signed messages (routes in `routes.py`; signatures, payloads, Markdown replies, session webhooks)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..channel import Channel
from ..plugin import ChannelPlugin
from .settings import DingTalkSettings

__all__ = ["CHANNEL", "DingTalkPlugin"]

if TYPE_CHECKING:
    from fastapi import APIRouter, FastAPI

    from ...settings import ServerSettings


class DingTalkPlugin(ChannelPlugin):
    """`/dingtalk/robot` (routes.py)."""

    def router(self) -> APIRouter:
        from .routes import router

        return router

    def install(self, app: FastAPI, settings: ServerSettings) -> None:
        from .routes import install

        install(app, settings)


def _status(settings: DingTalkSettings) -> str:
    if settings.dingtalk_app_key:
        return f"DingTalk robot on: /dingtalk/robot, late answers to {settings.dingtalk_webhook_base}"
    return "DingTalk robot off: KB_DINGTALK_APP_KEY is not set, so /dingtalk/robot answers 404"


CHANNEL = Channel(
    name="dingtalk",
    label_en="DingTalk",
    label_zh="钉钉",
    colour="#65a30d",
    colour_dark="#a3e635",
    docs="docs/channels.md#dingtalk-the-faq-robot",
    asks=("chat",),
    settings=("dingtalk_app_key", "dingtalk_app_secret"),
    plugin=DingTalkPlugin(),
    prefix="/dingtalk/",
    off="the DingTalk robot is off: set KB_DINGTALK_APP_KEY and KB_DINGTALK_APP_SECRET",
    platform=True,
    chat_ids="insights_chat_ids",
    settings_class=DingTalkSettings,
    status=_status,
)
