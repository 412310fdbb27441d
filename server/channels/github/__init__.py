"""GitHub: new issues and Discussions answered from the FAQ, only when it is sure (a webhook at `/github/webhook`,
and `kb github answer` for a workflow run). Signatures, events, the comment, the API client, the routes."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from kb.channel_points import PUBLIC_COMMENT_PRECISION

from ..channel import Channel
from ..plugin import ChannelPlugin
from .settings import GitHubSettings

__all__ = ["CHANNEL", "GitHubPlugin"]

if TYPE_CHECKING:
    from contextlib import AsyncExitStack

    from fastapi import APIRouter, FastAPI, Request

    from kb.insights.service import Insights

    from ...settings import ServerSettings


class GitHubPlugin(ChannelPlugin):
    """`/github/webhook` and the suggested answers' routes (routes.py), their panel on /insights (panel.py), `kb github`
    (command.py)."""

    templates = Path(__file__).parent / "templates"
    panel_template = "_insights_suggested.html"  # its suggested answers on /insights (panel.py)

    def router(self) -> APIRouter:
        from .routes import router

        return router

    def install(self, app: FastAPI, settings: ServerSettings) -> None:
        from .routes import install

        install(app, settings)

    async def start(self, app: FastAPI, stack: AsyncExitStack) -> None:
        from .routes import start

        await start(app, stack)

    async def panel(self, request: Request, insights: Insights) -> dict[str, Any] | None:
        from .panel import panel

        return await panel(request, insights)

    def add_parser(self, sub: Any) -> None:
        from .command import add_parser  # `kb github answer`

        add_parser(sub)


def _status(settings: GitHubSettings) -> str:
    if settings.github_webhook_secret:
        if settings.github_app_id:
            how = "as the GitHub App"
        elif settings.github_token:
            how = "as a token's user"
        else:
            how = "with no token: nothing is posted (suggestions wait on /insights; pushes still sync)"
        return f"GitHub bot on: /github/webhook, mode {settings.github_mode}, {how}, API at {settings.github_api_url}"
    return "GitHub bot off: KB_GITHUB_WEBHOOK_SECRET is not set, so /github/webhook answers 404"


CHANNEL = Channel(
    name="github",
    label_en="GitHub issues",
    label_zh="GitHub 议题",
    colour="#1f2937",
    colour_dark="#e5e7eb",
    docs="docs/channels.md#github-issues-and-discussions",
    asks=("search",),
    settings=("github_webhook_secret",),
    plugin=GitHubPlugin(),
    prefix="/github/",
    off="the GitHub bot is off: set KB_GITHUB_WEBHOOK_SECRET to the webhook's secret",
    platform=True,
    chat_ids="github_record_issues",
    precision=PUBLIC_COMMENT_PRECISION,  # a comment on an issue is public: kb/channel_points.py
    reads="issue",  # an issue read whole: judged by the confidence fitted on whole issues
    settings_class=GitHubSettings,
    status=_status,
)
