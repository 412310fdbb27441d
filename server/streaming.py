"""Streamed answers as server-sent events: a blocking stream of events read for a reader who may leave.

The chat's events come from a blocking iterator (the LLM writes as it is read). `read_in_thread`
reads it in a worker thread, one event at a time; when the reader goes, the server cancels the
response (Starlette does on `http.disconnect`), and the `Cancel` the stream was started with is
set, which closes the LLM's connection at once, not at its next line. Both `/api/chat` and
`/v1/chat/completions` stream through here.
"""

from __future__ import annotations

import asyncio
from typing import AsyncGenerator, AsyncIterator, Iterator, TypeVar

from fastapi.responses import StreamingResponse
from starlette.types import Receive, Scope, Send

from kb.cancel import Cancel

__all__ = ["read_in_thread", "event_stream"]

T = TypeVar("T")
_END = object()


async def read_in_thread(events: Iterator[T], cancel: Cancel) -> AsyncGenerator[T, None]:
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
        # A generator left at a `yield` holds what it opened (the LLM's connection, a slot of its pool) until it is
        # closed: close it now. One being read in a worker thread is ended by the cancel instead.
        close = getattr(events, "close", None)
        if close is not None:
            try:
                close()
            except ValueError:  # "generator already executing"
                pass


class _ClosingStream(StreamingResponse):
    """A streamed response that closes its body when it ends, however it ends. Starlette cancels the response when
    the reader leaves; a body cancelled while the server was sending (not reading) would otherwise stay suspended
    at its `yield`, holding the LLM's stream open until the garbage collector found it."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            close = getattr(self.body_iterator, "aclose", None)
            if close is not None:
                await close()


def event_stream(body: AsyncIterator[str]) -> StreamingResponse:
    """`body`'s server-sent events as a response that no cache or proxy holds back, closed when it ends."""
    return _ClosingStream(
        body, media_type="text/event-stream", headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
    )
