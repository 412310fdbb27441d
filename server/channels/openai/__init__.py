"""The OpenAI-compatible chat API at `/v1/` (routes in `routes.py`), for chat front ends."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..channel import Channel
from ..plugin import ChannelPlugin
from .settings import OpenAISettings

__all__ = ["CHANNEL", "OpenAIPlugin"]

if TYPE_CHECKING:
    from fastapi import APIRouter

    from ..plugin import ErrorBody


class OpenAIPlugin(ChannelPlugin):
    """`/v1/` (routes.py), its errors in OpenAI's shape (errors.py)."""

    def router(self) -> APIRouter:
        from .routes import router

        return router

    def error_body(self, path: str, status: int, message: str, exc: Exception | None) -> ErrorBody:
        from .errors import error_body

        return error_body(path, status, message, exc)


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
    plugin=OpenAIPlugin(),
    prefix="/v1/",
    cross_site=True,
    settings_class=OpenAISettings,
    status=_status,
)
