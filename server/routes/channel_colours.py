"""`GET /channels.css`: each registered channel's chart colour, in the light and the dark theme, as the classes
`/insights`'s charts and legends use (`series-<name>`). Made from the registry, so a new channel has its colour."""

from __future__ import annotations

import hashlib

from fastapi import APIRouter, Response

from ..channels import registry

__all__ = ["router", "channel_css", "css_url"]

router = APIRouter(tags=["insights"])


def channel_css() -> str:
    """The stylesheet: one rule a channel, and the same in a dark-theme media query."""
    light = [f".series-{c.name} {{ fill: {c.colour}; background: {c.colour}; }}" for c in registry.CHANNELS]
    dark = [f"  .series-{c.name} {{ fill: {c.colour_dark}; background: {c.colour_dark}; }}" for c in registry.CHANNELS]
    return "\n".join(
        [
            "/* The channels' colours (server/channels/). */",
            *light,
            "@media (prefers-color-scheme: dark) {",
            *dark,
            "}",
            "",
        ]
    )


@router.get("/channels.css", include_in_schema=False)
async def channels_css() -> Response:
    """The channels' chart colours."""
    return Response(channel_css(), media_type="text/css", headers={"Cache-Control": "public, max-age=3600"})


def css_url() -> str:
    """The stylesheet's address, with a hash of it so a browser never keeps an old one."""
    return f"/channels.css?v={hashlib.sha1(channel_css().encode()).hexdigest()[:10]}"
