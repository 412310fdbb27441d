"""Start-up status of `/insights` and `/metrics`: a line each, saying how to get in (the admin token's,
server/admin_token.py). (The channels' lines are their own: server/channels/.)"""

from __future__ import annotations

import logging

from . import admin_token
from .settings import ServerSettings

__all__ = ["log_status"]

log = logging.getLogger("kb.server")


def log_status(settings: ServerSettings) -> None:
    """Say at start-up, at INFO, whether `/insights` is on and how to sign in, and whether `/metrics` is open or
    needs a token."""
    log.info("%s", admin_token.status(settings))
    if settings.metrics_token:
        log.info("Metrics on: /metrics, for scrapers sending KB_METRICS_TOKEN as a bearer token")
    else:
        log.info("Metrics on: /metrics, open to every client (set KB_METRICS_TOKEN to require a token)")
