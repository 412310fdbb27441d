"""The registry: every channel the app knows, one line each. Adding a channel is its package and a line here.

Each line names a channel's package, whose `__init__.py` declares its `CHANNEL` (or `CHANNELS`, for a
package that declares several) and imports nothing heavy, as llm lists its built-in plugins.
"""

from __future__ import annotations

import importlib
from typing import Any

from .channel import Channel

__all__ = ["CHANNELS", "PACKAGES", "channel", "declared", "names", "points", "turned_on"]

PACKAGES = (
    "server.channels.web",
    "server.channels.slack",
    "server.channels.feishu",
    "server.channels.dingtalk",
    "server.channels.mcp",
    "server.channels.openai",
    "server.channels.github",
)


def declared(packages: tuple[str, ...]) -> tuple[Channel, ...]:
    """The channels the packages declare, in their order; a package declaring none is named."""
    found: list[Channel] = []
    for name in packages:
        package = importlib.import_module(name)
        channels = getattr(package, "CHANNELS", None) or (getattr(package, "CHANNEL", None),)
        own = [c for c in channels if isinstance(c, Channel)]
        if len(own) != len(channels):
            raise ValueError(f"channel package {name}: its __init__.py declares no CHANNEL (or CHANNELS) of `Channel`s")
        found.extend(own)
    return tuple(found)


CHANNELS: tuple[Channel, ...] = declared(PACKAGES)


def names() -> tuple[str, ...]:
    """Every channel's name, in the registry's order (the chart's and the insights' order)."""
    return tuple(c.name for c in CHANNELS)


def points() -> dict[str, float]:
    """The operating point each channel declares, by name (`KnowledgeBase.points`): those that declare one."""
    return {c.name: c.precision for c in CHANNELS if c.precision is not None}


def channel(name: str) -> Channel | None:
    """The channel of that name, or None."""
    return next((c for c in CHANNELS if c.name == name), None)


def turned_on(settings: Any) -> tuple[Channel, ...]:
    """The channels these settings turn on."""
    return tuple(c for c in CHANNELS if c.on(settings))
