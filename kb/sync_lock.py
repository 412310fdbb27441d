"""The sync's lock and its staging copies under a data directory: held by `kb sync` (ingest/sync.py) while it
syncs, and by the server when it cleans up after a `kb sync` it had to kill."""

from __future__ import annotations

import fcntl
import shutil
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

__all__ = ["SYNC_DIR", "STAGING_PREFIX", "turn", "remove_stale_staging"]

SYNC_DIR = "sync"  # under the data directory: the repositories' mirrors, the lock, the last sync
STAGING_PREFIX = ".staging-"  # a sync's copies of the folders it syncs, under SYNC_DIR


@contextmanager
def turn(folder: Path, wait: bool) -> Iterator[bool]:
    """Hold the sync lock of a data directory; yields False (at once) when `wait` is False and another holds it."""
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / ".lock", "a") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
        except BlockingIOError:
            yield False
            return
        yield True


def remove_stale_staging(folder: Path) -> None:
    """Remove the staging copies a killed sync left: called holding the lock, so none is a live sync's."""
    for path in folder.glob(STAGING_PREFIX + "*"):
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path, ignore_errors=True)
