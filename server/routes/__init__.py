"""The routers, one per resource: search, chat, entries, health, and the pages."""

from . import api_chat, api_entries, api_search, health, pages

__all__ = ["api_chat", "api_entries", "api_search", "health", "pages", "ROUTERS"]

ROUTERS = [api_search.router, api_chat.router, api_entries.router, health.router, pages.router]
