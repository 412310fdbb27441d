"""The one exception handler: a kb error, an HTTP error or bad input becomes an HTML page or JSON.

The API's and every channel's paths (and clients that ask for JSON rather than HTML) get
`{"ok": false, "error": "...", "status": N}`, unless the channel whose prefix the path is under has a
format of its own (its plugin's `error_body`, as datasette lets a plugin answer its own exceptions: an API's
own error shape, a JSON-RPC error); pages get the error page in the reader's
language, with a search box. `send_error` answers the
same way from ASGI middleware (the rate limit, the request limits), and
`document_error_responses` declares in the OpenAPI schema the errors each route can give.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import Receive, Scope, Send

from kb.errors import (
    BuildRefused,
    EntryNotFound,
    IndexUnreadable,
    InsightsOff,
    InsightsUnreachable,
    KBError,
    LinkNotFound,
    LLMFailed,
    QueryError,
    SettingsError,
)

from .bots.delivery_ids import guard_of
from .channels import registry
from .deps import app_settings
from .exceptions import ServerError
from .headers import SECURITY_HEADERS
from .rendering.templates import page
from .schemas import ErrorOut

__all__ = [
    "handle_error",
    "install_error_handler",
    "describe",
    "send_error",
    "document_error_responses",
    "rate_exempt",
    "STATUS",
    "status_of",
    "log_refusal",
]

log = logging.getLogger("kb.server")

# The HTTP status of each error, by class; an error's is that of the nearest class in its
# hierarchy listed here (as Starlette picks an exception handler), else 500.
STATUS: dict[type[Exception], int] = {
    EntryNotFound: 404,
    QueryError: 422,
    IndexUnreadable: 503,
    LLMFailed: 502,
    SettingsError: 500,
    BuildRefused: 409,
    InsightsOff: 503,  # no insights database: nothing is recorded, links are off
    InsightsUnreachable: 503,  # its server is down
    LinkNotFound: 404,
}


def status_of(exc: Exception) -> int:
    """A server error's own status; else the one `STATUS` gives the nearest class of `exc`'s hierarchy; 500 when none is listed."""
    if isinstance(exc, ServerError):
        return exc.status
    return next((STATUS[cls] for cls in type(exc).__mro__ if cls in STATUS), 500)


def _validation_message(exc: RequestValidationError) -> str:
    parts = []
    for error in exc.errors():
        loc = [str(p) for p in error.get("loc", ())]
        # ("body", "message") names the field "message"; ("query", "k") names "k".
        field = ".".join(loc[1:]) if len(loc) > 1 else ".".join(loc)
        message = error.get("msg", "invalid").removeprefix("Value error, ")
        if error.get("type") == "literal_error":  # name the value sent beside the ones allowed
            sent = repr(error.get("input"))
            sent = sent if len(sent) <= 60 else sent[:57] + "..."
            message = f"{sent} is not allowed; use one of {error.get('ctx', {}).get('expected', '')}"
        if error.get("type") == "json_invalid":
            # loc is ("body", offset): the body as a whole is at fault.
            field = "body"
            message = f"not valid JSON ({error.get('ctx', {}).get('error', 'parse error')})"
        parts.append(f"{field or 'body'}: {message}")
    return "; ".join(parts) or "the request is not valid"


def describe(exc: Exception) -> tuple[int, str]:
    """(status code, one-line message) for an exception."""
    if isinstance(exc, RequestValidationError):
        return 422, _validation_message(exc)
    if isinstance(exc, StarletteHTTPException):
        return exc.status_code, str(exc.detail)
    if isinstance(exc, (KBError, ServerError)):
        return status_of(exc), str(exc)
    return 500, "internal error"


def json_paths() -> tuple[str, ...]:
    """Paths whose errors are JSON whatever the client accepts: the API's, the admin routes', every channel's own."""
    return ("/api/", "/admin/", *(c.prefix for c in registry.CHANNELS if c.prefix))


def _wants_json(request: Request) -> bool:
    path = request.url.path
    if path.startswith(json_paths()) or path in (
        "/healthz",
        "/metrics",
    ):
        return True
    accept = request.headers.get("accept", "")
    return "application/json" in accept and "text/html" not in accept


def log_refusal(request: Request, exc: ServerError) -> None:
    """A channel's refusal (`exc.channel`) logged within that channel's budget: one line per route and cause a window.

    The platforms' routes are not rate-limited (their servers send every asker's requests), so their log lines are."""
    guard = guard_of(request.app, exc.channel)
    if guard is None:
        return
    path = request.url.path
    client = request.client.host if request.client else "?"
    sender = exc.sender.format(path=path) or f"{exc.channel} request to {path}"
    guard.refused.warning(log, "%s from %s refused: %s", sender, client, exc, cause=f"{path} {exc.cause}")


async def handle_error(request: Request, exc: Exception) -> Response:
    status, message = describe(exc)
    if isinstance(exc, ServerError):
        message = exc.said  # a platform's refusal says what was not valid: "not a valid ... request: ..."
        if exc.channel:
            log_refusal(request, exc)
    if status >= 500:
        log.error(
            "%s %s: %s", request.method, request.url.path, message, exc_info=not isinstance(exc, (KBError, ServerError))
        )
    # A 500 is sent from outside the middleware (Starlette's ServerErrorMiddleware), so it
    # gets the headers every response carries here.
    headers = {**SECURITY_HEADERS, **(getattr(exc, "headers", None) or {})}
    own = _channel_error(request.url.path, status, message, exc)
    if own is not None:
        return JSONResponse(own[1], own[0], headers=headers)
    if _wants_json(request):
        return JSONResponse({"ok": False, "error": message, "status": status}, status, headers=headers)
    query = request.query_params.get("q", "")[: app_settings(request).max_query_chars]
    context = {"status": status, "title_key": _title_key(status), "message": message, "q": query}
    response = page(request, "error.html", context, status)
    response.headers.update(headers)
    return response


def _channel_error(path: str, status: int, message: str, exc: Exception) -> tuple[int, dict[str, Any]] | None:
    """The error body of the channel whose prefix `path` is under, when it has a format of its own (its plugin's
    `error_body(path, status, message, exc)` gives (status, body), or None to leave it to the app)."""
    for channel in registry.CHANNELS:
        if channel.plugin is not None and channel.prefix and path.startswith(channel.prefix):
            own = channel.plugin.error_body(path, status, message, exc)
            if own is not None:
                return own
    return None


def _title_key(status: int) -> str:
    """The error page's title: its own for 404, 422 and 503; "could not be used" for another 4xx."""
    if status in (404, 422, 503):
        return f"error_title_{status}"
    return "error_title_422" if status < 500 else "error_title_500"


async def send_error(
    scope: Scope, receive: Receive, send: Send, status: int, message: str, headers: dict[str, str] | None = None
) -> None:
    """Answer a request from ASGI middleware as the app would: JSON for the API, the error page for pages."""
    response = await handle_error(Request(scope, receive), StarletteHTTPException(status, message, headers))
    await response(scope, receive, send)


def install_error_handler(app: FastAPI) -> None:
    for cls in (KBError, ServerError, StarletteHTTPException, RequestValidationError, Exception):
        app.add_exception_handler(cls, handle_error)
    document_error_responses(app)


# Paths the rate limit does not count (`RateLimit` in server/middleware.py): a chat platform retries on its
# own schedule and sends every asker's questions from a few addresses (its bot counts each chat's instead:
# CHAT_LIMIT; `Channel.platform`); health checks come from the load balancer,
# static files are cached. A scraper of /metrics calls often, from one address.
def rate_exempt() -> tuple[str, ...]:
    """The paths `RateLimit` does not count: the chat platforms' (their channels say so), and the ones above."""
    return (*(c.prefix for c in registry.CHANNELS if c.platform and c.prefix), *_RATE_EXEMPT)


_RATE_EXEMPT = ("/healthz", "/static/", "/channels.css", "/widget.js", "/metrics")

_ERROR_DESCRIPTIONS = {
    413: "the request body is over KB_MAX_BODY_BYTES",
    422: "a parameter or the body is not valid; the message names it",
    429: "too many requests from this client (KB_RATE_LIMIT); see the Retry-After header",
}


def document_error_responses(app: FastAPI) -> None:
    """Make the app's OpenAPI schema declare the errors every operation of a kind can give, as `ErrorOut`.

    Operations with parameters or a body: 422 (in place of FastAPI's own validation-error
    shape, which this app never sends); with a body: 413; under the rate limit: 429. What a
    route declares itself is kept.
    """
    generate = app.openapi

    def openapi() -> dict[str, Any]:
        schema = generate()
        schemas = schema.setdefault("components", {}).setdefault("schemas", {})
        schemas.setdefault("ErrorOut", ErrorOut.model_json_schema(ref_template="#/components/schemas/{model}"))
        for path, operations in schema.get("paths", {}).items():
            for method, operation in operations.items():
                _declare_errors(path, method, operation)
        if _FASTAPI_422 not in json.dumps(schema.get("paths", {})):
            schemas.pop("HTTPValidationError", None)
            schemas.pop("ValidationError", None)
        return schema

    app.openapi = openapi  # type: ignore[method-assign]


_FASTAPI_422 = "#/components/schemas/HTTPValidationError"


def _declare_errors(path: str, method: str, operation: dict[str, Any]) -> None:
    responses = operation.setdefault("responses", {})
    statuses = []
    if operation.get("parameters") or operation.get("requestBody"):
        statuses.append(422)
    if operation.get("requestBody") or method in ("post", "put", "patch"):
        statuses.append(413)
    if not path.startswith(rate_exempt()):
        statuses.append(429)
    error_out = {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorOut"}}}
    for status in statuses:
        declared = responses.get(str(status))
        if declared is None or _FASTAPI_422 in json.dumps(declared):
            responses[str(status)] = {"description": _ERROR_DESCRIPTIONS[status], "content": error_out}
