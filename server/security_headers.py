"""Headers every response carries, JSON and static files included: no MIME sniffing, a short referrer.

`X-Content-Type-Options: nosniff` keeps a browser from running a JSON answer or a text
file as a script or page whatever its content; `Referrer-Policy` sends other sites only
this server's origin, never the query in the URL. The pages add their
Content-Security-Policy themselves (server/rendering/templates.py), since only HTML needs one.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["SecurityHeaders", "ON_EVERY_RESPONSE"]

ON_EVERY_RESPONSE = (
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"strict-origin-when-cross-origin"),
)


class SecurityHeaders:
    """ASGI middleware: add `ON_EVERY_RESPONSE` to each HTTP response that does not set them itself."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                present = {name.lower() for name, _ in headers}
                headers += [(name, value) for name, value in ON_EVERY_RESPONSE if name not in present]
                message["headers"] = headers
            await send(message)

        await self.app(scope, receive, send_with_headers)
