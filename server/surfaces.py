"""Start-up status of `/metrics`: one line, with the setting that closes it. (The channels' lines are their own:
server/channels/.)"""

from __future__ import annotations

import logging

from .settings import ServerSettings

__all__ = ["log_status"]

log = logging.getLogger("kb.server")


def log_status(settings: ServerSettings) -> None:
    """Say at start-up, at INFO, whether `/metrics` is open or needs a token."""
    if settings.metrics_token:
        log.info("Metrics on: /metrics, for scrapers sending KB_METRICS_TOKEN as a bearer token")
    else:
        log.info("Metrics on: /metrics, open to every client (set KB_METRICS_TOKEN to require a token)")
