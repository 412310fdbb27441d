"""The web server: the JSON API, the search, entry and chat pages.

`create_app` loads on first use, so that `server.settings` can be read (by the `kb`
command) without loading the web app.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .app import create_app

__all__ = ["create_app"]


def __getattr__(name: str) -> Any:
    if name == "create_app":
        from .app import create_app

        return create_app
    raise AttributeError(f"module 'server' has no attribute {name!r}")
