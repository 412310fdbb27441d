"""MCP: the tools a coding agent calls (`tools.py`), over Streamable HTTP at `/mcp` (`http.py`) and over stdio (`kb mcp`:
`command.py`, `stdio.py`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..channel import Channel
from ..plugin import ChannelPlugin
from .settings import MCPSettings

__all__ = ["CHANNEL", "MCPPlugin"]

if TYPE_CHECKING:
    from contextlib import AsyncExitStack

    from fastapi import FastAPI

    from ...settings import ServerSettings
    from ..plugin import ErrorBody


class MCPPlugin(ChannelPlugin):
    """`/mcp` (http.py, an ASGI app of its own, with no router), its errors as JSON-RPC errors (errors.py), `kb mcp`
    (command.py)."""

    def install(self, app: FastAPI, settings: ServerSettings) -> None:
        from .http import install

        install(app, settings)

    async def start(self, app: FastAPI, stack: AsyncExitStack) -> None:
        from .http import start

        await start(app, stack)

    def add_parser(self, sub: Any) -> None:
        from .command import add_parser  # `kb mcp`, over standard input and output

        add_parser(sub)

    def error_body(self, path: str, status: int, message: str, exc: Exception | None) -> ErrorBody | None:
        from .errors import error_body

        return error_body(path, status, message, exc)


def _status(settings: MCPSettings) -> str:
    if settings.mcp_token:
        return "MCP server on: /mcp, for clients sending KB_MCP_TOKEN as a bearer token"
    return "MCP server off: KB_MCP_TOKEN is not set, so /mcp answers 404 (`kb mcp` over stdio needs none)"


CHANNEL = Channel(
    name="mcp",
    label_en="MCP (coding agents)",
    label_zh="MCP（编程助手）",
    colour="#7c3aed",
    colour_dark="#c4b5fd",
    docs="docs/channels.md#coding-agents-mcp",
    asks=("search",),
    settings=("mcp_token",),
    plugin=MCPPlugin(),
    prefix="/mcp",
    off="the MCP server at /mcp is off: set KB_MCP_TOKEN to a secret token to turn it on (`kb mcp` serves stdio)",
    cross_site=True,
    headers=("Mcp-Protocol-Version", "Mcp-Session-Id", "Last-Event-ID"),  # MCP's own; Last-Event-ID resumes a stream
    exposed=("Mcp-Session-Id",),
    settings_class=MCPSettings,
    status=_status,
)
