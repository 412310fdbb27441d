"""The seam between the harvest and a tracker: what `kb harvest --repo` reads threads through.

A tracker lists a repository's resolved threads (closed issues, answered Discussions), each read whole as a
`Thread`, and fetches one thread by its number. The harvest knows no tracker by name: `kb harvest` is handed one
(`trackers.tracker_for`, which reads the tracker's own settings), and the rules, drafts and insights see only threads.
"""

from __future__ import annotations

from typing import Callable, Iterator, Protocol

from .threads import Thread

__all__ = ["Tracker"]


class Tracker(Protocol):
    """Where a repository's threads are read from: its API, within the deadline it was opened with."""

    def resolved(
        self, repo: str, since: str = "", limit: int = 10_000, refused: Callable[[str], None] | None = None
    ) -> Iterator[Thread]:
        """The resolved threads of `repo` (owner/name) updated since `since` (ISO 8601, "" for all), at most `limit`,
        each read whole; one refused on its own (`ThreadRefused`) is said to `refused` (else raised); HarvestError
        when the tracker cannot be read."""
        ...

    def thread(self, repo: str, number: int) -> Thread:
        """One thread of `repo`, read whole; HarvestError when it cannot be."""
        ...
