"""A budget of log lines: at most so many a minute for one kind of event, so a flood of bad requests cannot flood the log.

A line over the budget is held back and counted; the next line that fits says how many
were held back before it ("... (37 more like this not logged)").
"""

from __future__ import annotations

import logging
import time
from typing import Any, Callable

from .ratelimit import TokenBuckets

__all__ = ["LogBudget"]


class LogBudget:
    """At most `lines` log lines each `period` seconds (a burst of `lines`, then one every `period / lines` s)."""

    def __init__(self, lines: int = 60, period: float = 60.0, clock: Callable[[], float] = time.monotonic):
        self._bucket = TokenBuckets(lines, period, clock, max_clients=1)
        self.held_back = 0  # lines not logged since the last one that was

    def warning(self, log: logging.Logger, message: str, *args: Any) -> bool:
        """Log `message % args` as a warning if the budget allows; whether it was logged."""
        if self._bucket.take("lines"):
            self.held_back += 1
            return False
        if self.held_back:
            message += f" ({self.held_back} more like this not logged)"
            self.held_back = 0
        log.warning(message, *args)
        return True
