"""What the Makefile runs, as `make -n` prints it: PyTorch's CPU build asked for by name (the index's, else PyTorch's
CPU index), as docs/development.md says; `make serve` on the PORT and HOST given."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest

from tests.support.paths import ROOT

CPU_INDEX = "https://download.pytorch.org/whl/cpu"

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="needs make")


def planned(*args: str) -> list[str]:
    """The commands `make *args` would run, without running them (`-B`: as on a fresh clone)."""
    run = subprocess.run(["make", "-n", "-B", *args], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    return run.stdout.splitlines()


def test_install_test_asks_for_the_cpu_build_by_name_locally_first_then_from_pytorchs_cpu_index() -> None:
    torch = [line for line in planned("install-test") if re.search(r"\btorch==", line)]
    assert len(torch) == 1, torch
    first, _, fallback = torch[0].partition(" || ")
    pin = re.search(r"\btorch==(\S+)", first)
    assert pin and pin[1].endswith("+cpu"), first  # not plain torch==X.Y.Z: on PyPI that is the CUDA build
    assert "--index-url" not in first and "--extra-index-url" not in first  # the package index configured first
    assert f"torch=={pin[1]}" in fallback and f"--index-url {CPU_INDEX}" in fallback, torch[0]


def test_the_docs_promise_the_build_the_makefile_installs() -> None:
    torch = [line for line in planned("install-test") if re.search(r"\btorch==", line)][0]
    pin = re.search(r"\btorch==(\S+)", torch)
    assert pin
    development = (ROOT / "docs" / "development.md").read_text(encoding="utf-8")
    assert f"`torch=={pin[1]}`" in development and CPU_INDEX in development
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for found in re.findall(r"\btorch==[\w.+]+", page.read_text(encoding="utf-8")):
            assert found == f"torch=={pin[1]}", f"{page.name}: {found}"


@pytest.mark.parametrize(
    ("args", "address"),
    [((), "--host 127.0.0.1 --port 8000"), (("PORT=8123", "HOST=0.0.0.0"), "--host 0.0.0.0 --port 8123")],
)
def test_make_serve_serves_on_the_port_and_host_given(args: tuple[str, ...], address: str) -> None:
    serve = [line for line in planned("serve", *args) if re.search(r"/kb serve\b", line)]
    assert serve == [f".venv/bin/kb serve {address}"]
