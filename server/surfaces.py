"""Start-up status of the agent and operator surfaces (`/mcp`, `/v1`, `/metrics`): one line each, with the
setting that turns it on or closes it."""

from __future__ import annotations

import logging

from .settings import ServerSettings

__all__ = ["log_status"]

log = logging.getLogger("kb.server")


def log_status(settings: ServerSettings) -> None:
    """Say at start-up, at INFO, whether `/mcp`, `/v1` and `/metrics` are on and who may use them."""
    if settings.mcp_token:
        log.info("MCP server on: /mcp, for clients sending KB_MCP_TOKEN as a bearer token")
    else:
        log.info("MCP server off: KB_MCP_TOKEN is not set, so /mcp answers 404 (`kb mcp` over stdio needs none)")
    if settings.api_keys:
        log.info("OpenAI-compatible API on: /v1/, for clients sending one of KB_API_KEYS as a bearer token")
    else:
        log.info("OpenAI-compatible API on: /v1/, open to every client (set KB_API_KEYS to require a key)")
    if settings.metrics_token:
        log.info("Metrics on: /metrics, for scrapers sending KB_METRICS_TOKEN as a bearer token")
    else:
        log.info("Metrics on: /metrics, open to every client (set KB_METRICS_TOKEN to require a token)")
