"""The harvest's own settings for reading a tracker: the API it asks and the token it asks with (`KB_HARVEST_*`).

`TrackerSettings` is part of the server's settings (server/settings.py), so `kb harvest --repo` and the server's
harvests read them whether or not the GitHub bot is registered. Left empty, each is what the GitHub bot's setting
of the same meaning says (`KB_GITHUB_API_URL`, `KB_GITHUB_TOKEN`), read from the bot's settings when it is
registered and from the environment when it is not, as deployments set them before the harvest had its own.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Mapping

from kb.settings import setting

__all__ = ["TrackerSettings", "api_url", "token", "environment"]

GITHUB_API = "https://api.github.com"


@dataclass(frozen=True)
class TrackerSettings:
    """Where `kb harvest --repo` reads threads, and with which token."""

    harvest_api_url: str = setting(
        "",
        "the tracker's API that `kb harvest --repo` reads (GitHub's; an Enterprise server's is "
        "`https://github.example.com/api/v3`); empty: `KB_GITHUB_API_URL`'s, else `https://api.github.com`",
    )
    harvest_token: str = setting(
        "",
        "the token `kb harvest --repo` reads the tracker with (read access to issues and discussions is enough; "
        "without one, GitHub allows 60 requests an hour); empty: `KB_GITHUB_TOKEN`'s",
    )


def _given(settings: Any, own: str, bots: str, environ: Mapping[str, str] | None) -> str:
    """The harvest's setting `own`, else the GitHub bot's `bots` (from its settings, else from the environment)."""
    value = getattr(settings, own, "") or getattr(settings, bots, None)
    if value is None:
        value = (os.environ if environ is None else environ).get("KB_" + bots.upper(), "")
    return str(value or "")


def api_url(settings: Any, environ: Mapping[str, str] | None = None) -> str:
    """The API `kb harvest --repo` reads."""
    return _given(settings, "harvest_api_url", "github_api_url", environ) or GITHUB_API


def token(settings: Any, environ: Mapping[str, str] | None = None) -> str:
    """The token `kb harvest --repo` reads with ("" for none)."""
    return _given(settings, "harvest_token", "github_token", environ)


def environment(settings: Any) -> dict[str, str]:
    """The harvest's settings as the variables that give them, for a `kb harvest` of its own process."""
    return {"KB_HARVEST_API_URL": api_url(settings), "KB_HARVEST_TOKEN": token(settings)}
