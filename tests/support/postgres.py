"""A throwaway PostgreSQL server for the tests: initdb in a temporary directory, loopback only, stopped at the end.

Finds the server's binaries on PATH or in Debian's /usr/lib/postgresql/<version>/bin. As root
(initdb refuses to run as root) the cluster belongs to the `postgres` user. Without
PostgreSQL the tests that need it fail in CI (`CI` set) and are skipped elsewhere.
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from tests.support.ports import free_port

__all__ = ["PostgresServer", "find_binaries"]


def find_binaries() -> Path | None:
    """The directory holding initdb and pg_ctl, newest version first; None when PostgreSQL is not installed."""
    on_path = shutil.which("pg_ctl")
    candidates = ([str(Path(on_path).parent)] if on_path else []) + sorted(
        glob.glob("/usr/lib/postgresql/*/bin"),
        key=lambda p: int(Path(p).parent.name) if Path(p).parent.name.isdigit() else 0,
        reverse=True,
    )
    for directory in candidates:
        if (Path(directory) / "initdb").exists() and (Path(directory) / "pg_ctl").exists():
            return Path(directory)
    return None


class PostgresServer:
    """A cluster in `directory`, listening on 127.0.0.1:`port`, trusting local connections (a test server only)."""

    def __init__(self) -> None:
        binaries = find_binaries()
        if binaries is None:
            message = (
                "PostgreSQL is not installed (no initdb/pg_ctl on PATH or in /usr/lib/postgresql/*/bin): "
                "apt-get install postgresql, or run `make install-test` as root"
            )
            if os.environ.get("CI"):
                pytest.fail(message, pytrace=False)
            pytest.skip(message)
        self.bin = binaries
        # Not under pytest's temporary directory: as root that is private to root, and the server runs as postgres.
        directory = self.directory = Path(tempfile.mkdtemp(prefix="kb-postgres-"))
        self.data = directory / "data"
        self.port = free_port()
        self.as_root = os.geteuid() == 0
        if self.as_root:
            shutil.chown(directory, "postgres", "postgres")
            directory.chmod(0o700)
        self._run(
            "initdb", "-D", str(self.data), "-U", "postgres", "-A", "trust", "--no-sync", "-E", "UTF8", "--locale=C"
        )
        with open(self.data / "postgresql.conf", "a", encoding="utf-8") as conf:
            conf.write(
                f"listen_addresses = '127.0.0.1'\nport = {self.port}\nunix_socket_directories = '{directory}'\n"
                "fsync = off\nsynchronous_commit = off\nfull_page_writes = off\nmax_connections = 200\n"
            )
        self.start()

    def _run(self, program: str, *args: str) -> None:
        command = [str(self.bin / program), *args]
        if self.as_root:
            command = ["runuser", "-u", "postgres", "--", *command]
        done = subprocess.run(command, capture_output=True, text=True, timeout=120)
        if done.returncode:
            raise RuntimeError(f"{program} failed ({done.returncode}): {done.stderr or done.stdout}")

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}"

    def start(self) -> None:
        self._run("pg_ctl", "-D", str(self.data), "-l", str(self.directory / "log"), "-w", "-t", "60", "start")

    def stop(self) -> None:
        """Stop at once, as a crash or a restart would: clients are disconnected."""
        self._run("pg_ctl", "-D", str(self.data), "-m", "fast", "-w", "stop")

    def execute(self, sql: str, database: str = "postgres") -> list[tuple[object, ...]]:
        import psycopg

        with psycopg.connect(self.url(database), autocommit=True) as conn:
            cursor = conn.execute(sql)
            return cursor.fetchall() if cursor.description else []

    def create_database(self, name: str) -> str:
        """A new empty database; its URL."""
        self.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def close(self) -> None:
        try:
            self.stop()
        except RuntimeError:
            pass  # already stopped
        shutil.rmtree(self.directory, ignore_errors=True)


def wait_for(condition: object, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():  # type: ignore[operator]
        if time.monotonic() > deadline:
            raise AssertionError("timed out waiting")
        time.sleep(0.05)
