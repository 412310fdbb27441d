"""The site's routers, one per resource: search, chat, entries, health, the pages, the widget, feedback, insights
(its gaps' forms apart), the answers written on the insights page, admin (reload, taught links), the API's
documentation pages and the metrics. The chat platforms' and agents' routes are their channels' (server/channels/)."""

from . import (
    admin_reload,
    api_chat,
    api_entries,
    api_search,
    channel_colours,
    docs,
    feedback,
    gaps,
    harvested,
    health,
    insights,
    metrics,
    pages,
    taught_links,
    widget,
    written,
)

__all__ = [
    "admin_reload",
    "api_chat",
    "api_entries",
    "api_search",
    "channel_colours",
    "docs",
    "feedback",
    "gaps",
    "harvested",
    "health",
    "insights",
    "metrics",
    "pages",
    "taught_links",
    "widget",
    "written",
    "ROUTERS",
]

ROUTERS = [
    api_search.router,
    api_chat.router,
    api_entries.router,
    health.router,
    pages.router,
    channel_colours.router,
    widget.router,
    feedback.router,
    insights.router,
    gaps.router,
    written.router,
    harvested.router,
    admin_reload.router,
    taught_links.router,
    docs.router,
    metrics.router,
]
