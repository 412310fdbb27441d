"""The routers, one per resource: search, chat, entries, health, the pages, the widget, Slack, feedback and insights."""

from . import api_chat, api_entries, api_search, feedback, health, insights, pages, slack, widget

__all__ = [
    "api_chat", "api_entries", "api_search", "feedback", "health", "insights", "pages", "slack", "widget", "ROUTERS",
]

ROUTERS = [
    api_search.router, api_chat.router, api_entries.router, health.router, pages.router,
    widget.router, slack.router, feedback.router, insights.router,
]
