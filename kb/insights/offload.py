"""Running a blocking call of the insights store off the event loop, typed as the call is.

`await off_loop(store.votes.add, votes)` runs `store.votes.add(votes)` in a worker thread and
gives back what it returns; the arguments are checked against the method's own signature.
`Insights.run` (`service.py`) is the same with the errors a server answers.
"""

from __future__ import annotations

import asyncio
from typing import Callable, ParamSpec, TypeVar

__all__ = ["off_loop"]

P = ParamSpec("P")
T = TypeVar("T")


async def off_loop(fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
    """`fn(*args, **kwargs)` in a worker thread, so the event loop serves others meanwhile."""
    return await asyncio.to_thread(fn, *args, **kwargs)
