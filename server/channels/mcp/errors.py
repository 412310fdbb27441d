"""The MCP server's errors as JSON-RPC errors at `/mcp`, which an MCP client shows as they are.

The app's one handler (server/error_handler.py) asks the channel whose prefix a failed request's
path is under for its error body (the channel's plugin hands it this module's).
"""

from __future__ import annotations

from typing import Any

__all__ = ["error_body", "mcp_error", "MCP_PATH", "MCP_REFUSED"]

MCP_PATH = "/mcp"  # the one path of the channel (its `prefix`)
MCP_REFUSED = -32000  # JSON-RPC's first code for a server's own errors: the request was refused before MCP read it


def error_body(path: str, status: int, message: str, exc: Exception | None) -> tuple[int, dict[str, Any]] | None:
    """(status, body) of an error at `/mcp` itself; None for a path beside it (`/mcpx`), answered as the app's."""
    return (status, mcp_error(status, message)) if path == MCP_PATH else None


def mcp_error(status: int, message: str) -> dict[str, Any]:
    """An error as an MCP client reads one from any status: a JSON-RPC error (its id unknown, so null), whose
    message the SDK's client raises as it is, rather than "Server returned an error response"."""
    return {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": MCP_REFUSED, "message": message, "data": {"status": status}},
    }
