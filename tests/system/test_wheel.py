"""Packaging: the wheel, installed (not editable) in a fresh virtual environment, ingests and serves.

The wheel is built from a copy of the project's files, installed with its dependencies by
pip into a new virtual environment (pip's cache makes that about half a minute), and run
from a directory outside the source tree, so nothing can come from the checkout: `kb`,
`server` and `ingest` must import from the new environment's site-packages, the FAQs,
glossary, tags, interface strings, pages and static files must all be in the wheel. The
embedding cache of the session's index is copied into the new data directory, so `kb ingest`
does not embed the FAQs again.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import httpx
import pytest

from kb.settings import Settings
from tests.support.paths import ROOT
from tests.support.ports import free_port, wait_for_port

PROJECT_FILES = ("pyproject.toml", "setup.py", "README.md", "kb", "ingest", "server", "kbcli", "trackers", "templates")
PACKAGED = (
    "server/templates/base.html",
    "server/templates/static/widget.js",
    "server/templates/static/reply.js",
    "server/templates/static/app.css",
    "server/channels/github/templates/_insights_suggested.html",
    "kb/data/strings.toml",
    "kb/data/tags.toml",
    "kb/data/glossary.toml",
    "kb/sources/sources.toml",
)
WHERE = "import json, sysconfig, kb, server, ingest; print(json.dumps([sysconfig.get_path('purelib'), kb.__file__, server.__file__, ingest.__file__]))"


def run(command: list[str | Path], cwd: Path, env: dict[str, str] | None = None, timeout: float = 300) -> str:
    done = subprocess.run([str(c) for c in command], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, f"{command[0]} {command[1]} failed:\n{done.stdout}\n{done.stderr}"
    return done.stdout


def build_wheel(tmp_path: Path) -> Path:
    """The wheel of a copy of the project (the checkout is left as it is: no build/ or egg-info)."""
    source = tmp_path / "source"
    source.mkdir()
    for name in PROJECT_FILES:
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, source / name, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
        else:
            shutil.copy2(ROOT / name, source / name)
    try:  # build with the setuptools already here when it is new enough: no download
        isolation = [] if int(version("setuptools").split(".")[0]) < 68 else ["--no-build-isolation"]
    except PackageNotFoundError:
        isolation = []
    wheels = tmp_path / "wheels"
    run([sys.executable, "-m", "pip", "wheel", source, "--no-deps", *isolation, "-w", wheels, "--quiet"], cwd=tmp_path)
    (wheel,) = wheels.glob("kb-*.whl")
    return wheel


@pytest.mark.slow
def test_the_wheel_installed_in_a_fresh_venv_ingests_and_serves(settings: Settings, tmp_path: Path) -> None:
    wheel = build_wheel(tmp_path)
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
    assert [name for name in PACKAGED if name not in names] == []
    assert not [name for name in names if name.startswith(("templates/", "tests/"))], "only the packages are top-level"

    venv = tmp_path / "venv"
    run([sys.executable, "-m", "venv", venv], cwd=tmp_path)
    python, kb = venv / "bin" / "python", venv / "bin" / "kb"
    run([python, "-m", "pip", "install", "--quiet", wheel], cwd=tmp_path, timeout=600)

    elsewhere = tmp_path / "elsewhere"  # the working directory: not the checkout, so it is not importable
    elsewhere.mkdir()
    data = tmp_path / "data"
    shutil.copytree(settings.cache_dir, data / "cache")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KB_", "PYTHON", "VIRTUAL_ENV"))}
    env["KB_DATA_DIR"] = str(data)

    site, *modules = json.loads(run([python, "-c", WHERE], cwd=elsewhere, env=env))
    assert site.startswith(str(venv)), site
    assert all(module.startswith(site) for module in modules), modules

    ingested = run([kb, "ingest"], cwd=elsewhere, env=env)
    assert re.search(r"slime\s+13 entries", ingested), ingested
    assert (data / "index" / "meta.json").is_file()

    port = free_port()
    server = subprocess.Popen(
        [str(kb), "serve", "--host", "127.0.0.1", "--port", str(port)],
        cwd=elsewhere,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        started = wait_for_port(port, server, timeout=120)
        if started:
            with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30) as http:
                home, chat, widget = http.get("/"), http.get("/chat"), http.get("/widget.js")
                stylesheet = re.search(r'href="(/static/app\.css[^"]*)"', home.text)
                style = http.get(stylesheet[1]) if stylesheet else None
    finally:
        server.terminate()
        _, stderr = server.communicate(timeout=30)
    assert started, f"kb serve did not start:\n{stderr}"
    assert (home.status_code, chat.status_code, widget.status_code) == (200, 200, 200), stderr
    assert "RLHF Framework FAQ" in home.text  # the interface strings
    assert "javascript" in widget.headers["content-type"]
    assert style is not None and style.status_code == 200, "the page's stylesheet is served"
    assert "Traceback" not in stderr, stderr
