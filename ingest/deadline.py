"""The sync's deadline (KB_SYNC_TIMEOUT): past it, the work inside stops with a SyncFailed naming the sources.

A timer signal interrupts the work (in the main thread: Python's regular expressions and loops look at signals),
ticking until the work stops, since a tick that falls where an exception would be dropped (a finalizer, a garbage
collector's callback) is not raised there; and every wait for the model looks at the deadline itself
(`kb.embedding.deadline`), whatever becomes of the signal.
"""

from __future__ import annotations

import gc
import signal
import threading
import time
from contextlib import contextmanager
from types import FrameType
from typing import Iterator, Sequence

from kb.embedding import deadline
from kb.errors import SyncFailed

__all__ = ["TICK", "sync_deadline"]


@contextmanager
def sync_deadline(seconds: float, names: Sequence[str]) -> Iterator[None]:
    """Stop the work inside past `seconds` (KB_SYNC_TIMEOUT; 0: no limit) with a SyncFailed naming the sources: a
    timer signal interrupts it (main thread only) and every wait for the model looks at the deadline itself
    (`kb.embedding.deadline`); an outer timer is kept, and this one ends no later than it."""

    def late() -> SyncFailed:
        return SyncFailed(", ".join(names) or "all", f"the sync took longer than KB_SYNC_TIMEOUT ({seconds:g} s)")

    if not seconds:
        yield
        return
    if threading.current_thread() is not threading.main_thread():
        with deadline(time.monotonic() + seconds, late):  # the model's waits only: no signal reaches this thread
            yield
        return

    over = [False]  # set first on the way out, so that a last tick raises nothing there

    def stop(signum: int, frame: FrameType | None) -> None:
        if not over[0] and not _in_finalizer(frame):  # raised in a finalizer, it would be printed and dropped
            raise late()

    outer, _ = signal.getitimer(signal.ITIMER_REAL)
    started = time.monotonic()
    previous = signal.signal(signal.SIGALRM, stop)
    # Then a tick every TICK until the work stops: one that fell where it could not raise is followed by another.
    signal.setitimer(signal.ITIMER_REAL, min(seconds, outer) if outer else seconds, TICK)
    try:
        with deadline(started + seconds, late):  # the model's waits too, whatever becomes of the signal
            yield
    finally:
        over[0] = True
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        if outer:  # the outer deadline goes on, at least a moment left so that it still fires
            signal.setitimer(signal.ITIMER_REAL, max(outer - (time.monotonic() - started), 0.001))


TICK = 0.2  # seconds between the deadline's signals once it has passed


def _in_finalizer(frame: FrameType | None) -> bool:
    """Whether `frame` runs where an exception is dropped: a finalizer (`__del__`, `weakref.finalize`) or a
    garbage collector's callback (`gc.callbacks`, as a test tool may install)."""
    callbacks = {getattr(callback, "__code__", None) for callback in gc.callbacks}
    while frame is not None:
        code = frame.f_code
        if code.co_name == "__del__" or code.co_filename.endswith("weakref.py") or code in callbacks:
            return True
        frame = frame.f_back
    return False
