"""The Makefile installs for each target only what that target runs: `make test-fast` leaves out the browser
and PostgreSQL tests, so it installs neither Chromium nor PostgreSQL (`make -n`: the commands, none run)."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from tests.support.paths import ROOT

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")


def planned(target: str) -> str:
    run = subprocess.run(["make", "-n", target], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    return run.stdout


def test_make_test_fast_installs_nothing_it_does_not_run() -> None:
    commands = planned("test-fast")
    assert 'pytest -m "not browser and not postgres and not slow"' in commands
    assert "apt-get" not in commands and "chromium" not in commands and "postgresql" not in commands


def test_make_test_installs_chromium_and_postgresql_for_its_browser_and_postgresql_tests() -> None:
    commands = planned("test")
    assert "apt-get install -y -qq chromium fonts-noto-cjk" in commands
    assert "apt-get install -y -qq postgresql" in commands
