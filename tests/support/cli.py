"""Running the `kb` command as a user does: a real process, with its own data directory."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.support.paths import ROOT


def kb(*args: str, data_dir: Path, **env: str) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if not k.startswith("KB_")}
    # At the suite's operating point (tests/conftest.py: SUITE_PRECISION) unless a test sets its own.
    environment.update(KB_DATA_DIR=str(data_dir), KB_ANSWER_PRECISION="0.6")
    environment.update(env)
    return subprocess.run(
        [sys.executable, "-m", "kbcli.cli", *args],
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
        timeout=300,
    )
