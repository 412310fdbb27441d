"""The trackers `kb harvest --repo` reads threads from (`kb.harvest.tracker.Tracker`): GitHub's issues and Discussions.

`tracker_for` opens one with the harvest's own settings (`TrackerSettings`: its API URL and token), so a harvest
runs whether or not the GitHub bot is registered; `environment` gives those settings to a harvest run as a process
of its own (server/harvesting.py).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, Callable

from .settings import TrackerSettings, environment

if TYPE_CHECKING:
    from kb.harvest.tracker import Tracker

__all__ = ["KINDS", "TrackerSettings", "environment", "tracker_for"]

KINDS = ("issues", "discussions")  # what a tracker can be asked for: closed issues, or answered Discussions


def tracker_for(settings: Any, kind: str, deadline: float, sleep: Callable[[float], None] = time.sleep) -> Tracker:
    """The tracker of `kind` (one of KINDS) these settings read, every read within `deadline` seconds."""
    from .github.discussions import Discussions
    from .github.issues import Issues
    from .settings import api_url, token

    if kind not in KINDS:
        raise ValueError(f"tracker kind {kind!r}: one of {', '.join(KINDS)}")
    opened = Issues if kind == "issues" else Discussions
    return opened(api_url(settings), token(settings), deadline, sleep)
