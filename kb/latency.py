"""Latency counts: how long a step took, counted in fixed buckets, for operators' dashboards.

The library counts without depending on a metrics package: the embedder counts each model
run here (`Embedder.runs`), and the server exports the counts in Prometheus's format
(server/metrics.py) when it is scraped. Counting is a few additions under a lock.
"""

from __future__ import annotations

import bisect
import threading

__all__ = ["Latencies", "BUCKETS"]

# Upper bounds in seconds: a short question is embedded in about 10 ms, a long one or a batch in 50 ms or more.
BUCKETS: tuple[float, ...] = (0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5)


class Latencies:
    """How many durations fell at or under each bound of `bounds` (and above the last), and their sum."""

    def __init__(self, bounds: tuple[float, ...] = BUCKETS) -> None:
        self.bounds = bounds
        self._counts = [0] * (len(bounds) + 1)
        self._sum = 0.0
        self._lock = threading.Lock()

    def observe(self, seconds: float) -> None:
        index = bisect.bisect_left(self.bounds, seconds)
        with self._lock:
            self._counts[index] += 1
            self._sum += seconds

    def snapshot(self) -> tuple[list[int], float]:
        """The counts per bucket (not cumulative; the last is above every bound) and the sum of seconds."""
        with self._lock:
            return list(self._counts), self._sum
