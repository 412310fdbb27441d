"""The MCP server's setting: the bearer token `/mcp` asks for."""

from __future__ import annotations

from dataclasses import dataclass

from kb.settings import setting

__all__ = ["MCPSettings"]


@dataclass(frozen=True)
class MCPSettings:
    """`KB_MCP_TOKEN`, one part of the server's settings (server/settings.py composes them)."""

    mcp_token: str = setting(
        "",
        "bearer token for the MCP server at `/mcp`, compared in constant time; `kb mcp` over stdio needs none (see "
        "[Coding agents](channels.md#coding-agents-mcp)) (empty: `/mcp` off)",
    )

    def check(self) -> None:
        """Nothing to check: any token."""
