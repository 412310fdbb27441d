"""Streamed answers as server-sent events: a blocking stream of events read for a reader who may leave.

The chat's events come from a blocking iterator (the LLM writes as it is read). `read_in_thread`
reads it in a worker thread, one event at a time; when the reader goes, the server cancels the
response (Starlette does on `http.disconnect`), and the `Cancel` the stream was started with is
set, which closes the LLM's connection at once, not at its next line. Both `/api/chat` and
`/v1/chat/completions` stream through here.
"""

from __future__ import annotations

import asyncio
from typing import AsyncIterator, Iterator, TypeVar

from fastapi.responses import StreamingResponse

from kb.cancel import Cancel

__all__ = ["read_in_thread", "event_stream"]

T = TypeVar("T")
_END = object()


async def read_in_thread(events: Iterator[T], cancel: Cancel) -> AsyncIterator[T]:
    """Each of `events`, read in a worker thread; `cancel` is set when this ends for any reason: the
    events done, the reader gone (the task cancelled), or the generator closed."""
    try:
        while True:
            event = await asyncio.to_thread(next, events, _END)
            if event is _END:
                return
            yield event  # type: ignore[misc]  # not _END
    finally:
        cancel.set()


def event_stream(body: AsyncIterator[str]) -> StreamingResponse:
    """`body`'s server-sent events as a response that no cache or proxy holds back."""
    return StreamingResponse(
        body, media_type="text/event-stream", headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
    )
