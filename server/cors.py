"""Cross-origin access to the JSON API: only pages on `KB_ALLOWED_ORIGINS` may read its answers.

The chat widget runs on other sites and calls `/api/*` from there. An origin on the list
gets `Access-Control-Allow-Origin` (and an answer to its preflight); any other origin gets
no CORS headers, so the browser keeps the response from the page, and its preflight is
refused with a JSON error naming the setting. `*` in the list allows every origin.
Same-origin requests (the site's own pages) pass through untouched.

A refused origin is logged once, within a budget of log lines (server/logbudget.py); the
last `MAX_REMEMBERED` refused origins are remembered for that, so a page calling again
and again is logged once, and a flood of made-up origins neither floods the log nor grows
the memory.
"""

from __future__ import annotations

import json
import logging
from collections import OrderedDict

from starlette.datastructures import Headers, MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from .logbudget import LogBudget

__all__ = ["APICors", "ALLOWED_METHODS", "ALLOWED_HEADERS", "PREFLIGHT_MAX_AGE", "MAX_REMEMBERED"]

log = logging.getLogger("kb.server")

ALLOWED_METHODS = ("GET", "POST")
ALLOWED_HEADERS = ("accept", "content-type", "accept-language")
PREFLIGHT_MAX_AGE = 600  # seconds a browser may reuse a preflight answer
MAX_REMEMBERED = 1000  # refused origins remembered (the least recently seen are forgotten first)
MAX_ORIGIN_SHOWN = 200  # characters of an origin kept and logged


class APICors:
    """ASGI middleware: CORS for paths under `/api/`, with the origins read from the app's settings.

    The origins come from `app.state.settings` at request time, because `create_app(None)`
    reads the settings only when the app starts.
    """

    def __init__(self, app: ASGIApp, prefix: str = "/api/") -> None:
        self.app = app
        self.prefix = prefix
        self._refused: OrderedDict[str, None] = OrderedDict()  # least recently seen first
        self._log = LogBudget()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not scope["path"].startswith(self.prefix):
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        origin = headers.get("origin")
        allowed = origin is not None and self._allowed(scope, origin)
        if origin is not None and scope["method"] == "OPTIONS" and "access-control-request-method" in headers:
            await self._preflight(origin, allowed, headers, send)
            return

        async def send_with_cors(message: Message) -> None:
            if message["type"] == "http.response.start":
                # Every API response varies by Origin, so no cache hands one origin's answer to another.
                response_headers = MutableHeaders(scope=message)
                response_headers.add_vary_header("Origin")
                if allowed and origin is not None:
                    response_headers["Access-Control-Allow-Origin"] = origin
            await send(message)

        await self.app(scope, receive, send_with_cors)

    @staticmethod
    def _allowed(scope: Scope, origin: str) -> bool:
        state = getattr(scope.get("app"), "state", None)
        settings = getattr(state, "settings", None)
        origins = settings.origins if settings is not None else ()
        return "*" in origins or origin.rstrip("/") in origins

    def _log_refused(self, origin: str) -> None:
        """Log a refused origin the first time it is seen (among the last `MAX_REMEMBERED`), within the log budget."""
        if origin in self._refused:
            self._refused.move_to_end(origin)
            return
        self._refused[origin] = None
        if len(self._refused) > MAX_REMEMBERED:
            self._refused.popitem(last=False)
        self._log.warning(log, "cross-origin API call refused: origin %r is not in KB_ALLOWED_ORIGINS "
                               "(add it to KB_ALLOWED_ORIGINS to allow it)", origin)

    async def _preflight(self, origin: str, allowed: bool, headers: Headers, send: Send) -> None:
        method = headers["access-control-request-method"].upper()
        asked = [h.strip().lower() for h in headers.get("access-control-request-headers", "").split(",") if h.strip()]
        problem = ""
        if not allowed:
            problem = f"origin {origin!r} is not in KB_ALLOWED_ORIGINS"
            self._log_refused(origin[:MAX_ORIGIN_SHOWN])
        elif method not in ALLOWED_METHODS:
            problem = f"method {method} is not allowed; use {' or '.join(ALLOWED_METHODS)}"
        elif unknown := [h for h in asked if h not in ALLOWED_HEADERS]:
            problem = f"request header {unknown[0]!r} is not allowed; allowed: {', '.join(ALLOWED_HEADERS)}"
        response_headers = [(b"vary", b"Origin")]
        if problem:
            body = json.dumps({"ok": False, "error": problem, "status": 403}).encode()
            response_headers += [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
            await send({"type": "http.response.start", "status": 403, "headers": response_headers})
            await send({"type": "http.response.body", "body": body})
            return
        response_headers += [
            (b"access-control-allow-origin", origin.encode("latin-1")),
            (b"access-control-allow-methods", ", ".join(ALLOWED_METHODS).encode()),
            (b"access-control-allow-headers", ", ".join(ALLOWED_HEADERS).encode()),
            (b"access-control-max-age", str(PREFLIGHT_MAX_AGE).encode()),
            (b"content-length", b"0"),
        ]
        await send({"type": "http.response.start", "status": 204, "headers": response_headers})
        await send({"type": "http.response.body", "body": b""})
