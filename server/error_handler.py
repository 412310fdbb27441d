"""The one exception handler: a kb error, an HTTP error or bad input becomes an HTML page or JSON.

API and chat bot paths (Slack, Feishu, DingTalk; and clients that ask for JSON rather than HTML) get `{"ok": false, "error": "...", "status": N}`;
the OpenAI-compatible API (`/v1/`) gets OpenAI's shape, `{"error": {"message", "type", "param", "code"}}`,
with 400 for a body that is not valid (as OpenAI answers); `/mcp` gets a JSON-RPC error, which an MCP client
shows as it is; pages get the error page in the reader's language, with a search box. `send_error` answers the
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

from .channels import registry
from .delivery_ids import guard_of
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
    "OPENAI_PREFIX",
    "openai_error",
    "mcp_error",
    "MCP_PATH",
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
        message = exc.said  # a platform's refusal says what was not valid: "not a valid Slack request: ..."
        if exc.channel:
            log_refusal(request, exc)
    if status >= 500:
        log.error(
            "%s %s: %s", request.method, request.url.path, message, exc_info=not isinstance(exc, (KBError, ServerError))
        )
    # A 500 is sent from outside the middleware (Starlette's ServerErrorMiddleware), so it
    # gets the headers every response carries here.
    headers = {**SECURITY_HEADERS, **(getattr(exc, "headers", None) or {})}
    if request.url.path.startswith(OPENAI_PREFIX):
        status = 400 if status == 422 else status  # OpenAI's status for a request it cannot use
        return JSONResponse(openai_error(status, message, exc), status, headers=headers)
    if request.url.path == MCP_PATH:
        return JSONResponse(mcp_error(status, message), status, headers=headers)
    if _wants_json(request):
        return JSONResponse({"ok": False, "error": message, "status": status}, status, headers=headers)
    query = request.query_params.get("q", "")[: app_settings(request).max_query_chars]
    context = {"status": status, "title_key": _title_key(status), "message": message, "q": query}
    response = page(request, "error.html", context, status)
    response.headers.update(headers)
    return response


OPENAI_PREFIX = "/v1/"
_OPENAI_TYPES = {401: "invalid_request_error", 403: "permission_error", 429: "rate_limit_error"}
_OPENAI_CODES = {401: "invalid_api_key", 404: "not_found", 413: "request_too_large", 429: "rate_limit_exceeded"}


def openai_error(status: int, message: str, exc: Exception | None = None) -> dict[str, Any]:
    """An error as OpenAI's API gives one: `param` names the field at fault, `code` says what kind of fault."""
    param = "messages" if isinstance(exc, QueryError) else getattr(exc, "param", None)
    if isinstance(exc, RequestValidationError) and exc.errors():
        first = exc.errors()[0]
        loc = [str(p) for p in first.get("loc", ())]
        # A body that is not JSON has no field at fault (its loc is ("body", offset)).
        param = None if first.get("type") == "json_invalid" else ".".join(loc[1:]) or None
    kind = _OPENAI_TYPES.get(status, "server_error" if status >= 500 else "invalid_request_error")
    code = getattr(exc, "code", None) or _OPENAI_CODES.get(status)
    return {"error": {"message": message, "type": kind, "param": param, "code": code}}


MCP_PATH = "/mcp"
MCP_REFUSED = -32000  # JSON-RPC's first code for a server's own errors: the request was refused before MCP read it


def mcp_error(status: int, message: str) -> dict[str, Any]:
    """An error as an MCP client reads one from any status: a JSON-RPC error (its id unknown, so null), whose
    message the SDK's client raises as it is, rather than "Server returned an error response"."""
    return {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": MCP_REFUSED, "message": message, "data": {"status": status}},
    }


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


# Paths the rate limit does not count (`RateLimit` in server/middleware.py): Slack retries on its own
# schedule, and Feishu's and DingTalk's servers send every asker's questions from a few addresses
# (their bots count each chat's instead: CHAT_LIMIT); health checks come from the load balancer,
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
