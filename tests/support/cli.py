"""Running the `kb` command: in this process (`kb`, its `main` with the arguments), or as a user does (`kb_process`).

`kb` gives what a process would: the exit code, standard output and standard error, with the
environment, the current directory and the warnings logged set as `kb_process` sets them and put
back after. A test needs `kb_process` only for what a process adds: the installed entry point,
signals, output buffered to a pipe, a server left running.
"""

from __future__ import annotations

import contextlib
import io
import logging
import os
import subprocess
import sys
from pathlib import Path
from typing import Iterator

from tests.support.paths import ROOT

__all__ = ["kb", "kb_process"]


def _environment(data_dir: Path, env: dict[str, str]) -> dict[str, str]:
    environment = {k: v for k, v in os.environ.items() if not k.startswith("KB_")}
    # At the suite's operating point (tests/conftest.py: SUITE_PRECISION) unless a test sets its own.
    environment.update(KB_DATA_DIR=str(data_dir), KB_ANSWER_PRECISION="0.6")
    environment.update(env)
    return environment


def kb_process(*args: str, data_dir: Path, **env: str) -> subprocess.CompletedProcess[str]:
    """`kb *args` in a process of its own (`python -m kbcli.cli`), with `KB_DATA_DIR` and `env` set."""
    return subprocess.run(
        [sys.executable, "-m", "kbcli.cli", *args],
        cwd=ROOT,
        env=_environment(data_dir, env),
        capture_output=True,
        text=True,
        timeout=300,
    )


@contextlib.contextmanager
def _as_a_process(environment: dict[str, str], stderr: io.StringIO) -> Iterator[None]:
    """The environment and current directory a process would have, and its warnings logged to `stderr` as
    Python's last-resort handler writes them (a bare message): all put back after."""
    saved, cwd = dict(os.environ), os.getcwd()
    handler = logging.StreamHandler(stderr)
    handler.setLevel(logging.WARNING)
    root = logging.getLogger()
    os.environ.clear()
    os.environ.update(environment)
    os.chdir(ROOT)
    root.addHandler(handler)
    try:
        yield
    finally:
        root.removeHandler(handler)
        os.chdir(cwd)
        os.environ.clear()
        os.environ.update(saved)


@contextlib.contextmanager
def _stdin(text: str) -> Iterator[None]:
    saved = sys.stdin
    sys.stdin = io.StringIO(text)
    try:
        yield
    finally:
        sys.stdin = saved


def kb(*args: str, data_dir: Path, stdin: str = "", **env: str) -> subprocess.CompletedProcess[str]:
    """`kb *args` run in this process (`kbcli.cli.main`), with `KB_DATA_DIR` and `env` set, `stdin` its
    standard input; what it printed."""
    from kbcli.cli import main

    stdout, stderr = io.StringIO(), io.StringIO()
    with _as_a_process(_environment(data_dir, env), stderr), _stdin(stdin):
        with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
            try:
                code = main(list(args))
            except SystemExit as exc:  # argparse: --help, or arguments it refuses
                code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    return subprocess.CompletedProcess(["kb", *args], code, stdout.getvalue(), stderr.getvalue())
