"""Permalinks: an entry's page on this server, from the server's root URL (`base_url` in server/deps.py)."""

from __future__ import annotations

from typing import Callable

from kb.hits import Hit

__all__ = ["permalink", "permalinks"]


def permalink(root: str, entry_id: str) -> str:
    """The entry's page on this server; `root` ends with "/"."""
    return f"{root}entries/{entry_id}"


def permalinks(root: str) -> Callable[[Hit], str]:
    """Where a citation links: the cited entry's page on this server."""
    return lambda hit: permalink(root, hit.entry.id)
