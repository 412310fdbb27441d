"""The deadline for a request's head, on a real uvicorn: stalled connections are closed, slow bodies and
keep-alive connections are not cut short by it."""

from __future__ import annotations

import socket
import time
from typing import Any, Callable

import httpx
import pytest

from kb.settings import Settings
from kbcli.serve import uvicorn_options
from server import create_app
from server.protocol import HEAD_SECONDS, HeadDeadline, head_deadline


def _open(url: str, sent: bytes) -> socket.socket:
    host, port = url.removeprefix("http://").split(":")
    sock = socket.create_connection((host, int(port)), timeout=10)
    sock.sendall(sent)
    return sock


def _closed(sock: socket.socket) -> bool:
    try:
        return sock.recv(1024) == b""
    except (ConnectionResetError, TimeoutError):
        return False


def test_kb_serve_gives_uvicorn_the_deadline(settings: Settings) -> None:
    assert uvicorn_options(settings)["http"] is HeadDeadline and HEAD_SECONDS == 10.0


@pytest.mark.slow
def test_stalled_connections_are_closed_after_the_deadline(settings: Settings, serve: Callable[..., Any]) -> None:
    url = serve(create_app(settings), http=head_deadline(1.0)).url
    stalled = [_open(url, b"") for _ in range(100)] + [
        _open(url, b"GET /healthz HTTP/1.1\r\nHost: x\r\n") for _ in range(100)
    ]
    started = time.monotonic()
    assert all(_closed(sock) for sock in stalled)  # recv waits until the server closes each one
    assert time.monotonic() - started < 5
    for sock in stalled:
        sock.close()
    assert httpx.get(f"{url}/healthz").status_code == 200


@pytest.mark.slow
def test_a_keep_alive_connection_serves_request_after_request(settings: Settings, serve: Callable[..., Any]) -> None:
    url = serve(create_app(settings), http=head_deadline(1.0)).url
    with httpx.Client(base_url=url) as client:
        for _ in range(3):
            assert client.get("/healthz").status_code == 200
            time.sleep(0.6)  # within uvicorn's keep-alive (5 s), across the head deadline in all
