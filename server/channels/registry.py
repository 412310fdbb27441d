"""The registry: every channel the app knows, one line each. Adding a channel is its package and a line here."""

from __future__ import annotations

from typing import Any

from . import dingtalk, feishu, github, mcp, openai, slack, web
from .channel import Channel

__all__ = ["CHANNELS", "channel", "names", "turned_on"]

CHANNELS: tuple[Channel, ...] = (
    web.WEB,
    web.WIDGET,
    web.API,
    slack.CHANNEL,
    feishu.CHANNEL,
    dingtalk.CHANNEL,
    mcp.CHANNEL,
    openai.CHANNEL,
    github.CHANNEL,
)


def names() -> tuple[str, ...]:
    """Every channel's name, in the registry's order (the chart's and the insights' order)."""
    return tuple(c.name for c in CHANNELS)


def channel(name: str) -> Channel | None:
    """The channel of that name, or None."""
    return next((c for c in CHANNELS if c.name == name), None)


def turned_on(settings: Any) -> tuple[Channel, ...]:
    """The channels these settings turn on."""
    return tuple(c for c in CHANNELS if c.on(settings))
