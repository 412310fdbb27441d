"""`ChannelPlugin`: what a channel's package gives the app besides its declaration, each part a no-op by default.

A `Channel` (server/channels/channel.py) is data; its `plugin` is its code, an instance of a subclass of this base
that overrides the parts the channel has, as an httpx transport overrides `BaseTransport` and an llm plugin
implements its hooks. mypy checks each override against the base. The plugin's module imports nothing heavy: each
part imports what it needs when it is called, so a channel that is off loads none of its routes.

- `router()`, `install(app, settings)`, `async start(app, stack)`: asked only when the channel is on (server/app.py):
  its routes, the state they keep on `app.state`, and what runs for the app's lifetime, entered on `stack`.
- `error_body(path, status, message, exc)`: an error under its prefix in a format of its own
  (server/error_handler.py), on or off: (status, JSON body), or None to leave it to the app's `{"ok": false, ...}`.
- `async panel(request, insights)`: its panel's context on `/insights` (server/routes/insights.py), drawn with
  `panel_template`; None when there is nothing to show.
- `templates`: a directory of its own templates, searched after the core `templates/` (its panel's template).
- `add_parser(sub)`: its `kb` subcommands (kbcli/cli.py), added when the parser is built.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from contextlib import AsyncExitStack

    from fastapi import APIRouter, FastAPI, Request

    from kb.insights.service import Insights

__all__ = ["ChannelPlugin", "ErrorBody"]

ErrorBody = tuple[int, dict[str, Any]]  # (status, JSON body) of an error in a channel's own format


class ChannelPlugin:
    """A channel's code, as the app, the error handler, `/insights` and the `kb` command ask for it."""

    templates: Path | None = None  # its own templates' directory (None: it has none)
    panel_template: str = ""  # the template that draws its `/insights` panel, found under `templates`

    def router(self) -> APIRouter | None:
        """Its routes, included in the app when it is on (None: it has none, or mounts its own app in `install`)."""
        return None

    def install(self, app: FastAPI, settings: Any) -> None:
        """Keep on `app.state` what its routes need, when it is on. `settings` is the server's `ServerSettings`,
        which composes every registered channel's own (so the contract names it and does not import it)."""

    async def start(self, app: FastAPI, stack: AsyncExitStack) -> None:
        """Start what must run for the app's lifetime, entered on `stack` (closed when the app stops)."""

    def error_body(self, path: str, status: int, message: str, exc: Exception | None) -> ErrorBody | None:
        """(status, JSON body) of an error on `path`, under its prefix; None: the app's own error body."""
        return None

    async def panel(self, request: Request, insights: Insights) -> dict[str, Any] | None:
        """The context of its panel on `/insights` (drawn with `panel_template`); None: nothing to show."""
        return None

    def add_parser(self, sub: Any) -> None:
        """Add its `kb` subcommands to the command's subparsers (each setting its `run`)."""
