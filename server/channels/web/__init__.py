"""The site itself: the search and chat pages, the widget other sites embed, and the JSON API.

Their routes are the app's own (server/routes/); these declarations name them as channels,
which the insights and the metrics count questions under.
"""

from __future__ import annotations

from ..channel import Channel

__all__ = ["WEB", "WIDGET", "API", "CHANNELS"]

WEB = Channel(
    name="web",
    label_en="Web",
    label_zh="网页",
    colour="#4f46e5",
    colour_dark="#8b8cf8",
    docs="docs/channels.md#web-pages-and-the-json-api",
    asks=("search", "chat"),
)
WIDGET = Channel(
    name="widget",
    label_en="Widget",
    label_zh="嵌入小部件",
    colour="#0d9488",
    colour_dark="#2dd4bf",
    docs="docs/channels.md#the-chat-widget",
    asks=("search", "chat"),  # widget.js chats; a search from another site's page is the widget's too
)
API = Channel(
    name="api",
    label_en="API",
    label_zh="API",
    colour="#d97706",
    colour_dark="#fbbf24",
    docs="docs/channels.md#web-pages-and-the-json-api",
    asks=("search", "chat"),
)
CHANNELS = (WEB, WIDGET, API)
