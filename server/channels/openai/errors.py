"""The OpenAI-compatible API's errors in OpenAI's shape, `{"error": {"message", "type", "param", "code"}}`, on `/v1/`.

The app's one handler (server/error_handler.py) asks the channel whose prefix a failed request's
path is under for its error body (the channel's plugin hands it this module's); a request OpenAI would find
not valid is a 400 here too, where the app's own API answers 422.
"""

from __future__ import annotations

from typing import Any

from fastapi.exceptions import RequestValidationError

from kb.errors import QueryError

__all__ = ["error_body", "openai_error"]

_TYPES = {401: "invalid_request_error", 403: "permission_error", 429: "rate_limit_error"}
_CODES = {401: "invalid_api_key", 404: "not_found", 413: "request_too_large", 429: "rate_limit_exceeded"}


def error_body(path: str, status: int, message: str, exc: Exception | None) -> tuple[int, dict[str, Any]]:
    """(status, body) of an error on the API's paths: OpenAI's status for a request it cannot use, and its shape."""
    status = 400 if status == 422 else status
    return status, openai_error(status, message, exc)


def openai_error(status: int, message: str, exc: Exception | None = None) -> dict[str, Any]:
    """An error as OpenAI's API gives one: `param` names the field at fault, `code` says what kind of fault."""
    param = "messages" if isinstance(exc, QueryError) else getattr(exc, "param", None)
    if isinstance(exc, RequestValidationError) and exc.errors():
        first = exc.errors()[0]
        loc = [str(p) for p in first.get("loc", ())]
        # A body that is not JSON has no field at fault (its loc is ("body", offset)).
        param = None if first.get("type") == "json_invalid" else ".".join(loc[1:]) or None
    kind = _TYPES.get(status, "server_error" if status >= 500 else "invalid_request_error")
    code = getattr(exc, "code", None) or _CODES.get(status)
    return {"error": {"message": message, "type": kind, "param": param, "code": code}}
