"""uvicorn's HTTP/1.1 protocol (h11) with a deadline for a request's head: a connection that has not sent a
whole request line and headers within `HEAD_SECONDS` is closed.

uvicorn closes an idle connection between requests (its keep-alive timeout) but waits for
ever on one that has sent part of a request, or nothing: hundreds of stalled connections
would each hold a socket and a file descriptor. The deadline starts when a connection opens
and when a request's first bytes arrive after a response; it ends when the head is complete
(the body is read by the app, under KB_MAX_BODY_BYTES). `kb serve` passes the class to
uvicorn as its `http` setting (kbcli.serve.uvicorn_options).
"""

from __future__ import annotations

import asyncio

from uvicorn.protocols.http.h11_impl import H11Protocol

__all__ = ["HEAD_SECONDS", "HeadDeadline", "head_deadline"]

HEAD_SECONDS = 10.0  # seconds a client has to send a request line and its headers


class HeadDeadline(H11Protocol):
    """H11Protocol that closes a connection whose request head is not complete within `seconds`."""

    seconds = HEAD_SECONDS
    _timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._start()

    def data_received(self, data: bytes) -> None:
        if self._between_requests() and self._timer is None:  # a new request after a response
            self._start()
        super().data_received(data)
        if not self._between_requests():  # its head is complete: the app reads the rest
            self._stop()

    def connection_lost(self, exc: Exception | None) -> None:
        self._stop()
        super().connection_lost(exc)

    def _between_requests(self) -> bool:
        return self.cycle is None or self.cycle.response_complete

    def _start(self) -> None:
        self._stop()
        self._timer = self.loop.call_later(self.seconds, self._too_slow)

    def _stop(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _too_slow(self) -> None:
        self._timer = None
        if self._between_requests() and not self.transport.is_closing():
            self.transport.close()


def head_deadline(seconds: float) -> type[HeadDeadline]:
    """The protocol with a deadline of `seconds` (tests use a short one)."""
    return type("HeadDeadline", (HeadDeadline,), {"seconds": seconds})
