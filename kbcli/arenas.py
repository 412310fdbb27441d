"""Fewer glibc malloc arenas for a long-running server, unless the environment already says how many.

glibc gives each thread that allocates an arena of its own, up to eight per core, and each
keeps the memory of its busiest moment. A server's request threads all allocate, so its memory
climbs for minutes after start-up and stays there (see docs/deployment.md#memory). Two arenas
are what `MALLOC_ARENA_MAX=2` gives. Elsewhere than glibc (musl, macOS) nothing changes.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os

__all__ = ["ARENAS", "fewer_arenas"]

ARENAS = 2
_M_ARENA_MAX = -8  # glibc's malloc.h


def fewer_arenas() -> bool:
    """Cap this process's arenas and its workers' (through the environment they inherit); False when the
    environment sets `MALLOC_ARENA_MAX` itself or the C library has no such option."""
    if "MALLOC_ARENA_MAX" in os.environ:
        return False
    os.environ["MALLOC_ARENA_MAX"] = str(ARENAS)  # read by the C library of every worker process started later
    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name)
        mallopt = libc.mallopt
    except (OSError, AttributeError, TypeError):
        return False
    return bool(mallopt(_M_ARENA_MAX, ARENAS))
