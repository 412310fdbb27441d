"""The builds directory beside the index link: one writer at a time, unfinished and old builds removed.

    $KB_DATA_DIR/builds/<stamp>/            a finished build (see kb/index.py)
    $KB_DATA_DIR/builds/.<stamp>.partial/   a build being written, or one a killed ingest left
    $KB_DATA_DIR/builds/.lock               locked by the ingest writing a build

Writing a build holds `.lock` (an exclusive `flock`; a second ingest waits the few hundred
milliseconds the write takes), so a `.partial` directory found while holding it belongs to
no live ingest: a killed one left it, and it is removed. A server holds a shared lock on
the build it serves; pruning keeps the newest `KEEP` builds and any build a server holds.
Locks die with their process, so a killed server or ingest holds nothing.
"""

from __future__ import annotations

import fcntl
import os
import shutil
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable, Iterator, TypeVar

from .errors import IndexMoved, IndexUnreadable

__all__ = ["KEEP", "writing", "swap_in", "prune", "hold", "release", "in_use"]

KEEP = 3  # finished builds kept: the newest, and two to go back to by pointing the link at one
PARTIAL = ".partial"
LINK_PREFIX = ".index-"  # the next index link, made beside it and renamed over it

T = TypeVar("T")


@contextmanager
def writing(builds: Path) -> Iterator[None]:
    """Hold the write lock of `builds` (waiting for another ingest's write); builds left unfinished are removed first."""
    builds.mkdir(parents=True, exist_ok=True)
    with open(builds / ".lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        _remove_leftovers(builds)
        yield  # closing the file releases the lock


def swap_in(index_dir: Path, write: Callable[[Path], T], replacing: Path | None = None) -> T:
    """Have `write` fill a new build directory, then point `index_dir` at it in one rename
    (with `replacing`, only if `index_dir` still points at that build)."""
    builds_dir = index_dir.parent / "builds"
    with writing(builds_dir):  # one ingest writes at a time; what a killed one left is removed
        if replacing is not None and index_dir.resolve() != replacing.resolve():
            raise IndexMoved(index_dir, replacing, index_dir.resolve())
        stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S%f")
        build = builds_dir / stamp
        tmp = builds_dir / f".{stamp}{PARTIAL}"
        tmp.mkdir()
        try:
            written = write(tmp)
            os.rename(tmp, build)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        link = index_dir.parent / f"{LINK_PREFIX}{stamp}"
        os.symlink(Path("builds") / stamp, link)
        if index_dir.exists() and not index_dir.is_symlink():
            link.unlink()
            raise IndexUnreadable(index_dir, "exists and is not an index link; move it away first")
        os.replace(link, index_dir)  # atomic: readers see the old build or the new one
        prune(builds_dir, current=stamp)
    return written


def _remove_leftovers(builds: Path) -> None:
    for path in builds.iterdir():
        if path.name.startswith(".") and path.name.endswith(PARTIAL):
            shutil.rmtree(path, ignore_errors=True)
    for link in builds.parent.glob(LINK_PREFIX + "*"):
        if link.is_symlink():
            link.unlink(missing_ok=True)


def prune(builds: Path, current: str, keep: int = KEEP) -> list[str]:
    """Remove finished builds older than the newest `keep`, except `current` and those a server holds; returns their names."""
    finished = sorted(p for p in builds.iterdir() if p.is_dir() and not p.name.startswith("."))
    removed = []
    for old in finished[:-keep] if keep else finished:
        if old.name != current and not in_use(old):
            shutil.rmtree(old, ignore_errors=True)
            removed.append(old.name)
    return removed


def hold(build: Path) -> int:
    """Mark `build` as served by this process (a shared lock on it), so no ingest prunes it; returns what `release` takes."""
    fd = os.open(build, os.O_RDONLY | os.O_DIRECTORY)
    fcntl.flock(fd, fcntl.LOCK_SH)
    return fd


def release(held: int) -> None:
    os.close(held)


def in_use(build: Path) -> bool:
    """Whether some process holds `build` (see `hold`)."""
    try:
        fd = os.open(build, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return False
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
