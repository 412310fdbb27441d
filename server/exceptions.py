"""The web app's own errors: what a request did wrong that only a server sees (a chat platform's signature or payload).

They share `ServerError` as their base, apart from the library's `KBError`; each carries its HTTP
status, which the one handler (server/error_handler.py) answers with.
"""

from __future__ import annotations

from pydantic import ValidationError

__all__ = ["ServerError", "invalid_field"]


class ServerError(Exception):
    """A request the web app refuses; the message says what was wrong and with which value.

    `status` is its HTTP status: a subclass (a channel's bad signature, 401; its bad payload, 400) sets its own.
    A channel's refusal names the channel (`channel`): the one handler (server/error_handler.py) logs it through that
    channel's budget of log lines (`Guard.refused`), one line per route and `cause` a window, as `sender ... refused`.
    """

    status = 500  # a subclass says what the request did wrong with its own
    channel = ""  # the channel refusing the request (its registry name), whose log budget counts it; "" for none
    sender = ""  # how its log line names the request: "Slack request to {path}"
    refusal = ""  # what the response's message opens with: "not a valid Slack request" ("": the message alone)

    @property
    def cause(self) -> str:
        """The kind of refusal, for its log budget: a fixed string, never one from the request."""
        return type(self).__name__

    @property
    def said(self) -> str:
        """The message the response carries."""
        return f"{self.refusal}: {self}" if self.refusal else str(self)


def invalid_field(exc: ValidationError, root: str) -> str:
    """The first thing pydantic found wrong, named from `root`: `payload.actions.0.value: Input should be a valid string`."""
    error = exc.errors()[0]
    return f"{root}.{'.'.join(str(part) for part in error['loc'])}: {error['msg']}"
