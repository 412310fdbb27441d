"""MCP: the tools a coding agent calls (`tools.py`), over Streamable HTTP at `/mcp` (`http.py`) and over stdio (`stdio.py`)."""

from __future__ import annotations

from ..channel import Channel
from .settings import MCPSettings

__all__ = ["CHANNEL"]


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
    module="server.channels.mcp.http",
    prefix="/mcp",
    off="the MCP server at /mcp is off: set KB_MCP_TOKEN to a secret token to turn it on (`kb mcp` serves stdio)",
    cross_site=True,
    errors="server.channels.mcp.errors",
    headers=("Mcp-Protocol-Version", "Mcp-Session-Id", "Last-Event-ID"),  # MCP's own; Last-Event-ID resumes a stream
    exposed=("Mcp-Session-Id",),
    settings_class=MCPSettings,
    status=_status,
)
