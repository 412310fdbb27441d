"""The routers, one per resource: search, chat, entries, health, the pages, the widget, Slack, feedback, insights,
admin (reload, links), the API's documentation pages, the OpenAI-compatible chat API and the metrics."""

from . import (
    admin,
    api_chat,
    api_entries,
    api_search,
    docs,
    feedback,
    health,
    insights,
    links,
    metrics,
    openai_chat,
    pages,
    slack,
    widget,
)

__all__ = [
    "admin",
    "api_chat",
    "api_entries",
    "api_search",
    "docs",
    "feedback",
    "health",
    "insights",
    "links",
    "metrics",
    "openai_chat",
    "pages",
    "slack",
    "widget",
    "ROUTERS",
]

ROUTERS = [
    api_search.router,
    api_chat.router,
    api_entries.router,
    health.router,
    pages.router,
    widget.router,
    slack.router,
    feedback.router,
    insights.router,
    admin.router,
    links.router,
    docs.router,
    openai_chat.router,
    metrics.router,
]
