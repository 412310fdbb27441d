"""Progress where there is no terminal (a pipe, a log, `make serve`): a line every few seconds.

A bar redrawn in place means nothing in a log, and a first `kb ingest` embeds for minutes on
a busy machine; so each stage says what it does when it starts, then, every `every` seconds
until the block ends, how far it is, how fast it goes and how long it has left:

    kb ingest: entry texts embedded 48/118, 2.1 a second, about 33 s left

A thread of its own writes the lines, so a slow batch (or a step that reports nothing)
does not stop them.
"""

from __future__ import annotations

import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Callable, Iterator, TextIO

__all__ = ["ProgressLines", "progress_lines", "STAGES"]

# What each stage's count is of, as a line names it; any other stage by its own name.
STAGES = {
    "fetch": "upstream repositories fetched",
    "compare": "removed entries weighed against the new",
    "embed": "entry texts embedded",
    "background": "background sentences embedded",
    "learned": "learned questions embedded",
    "questions": "entry questions embedded",
    "background questions": "background questions embedded",
    "threads": "threads read",
}


@dataclass
class _Stage:
    name: str
    total: int
    done: int
    started: float  # on the clock
    first: int  # done when it started (the cache's share), not counted in the rate


class ProgressLines:
    """A progress callback `(stage, done, total)` that keeps the latest count, and `line()`, what
    it says now; `tick()` writes that line when one is due (at a new stage, or `every` seconds
    after the last). `clock` is injected for tests."""

    def __init__(
        self, prefix: str, stream: TextIO, every: float = 5.0, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.prefix, self.stream, self.every, self.clock = prefix, stream, every, clock
        self.stage: _Stage | None = None
        self.last: float | None = None  # when the last line was written
        self.fresh = False  # a stage began since the last line
        self.lock = threading.Lock()

    def __call__(self, stage: str, done: int, total: int) -> None:
        with self.lock:
            if self.stage is None or self.stage.name != stage:
                self.stage = _Stage(stage, total, done, self.clock(), done)
                self.fresh = True
            self.stage.done, self.stage.total = done, total
        self.tick()

    def tick(self) -> None:
        with self.lock:
            now = self.clock()
            due = self.stage is not None and (self.fresh or self.last is None or now - self.last >= self.every)
            if not due:
                return
            text = self.line(now)
            self.last, self.fresh = now, False
        print(text, file=self.stream, flush=True)

    def line(self, now: float) -> str:
        stage = self.stage
        assert stage is not None
        what = STAGES.get(stage.name, stage.name)
        head = f"{self.prefix}: {what} {stage.done}/{stage.total}"
        if stage.done >= stage.total:
            return f"{head}, done" if self.fresh else f"{head}, done; still working"
        counted, elapsed = stage.done - stage.first, now - stage.started
        if counted <= 0 or elapsed <= 0:
            return f"{head}, starting" if elapsed < self.every else f"{head}, {elapsed:.0f} s on the first batch"
        rate = counted / elapsed
        return f"{head}, {rate:.1f} a second, about {_duration((stage.total - stage.done) / rate)} left"


def _duration(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 90 else f"{seconds / 60:.0f} min"


@contextmanager
def progress_lines(
    prefix: str, stream: TextIO, every: float = 5.0, clock: Callable[[], float] = time.monotonic
) -> Iterator[ProgressLines]:
    """A ProgressLines whose lines a thread writes while the block runs (checked twice a second)."""
    lines = ProgressLines(prefix, stream, every, clock)
    stop = threading.Event()

    def run() -> None:
        while not stop.wait(0.5):
            lines.tick()

    ticker = threading.Thread(target=run, name="progress-lines", daemon=True)
    ticker.start()
    try:
        yield lines
    finally:
        stop.set()
        ticker.join()
