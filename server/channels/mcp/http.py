"""`/mcp`: the MCP server (server/channels/mcp/tools.py) over Streamable HTTP, for a team's coding agents.

Off (404) unless `KB_MCP_TOKEN` is set; then every request needs `Authorization: Bearer <token>`,
compared in constant time (401 without it). The transport is stateless and answers in JSON:
each request stands alone, so any replica can answer it and nothing is kept between calls; so
there is no stream of the server's own messages to open, and a `GET` is answered 405, as
MCP's specification says for such a server. Every refusal is a JSON-RPC error whose message
says what to fix, which an agent shows as it is.
The app's middleware applies as to the API: the rate limit, the body limit, and CORS for
`KB_ALLOWED_ORIGINS`; a call from another site's page whose origin is not on that list is
refused (403), which also keeps a DNS-rebinding page from reaching the tools.
"""

from __future__ import annotations

from contextlib import AsyncExitStack
from typing import Any

from fastapi import FastAPI
from mcp.server.mcpserver import MCPServer
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from starlette.datastructures import Headers
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from kb.errors import shown

from ...bearer import bearer_matches
from ...error_handler import send_error
from ...settings import ServerSettings
from .errors import MCP_PATH
from .tools import create_mcp

__all__ = ["MCP_PATH", "MCPEndpoint", "install", "start"]

_OFF = "the MCP server at /mcp is off: set KB_MCP_TOKEN to a secret token to turn it on (`kb mcp` serves stdio)"


class MCPEndpoint:
    """The ASGI app at `/mcp`: the token and origin checks, then the SDK's Streamable HTTP transport.

    `start` runs the transport's task group for the app's lifetime (from the lifespan); until it
    is started, and when KB_MCP_TOKEN is empty, the route answers 404.
    """

    def __init__(self, settings: ServerSettings) -> None:
        self.settings = settings
        self.manager: StreamableHTTPSessionManager | None = None

    async def start(self, mcp: MCPServer[Any], stack: AsyncExitStack) -> None:
        if not self.settings.mcp_token:
            return
        mcp.streamable_http_app(
            stateless_http=True,
            json_response=True,
            max_request_body_size=self.settings.max_body_bytes,
            # Hosts and origins are this app's to check (`__call__`, and CORS in the middleware).
            transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
        )
        self.manager = mcp.session_manager
        await stack.enter_async_context(self.manager.run())

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self.manager is None:
            await send_error(scope, receive, send, 404, _OFF)
            return
        headers = Headers(scope=scope)
        if not bearer_matches((self.settings.mcp_token,), headers.get("authorization", "")):
            await send_error(
                scope,
                receive,
                send,
                401,
                "this needs the MCP token: send the header `Authorization: Bearer <KB_MCP_TOKEN>`",
                {"WWW-Authenticate": "Bearer"},
            )
            return
        origin = headers.get("origin")
        origins = self.settings.origins
        if origin and "*" not in origins and origin.rstrip("/") not in origins:
            await send_error(scope, receive, send, 403, f"origin {shown(origin)} is not in KB_ALLOWED_ORIGINS")
            return
        if scope["method"] == "GET":
            await send_error(
                scope,
                receive,
                send,
                405,
                "this MCP server is stateless and answers each POST in JSON: it has no stream to open with GET",
                {"Allow": "POST, DELETE"},
            )
            return
        await self.manager.handle_request(scope, receive, send)


def install(app: FastAPI, settings: ServerSettings) -> None:
    """`/mcp` on the app: the endpoint, answering once `start` has run."""
    app.state.mcp = MCPEndpoint(settings)
    app.router.routes.append(Route(MCP_PATH, app.state.mcp, methods=["GET", "POST", "DELETE"], include_in_schema=False))


async def start(app: FastAPI, stack: AsyncExitStack) -> None:
    """The transport, for the app's lifetime, over the tools of the build being served."""
    await app.state.mcp.start(create_mcp(lambda: app.state.reloader.served.kb, app.state.events), stack)
