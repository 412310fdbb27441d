"""The places the knowledge base answers, one package each, and the registry that lists them.

`Channel` (channel.py) is what a channel declares; `CHANNELS` (registry.py) is the list the app,
the settings check, the error table, `/insights` and `/metrics` read. A channel's code is its `plugin`
(plugin.py), whose parts import its heavy modules (its platform's SDK) only when they are asked for.
"""

from .channel import Channel
from .plugin import ChannelPlugin
from .registry import CHANNELS, channel, names, turned_on

__all__ = ["Channel", "ChannelPlugin", "CHANNELS", "channel", "names", "turned_on"]
