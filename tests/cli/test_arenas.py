"""`kb serve` caps glibc's malloc arenas unless the environment already does (kbcli/arenas.py).

Each check runs in a Python process of its own, since the cap is set once for a process."""

from __future__ import annotations

import os
import subprocess
import sys

from tests.support.paths import ROOT

ASK = "import os; from kbcli.arenas import fewer_arenas; print(fewer_arenas(), os.environ['MALLOC_ARENA_MAX'])"


def _run(**env: str) -> str:
    environ = {k: v for k, v in os.environ.items() if k != "MALLOC_ARENA_MAX"} | env
    done = subprocess.run(
        [sys.executable, "-c", ASK], cwd=ROOT, env=environ, capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


def test_the_server_process_and_its_workers_get_two_arenas() -> None:
    # This machine's C library is glibc, whose mallopt takes the option; the workers read the variable.
    assert _run() == "True 2"


def test_an_arena_count_the_deployer_set_is_left_alone() -> None:
    assert _run(MALLOC_ARENA_MAX="8") == "False 8"
