"""A channel made only for the tests: `GET /ask/?q=` answers from the FAQ in plain text, and `kb ask` is its command.
Registered in the tests' own process by `registered(monkeypatch)`, never by the app itself (docs/adding-a-channel.md's
Discord example is the one added to a copy of `server/`)."""

from __future__ import annotations

import pytest

from server.channels import Channel, registry

__all__ = ["CHANNEL", "registered"]

CHANNEL = Channel(
    name="ask",
    label_en="Plain-text asks",
    label_zh="纯文本提问",
    colour="#475569",
    colour_dark="#cbd5e1",
    docs="docs/adding-a-channel.md#a-small-example",
    asks=("search",),
    settings=("admin_token",),  # a setting the server already has, so that the test can turn it off
    module="tests.support.ask_channel.routes",
    commands="tests.support.ask_channel.command",  # `kb ask QUESTION`
    prefix="/ask/",
    off="the plain-text channel is off: set KB_ADMIN_TOKEN",
    platform=True,
)


def registered(monkeypatch: pytest.MonkeyPatch) -> Channel:
    """The registry with this channel's line added, for the rest of the test."""
    monkeypatch.setattr(registry, "CHANNELS", (*registry.CHANNELS, CHANNEL))
    return CHANNEL
