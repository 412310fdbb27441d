"""Slack: the `/faq` slash command and its buttons (routes in `routes.py`; signatures, payloads, Block Kit replies, mrkdwn)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..channel import Channel
from ..plugin import ChannelPlugin
from .settings import SlackSettings

__all__ = ["CHANNEL", "SlackPlugin"]

if TYPE_CHECKING:
    from fastapi import APIRouter, FastAPI

    from ...settings import ServerSettings


class SlackPlugin(ChannelPlugin):
    """`/slack/command` and `/slack/interactive` (routes.py)."""

    def router(self) -> APIRouter:
        from .routes import router

        return router

    def install(self, app: FastAPI, settings: ServerSettings) -> None:
        from .routes import install

        install(app, settings)


def _status(settings: SlackSettings) -> str:
    if settings.slack_signing_secret:
        return "Slack routes on: /slack/command and /slack/interactive"
    return "Slack routes off: KB_SLACK_SIGNING_SECRET is not set, so /slack/* answers 404"


CHANNEL = Channel(
    name="slack",
    label_en="Slack",
    label_zh="Slack",
    colour="#c026d3",
    colour_dark="#e879f9",
    docs="docs/channels.md#slack-the-faq-command",
    asks=("chat",),
    settings=("slack_signing_secret",),
    plugin=SlackPlugin(),
    prefix="/slack/",
    off="the Slack routes are off: set KB_SLACK_SIGNING_SECRET to the Slack app's signing secret",
    platform=True,
    chat_ids="insights_slack_ids",
    settings_class=SlackSettings,
    status=_status,
)
