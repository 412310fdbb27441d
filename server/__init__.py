"""The web server: the JSON API, the search, entry and chat pages."""

from .app import create_app

__all__ = ["create_app"]
