"""The OpenAI-compatible chat API at `/v1/` (routes in `routes.py`), for chat front ends."""

from __future__ import annotations

from ..channel import Channel
from .settings import OpenAISettings

__all__ = ["CHANNEL"]


def _status(settings: OpenAISettings) -> str:
    if settings.api_keys:
        return "OpenAI-compatible API on: /v1/, for clients sending one of KB_API_KEYS as a bearer token"
    return "OpenAI-compatible API on: /v1/, open to every client (set KB_API_KEYS to require a key)"


CHANNEL = Channel(
    name="openai",
    label_en="OpenAI-compatible API",
    label_zh="OpenAI 兼容接口",
    colour="#db2777",
    colour_dark="#f9a8d4",
    docs="docs/channels.md#chat-front-ends-openai-compatible-api",
    asks=("chat",),
    module="server.channels.openai.routes",
    prefix="/v1/",
    cross_site=True,
    errors="server.channels.openai.errors",
    settings_class=OpenAISettings,
    status=_status,
)
