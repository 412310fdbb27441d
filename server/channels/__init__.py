"""The places the knowledge base answers, one package each, and the registry that lists them.

`Channel` (channel.py) is what a channel declares; `CHANNELS` (registry.py) is the list the app,
the settings check, the error table, `/insights` and `/metrics` read. A channel's heavy imports (its
platform's SDK) live in its `module`, which is imported only when the channel is on.
"""

from .channel import Channel
from .registry import CHANNELS, channel, names, turned_on

__all__ = ["Channel", "CHANNELS", "channel", "names", "turned_on"]
