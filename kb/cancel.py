"""A streamed answer's cancel signal: set from any thread when its reader has gone.

A thread reading the LLM's stream may be blocked waiting for its next line, which a slow
model may not send for seconds; checking a flag between lines does not stop it. So what is
open for the reader registers a way to close itself (`closing`), and `set` closes it at
once, from the thread that noticed the reader leave.
"""

from __future__ import annotations

import logging
import threading
from contextlib import contextmanager
from typing import Callable, Iterator

__all__ = ["Cancel"]

log = logging.getLogger("kb")


class Cancel:
    """Set once the reader has gone; `set` runs the closers registered with `closing`."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._set = False
        self._closers: list[Callable[[], None]] = []

    def is_set(self) -> bool:
        return self._set

    def set(self) -> None:
        with self._lock:  # held while closing, so nothing is closed after its block has ended
            if self._set:
                return
            self._set = True
            for close in self._closers:
                _run(close)
            self._closers.clear()

    @contextmanager
    def closing(self, close: Callable[[], None]) -> Iterator[None]:
        """While in the block, `set` calls `close` (at once, if already set)."""
        with self._lock:
            if self._set:
                _run(close)
            else:
                self._closers.append(close)
        try:
            yield
        finally:
            with self._lock:
                if close in self._closers:
                    self._closers.remove(close)


def _run(close: Callable[[], None]) -> None:
    try:
        close()
    except OSError as exc:  # already closed from its side: nothing more to stop
        log.debug("closing a cancelled stream: %s", exc)
