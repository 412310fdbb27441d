"""The web app's own errors: what a request did wrong that only a server sees (a chat platform's signature or payload).

They share `ServerError` as their base, apart from the library's `KBError`; each carries its HTTP
status, which the one handler (server/errors.py) answers with.
"""

from __future__ import annotations

from pydantic import ValidationError

__all__ = ["ServerError", "invalid_field"]


class ServerError(Exception):
    """A request the web app refuses; the message says what was wrong and with which value.

    `status` is its HTTP status: a subclass (a channel's bad signature, 401; its bad payload, 400) sets its own."""

    status = 500  # a subclass says what the request did wrong with its own


def invalid_field(exc: ValidationError, root: str) -> str:
    """The first thing pydantic found wrong, named from `root`: `payload.actions.0.value: Input should be a valid string`."""
    error = exc.errors()[0]
    return f"{root}.{'.'.join(str(part) for part in error['loc'])}: {error['msg']}"
