"""`kb mcp`: the MCP server (server/channels/mcp/tools.py) over standard input and output, for an agent that launches it.

The SDK's stdio transport reads a JSON-RPC message a line; a line it cannot read it passes on as an
exception, which the server drops, so a client that sent it waits for an answer forever. Here such a
line is answered as JSON-RPC says: a parse error (-32700) for a line that is not JSON, an invalid
request (-32600) for JSON that is not a message, with the request's id where it can be read (else
null); then the server goes on reading.
"""

from __future__ import annotations

from types import TracebackType
from typing import Any

import mcp_types as types
from mcp.server.mcpserver import MCPServer
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

__all__ = ["serve_stdio", "unreadable_line_error"]


async def serve_stdio(mcp: MCPServer[Any]) -> None:
    """Serve `mcp` over stdio until standard input closes (what `MCPServer.run_stdio_async` does, answering
    unreadable lines)."""
    server = mcp._lowlevel_server  # the SDK's own stdio runner uses it so; it has no public name
    async with stdio_server() as (read_stream, write_stream):
        answering = _Answering(read_stream, write_stream)
        await server.run(answering, write_stream, server.create_initialization_options())


def unreadable_line_error(exc: Exception) -> types.JSONRPCError:
    """The JSON-RPC error answering a line the transport could not read as a message."""
    errors = exc.errors() if isinstance(exc, ValidationError) else []
    if any(e["type"] == "json_invalid" for e in errors) or not errors:
        return _error(None, types.PARSE_ERROR, "Parse error: the line is not JSON")
    sent: dict[str, Any] = next((e["input"] for e in errors if isinstance(e.get("input"), dict)), {})
    request_id = sent.get("id")
    if isinstance(request_id, bool) or not isinstance(request_id, (str, int)):
        request_id = None
    return _error(request_id, types.INVALID_REQUEST, "Invalid request: the line is not a JSON-RPC 2.0 message")


def _error(request_id: str | int | None, code: int, message: str) -> types.JSONRPCError:
    return types.JSONRPCError(jsonrpc="2.0", id=request_id, error=types.ErrorData(code=code, message=message))


class _Answering:
    """The transport's read stream, with each unreadable line answered on the write stream and skipped."""

    def __init__(self, inner: Any, write_stream: Any) -> None:
        self.inner, self.write_stream = inner, write_stream

    @property
    def last_context(self) -> Any:
        """The sender's context of the last item, which the server reads where the stream keeps one."""
        return getattr(self.inner, "last_context", None)

    async def receive(self) -> SessionMessage | Exception:
        while True:
            item = await self.inner.receive()
            if not isinstance(item, Exception):
                return item
            await self.write_stream.send(SessionMessage(unreadable_line_error(item)))

    async def aclose(self) -> None:
        await self.inner.aclose()

    def __aiter__(self) -> "_Answering":
        return self

    async def __anext__(self) -> SessionMessage | Exception:
        while True:
            item = await self.inner.__anext__()
            if not isinstance(item, Exception):
                return item
            await self.write_stream.send(SessionMessage(unreadable_line_error(item)))

    async def __aenter__(self) -> "_Answering":
        await self.inner.__aenter__()
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> bool | None:
        return await self.inner.__aexit__(exc_type, exc, tb)
