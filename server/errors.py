"""The one exception handler: a kb error, an HTTP error or bad input becomes an HTML page or JSON.

API and Slack paths (and clients that ask for JSON rather than HTML) get `{"ok": false, "error": "...", "status": N}`;
pages get the error page in the reader's language, with a search box.
"""

from __future__ import annotations

import logging

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from starlette.exceptions import HTTPException as StarletteHTTPException

from kb.errors import EntryNotFound, IndexError_, KBError, QueryError, SettingsError
from kb.llm import LLMError

from .templating import page

__all__ = ["handle_error", "install_error_handler", "describe"]

log = logging.getLogger("kb.server")

_STATUS: list[tuple[type[KBError], int]] = [
    (EntryNotFound, 404),
    (QueryError, 422),
    (IndexError_, 503),
    (LLMError, 502),
    (SettingsError, 500),
]


def _validation_message(exc: RequestValidationError) -> str:
    parts = []
    for error in exc.errors():
        loc = [str(p) for p in error.get("loc", ())]
        # ("body", "message") names the field "message"; ("query", "k") names "k".
        field = ".".join(loc[1:]) if len(loc) > 1 else ".".join(loc)
        message = error.get("msg", "invalid")
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
    if isinstance(exc, KBError):
        status = next((code for cls, code in _STATUS if isinstance(exc, cls)), 500)
        return status, str(exc)
    return 500, "internal error"


def _wants_json(request: Request) -> bool:
    path = request.url.path
    if path.startswith(("/api/", "/slack/", "/admin/")) or path == "/healthz":
        return True
    accept = request.headers.get("accept", "")
    return "application/json" in accept and "text/html" not in accept


async def handle_error(request: Request, exc: Exception) -> Response:
    status, message = describe(exc)
    if status >= 500:
        log.error("%s %s: %s", request.method, request.url.path, message, exc_info=not isinstance(exc, KBError))
    headers = getattr(exc, "headers", None)
    if _wants_json(request):
        return JSONResponse({"ok": False, "error": message, "status": status}, status, headers=headers)
    title = f"error_title_{status}" if status in (404, 422, 503) else "error_title_500"
    query = request.query_params.get("q", "")[: request.app.state.settings.max_query_chars]
    response = page(request, "error.html", {"status": status, "title_key": title, "message": message, "q": query}, status)
    if headers:
        response.headers.update(headers)
    return response


def install_error_handler(app: FastAPI) -> None:
    for cls in (KBError, StarletteHTTPException, RequestValidationError, Exception):
        app.add_exception_handler(cls, handle_error)
