"""Loopback ports for the servers the tests start as subprocesses: a free one, and waiting for one to listen."""

from __future__ import annotations

import socket
import subprocess
import time

__all__ = ["free_port", "wait_for_port"]


def free_port() -> int:
    """A port nothing listens on at 127.0.0.1 (free when asked; the caller binds it next)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_for_port(port: int, process: subprocess.Popen, timeout: float = 60) -> bool:
    """Whether `process` listens on `port` within `timeout` seconds (False as soon as it exits)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and process.poll() is None:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return True
        except OSError:
            time.sleep(0.1)
    return False
