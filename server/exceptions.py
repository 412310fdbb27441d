"""The web app's own errors: what a request did wrong that only a server sees (a Slack signature, a Slack payload).

They share `ServerError` as their base, apart from the library's `KBError`; the one handler
(server/errors.py) gives each its HTTP status by class, as it does the library's.
"""

from __future__ import annotations

__all__ = ["ServerError"]


class ServerError(Exception):
    """A request the web app refuses; the message says what was wrong and with which value."""
