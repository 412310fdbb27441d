"""A channel made only for the tests: `GET /ask/?q=` answers from the FAQ in plain text, and `kb ask` is its command.
Registered in the tests' own process by `registered(monkeypatch)`, never by the app itself (docs/adding-a-channel.md's
Discord example is the one added to a copy of `server/`)."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi import APIRouter

from server.channels import Channel, ChannelPlugin, registry

__all__ = ["CHANNEL", "AskPlugin", "registered"]


class AskPlugin(ChannelPlugin):
    """Its route (routes.py), imported only when it is on, and `kb ask` (command.py)."""

    def router(self) -> APIRouter:
        from .routes import router

        return router

    def add_parser(self, sub: Any) -> None:
        from .command import add_parser

        add_parser(sub)


CHANNEL = Channel(
    name="ask",
    label_en="Plain-text asks",
    label_zh="纯文本提问",
    colour="#475569",
    colour_dark="#cbd5e1",
    docs="docs/adding-a-channel.md#a-small-example",
    asks=("search",),
    settings=("admin_token",),  # a setting the server already has, so that the test can turn it off
    plugin=AskPlugin(),  # its route, and `kb ask QUESTION`
    prefix="/ask/",
    off="the plain-text channel is off: set KB_ADMIN_TOKEN",
    platform=True,
)


def registered(monkeypatch: pytest.MonkeyPatch) -> Channel:
    """The registry with this channel's line added, for the rest of the test."""
    monkeypatch.setattr(registry, "CHANNELS", (*registry.CHANNELS, CHANNEL))
    return CHANNEL
