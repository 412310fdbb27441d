"""Signing in to /insights as docs/insights.md says: a real `kb serve` without KB_ADMIN_TOKEN keeps a token in the data
directory, its start-up log names the file (not the token), `kb admin-token` prints it, and the sign-in form takes it."""

from __future__ import annotations

import os
import re
import signal
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support.cli import kb
from tests.support.paths import ROOT
from tests.support.ports import free_port, wait_for_port


def serve(data: Path, **env: str) -> tuple[subprocess.Popen[str], str]:
    port = free_port()
    environment = {k: v for k, v in os.environ.items() if not k.startswith("KB_")}
    process = subprocess.Popen(
        [sys.executable, "-m", "kbcli.cli", "serve", "--port", str(port)],
        cwd=ROOT,
        env={**environment, "KB_DATA_DIR": str(data), "KB_ANSWER_PRECISION": "0.6", **env},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert wait_for_port(port, process), process.communicate()[1]
    return process, f"http://127.0.0.1:{port}"


def stop(process: subprocess.Popen[str]) -> str:
    process.send_signal(signal.SIGTERM)
    try:
        return process.communicate(timeout=60)[1]
    finally:
        process.kill()


def sign_in(url: str, token: str) -> httpx.Response:
    """The sign-in form filled in as a browser does; then /insights with the cookie it set."""
    with httpx.Client(base_url=url, timeout=60) as browser:
        form = browser.get("/insights")
        assert form.status_code == 401
        found = re.search(r'name="form_token" value="([\w-]+)"', form.text)
        assert found
        signed = browser.post("/insights/sign-in", data={"token": token, "form_token": found[1], "since": "30d"})
        assert signed.status_code in (303, 401), signed.text
        return browser.get("/insights")


@pytest.fixture
def data(settings: Any, tmp_path: Path) -> Path:
    data = tmp_path / "data"
    data.mkdir()
    (data / "index").symlink_to(settings.index_dir)
    return data


@pytest.mark.slow
def test_kb_serve_without_a_token_keeps_one_names_its_file_and_the_printed_token_signs_in(data: Path) -> None:
    process, url = serve(data)
    try:
        printed = kb("admin-token", data_dir=data)
        assert printed.returncode == 0, printed.stderr
        token = printed.stdout.strip()
        assert stat.S_IMODE((data / "admin-token").stat().st_mode) == 0o600
        assert sign_in(url, "not-the-token").status_code == 401
        page = sign_in(url, token)
        assert page.status_code == 200 and 'id="gaps"' in page.text
    finally:
        log = stop(process)
    assert f"Insights on: /insights, sign in with the admin token kept in {data / 'admin-token'}" in log, log
    assert token not in log


@pytest.mark.slow
def test_kb_serve_with_kb_admin_token_says_so_and_keeps_no_file(data: Path) -> None:
    process, url = serve(data, KB_ADMIN_TOKEN="chosen-token-0123456789")
    try:
        assert sign_in(url, "chosen-token-0123456789").status_code == 200
        assert kb("admin-token", data_dir=data, KB_ADMIN_TOKEN="chosen-token-0123456789").stdout.strip() == (
            "chosen-token-0123456789"
        )
    finally:
        log = stop(process)
    assert "Insights on: /insights, sign in with the admin token KB_ADMIN_TOKEN" in log, log
    assert not (data / "admin-token").exists()


@pytest.mark.slow
def test_kb_admin_token_set_and_empty_keeps_insights_off_and_says_why(data: Path) -> None:
    process, url = serve(data, KB_ADMIN_TOKEN="")
    try:
        assert httpx.get(f"{url}/insights", timeout=60).status_code == 404
    finally:
        log = stop(process)
    assert "Insights off: /insights and /admin answer 404, KB_ADMIN_TOKEN being empty" in log, log
    printed = kb("admin-token", data_dir=data, KB_ADMIN_TOKEN="")
    assert printed.returncode == 2 and "KB_ADMIN_TOKEN is set and empty" in printed.stderr


@pytest.mark.slow
def test_a_token_that_cannot_be_kept_turns_insights_off_not_the_search(data: Path) -> None:
    (data / "admin-token").mkdir()  # in the way: not a file (chmod means nothing to root, which tests may run as)
    process, url = serve(data)
    try:
        assert httpx.get(f"{url}/insights", timeout=60).status_code == 404
        assert httpx.get(f"{url}/api/search", params={"q": "how do I resume training"}, timeout=60).status_code == 200
    finally:
        log = stop(process)
    assert f"kb: warning: {data / 'admin-token'}: cannot read the admin token" in log, log
    assert "serving with /insights off" in log and "Insights off:" in log
