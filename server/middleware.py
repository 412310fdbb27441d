"""The app's ASGI middleware: security headers, the build pin, CORS for the API, the rate limit, the request limits.

`create_app` adds them with the settings it resolved. From the outside in: `SecurityHeaders`
(headers every response carries), `PinBuild` (the index build a request is served from),
`APICors` (which other sites' pages may call the API), `RateLimit` (KB_RATE_LIMIT per
client), `RequestLimits` (body size and UTF-8); so a 429 or a 413 reaches the widget's
page with its CORS headers. The limits answer like the app's own errors: JSON on the API,
the error page on pages.
"""

from __future__ import annotations

import logging
import math
from typing import Sequence

from starlette.datastructures import Headers
from starlette.middleware.cors import CORSMiddleware
from starlette.responses import JSONResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from kb.lru import LRU

from .error_handler import rate_exempt, send_error
from .headers import ON_EVERY_RESPONSE
from .ratelimit import LogBudget, TokenBuckets, client_address
from .reload import Reloader, pin
from .request_checks import BodyRefused, CheckedBody, bad_utf8_parameter, is_json, too_large
from .settings import ServerSettings

__all__ = [
    "SecurityHeaders",
    "PinBuild",
    "APICors",
    "RateLimit",
    "RequestLimits",
    "ALLOWED_METHODS",
    "ALLOWED_HEADERS",
    "PREFLIGHT_MAX_AGE",
    "MAX_REMEMBERED",
]

log = logging.getLogger("kb.server")

BUILD_HEADER = b"x-kb-index"
ALLOWED_METHODS = ("GET", "POST")
ALLOWED_HEADERS = ("Accept", "Accept-Language", "Content-Type")
PREFLIGHT_MAX_AGE = 600  # seconds a browser may reuse a preflight answer
MAX_REMEMBERED = 1000  # refused origins remembered, so each is logged once (the least recently seen forgotten first)
MAX_ORIGIN_SHOWN = 200  # characters of an origin kept and logged


class SecurityHeaders:
    """Add `ON_EVERY_RESPONSE` (nosniff, a short referrer) to each HTTP response that does not set them itself.

    The pages add their Content-Security-Policy themselves (server/rendering/templates.py),
    since only HTML needs one.
    """

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


class PinBuild:
    """Pin each request to the build served when it starts (server/reload.py), and name it in `X-KB-Index`."""

    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        reloader: Reloader | None = getattr(scope["app"].state, "reloader", None) if "app" in scope else None
        if scope["type"] != "http" or reloader is None:
            await self.app(scope, receive, send)
            return
        served = reloader.served
        pin(scope, served)
        build = served.build.encode("latin-1")

        async def send_with_build(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), (BUILD_HEADER, build)]
            await send(message)

        await self.app(scope, receive, send_with_build)


class APICors(CORSMiddleware):
    """Starlette's CORS for the paths under `/api/`: only pages on `KB_ALLOWED_ORIGINS` may read the answers.

    The chat widget runs on other sites and calls the API from there. An allowed origin
    gets `Access-Control-Allow-Origin` and an answer to its preflight (`*` in the list
    allows every origin); any other gets no CORS headers, so the browser keeps the response
    from the page, and its preflight is a 403 with the app's JSON error naming the setting.
    A refused origin is logged the first time it is seen among the last `MAX_REMEMBERED`,
    within a budget of log lines: a flood of made-up origins floods neither the log nor memory.
    """

    def __init__(
        self,
        app: ASGIApp,
        origins: Sequence[str],
        prefix: str | tuple[str, ...] = "/api/",
        headers: Sequence[str] = ALLOWED_HEADERS,
        exposed: Sequence[str] = (),
    ) -> None:
        super().__init__(
            app,
            allow_origins=origins,
            allow_methods=ALLOWED_METHODS,
            allow_headers=headers,
            max_age=PREFLIGHT_MAX_AGE,
            expose_headers=exposed,
        )
        self.prefix = prefix
        self.refused: LRU[str, bool] = LRU(MAX_REMEMBERED)
        self._log = LogBudget()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not scope["path"].startswith(self.prefix):  # a prefix or a tuple of them
            await self.app(scope, receive, send)
            return
        await super().__call__(scope, receive, send)

    def preflight_response(self, request_headers: Headers) -> Response:
        response = super().preflight_response(request_headers)
        if response.status_code < 400:
            return response
        error = {"ok": False, "error": self._refusal(request_headers), "status": 403}
        return JSONResponse(error, 403, headers={"Vary": self.preflight_headers["Vary"]})

    def _refusal(self, headers: Headers) -> str:
        """What a refused preflight asked for that is not allowed."""
        origin = headers["origin"]
        if not self.is_allowed_origin(origin):
            self._log_refused(origin[:MAX_ORIGIN_SHOWN])
            return f"origin {origin!r} is not in KB_ALLOWED_ORIGINS"
        method = headers["access-control-request-method"]
        if method not in self.allow_methods:
            return f"method {method[:20]} is not allowed; use {' or '.join(ALLOWED_METHODS)}"
        asked = headers.get("access-control-request-headers")
        unknown = [h.strip() for h in (asked or "").lower().split(",") if h.strip() not in self.allow_headers]
        if asked is not None and unknown:
            return f"request header {unknown[0][:100]!r} is not allowed; allowed: {', '.join(self.allow_headers)}"
        return "private network access is not allowed"

    def _log_refused(self, origin: str) -> None:
        if self.refused.get(origin):
            return
        self.refused.put(origin, True)
        self._log.warning(
            log,
            "cross-origin API call refused: origin %r is not in KB_ALLOWED_ORIGINS "
            "(add it to KB_ALLOWED_ORIGINS to allow it)",
            origin,
        )


class RateLimit:
    """Count each client's requests against KB_RATE_LIMIT and answer 429 with `Retry-After` beyond it.

    Each client has a bucket of N tokens that refills at N a minute (`KB_RATE_LIMIT=N/minute`):
    a burst of N requests is served at once, then one every 60/N seconds. The paths `rate_exempt` names
    (the chat platforms' routes, `/healthz`, `/metrics`, static files, `/channels.css`, `/widget.js`) are not
    counted. The client is the address
    in the ASGI scope (see server/ratelimit.py for proxies).
    """

    def __init__(self, app: ASGIApp, settings: ServerSettings) -> None:
        self.app = app
        self.limit = settings.rate_limit
        self._buckets = TokenBuckets(*settings.rate) if settings.rate is not None else None
        self._exempt = rate_exempt()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self._buckets is None or scope["type"] != "http" or scope["path"].startswith(self._exempt):
            await self.app(scope, receive, send)
            return
        waiting = self._buckets.take(client_address(scope))
        if not waiting:
            await self.app(scope, receive, send)
            return
        retry = max(1, math.ceil(waiting))
        await send_error(
            scope,
            receive,
            send,
            429,
            f"too many requests from this client: the limit is {self.limit} (KB_RATE_LIMIT); try again in {retry} s",
            {"Retry-After": str(retry)},
        )


class RequestLimits:
    """Refuse too-large bodies (413) and text that is not UTF-8 (422) before a route runs.

    - A body over `KB_MAX_BODY_BYTES` gets 413: at once when `Content-Length` says so, else
      (a chunked body) as soon as the bytes read pass the limit, so a large body is never
      held in memory.
    - A query parameter whose percent-encoded bytes are not UTF-8 (`?q=%FF`) gets 422 naming
      the parameter; without this check they would be searched as U+FFFD.
    - A JSON body that is not UTF-8 gets 422 naming `body` (the framework would answer a
      vague 400).
    """

    def __init__(self, app: ASGIApp, max_body_bytes: int) -> None:
        self.app = app
        self.limit = max_body_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        bad = bad_utf8_parameter(scope.get("query_string", b""))
        if bad is not None:
            await send_error(scope, receive, send, 422, f"{bad}: not valid UTF-8 (percent-encoded bytes in the URL)")
            return
        headers = Headers(scope=scope)
        length = headers.get("content-length", "")
        if self.limit and length.isdigit() and int(length) > self.limit:
            await send_error(scope, receive, send, 413, too_large(self.limit))
            return
        checked = CheckedBody(receive, self.limit, is_json(headers))
        started = False

        async def send_watching(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, checked.receive, send_watching)
        except BodyRefused as refused:
            if started:  # the route answered before it read the whole body; nothing more to say
                raise
            await send_error(scope, receive, send, refused.status_code, refused.detail)
