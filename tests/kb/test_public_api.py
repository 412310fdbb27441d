"""The library's public API: what `import kb` offers, and that the core stays apart from the web app."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import kb
from tests.support.paths import ROOT

WEB = {"fastapi", "starlette", "jinja2", "uvicorn", "server", "ingest", "kbcli", "trackers"}
# Dependencies run one way: the command (kbcli) -> the server and the ingest -> the trackers -> the library (kb). The
# library knows no tracker by name: the harvest is handed one (`kb.harvest.tracker.Tracker`).
FORBIDDEN = {
    "kb": {"server", "ingest", "kbcli", "trackers"},
    "ingest": {"server", "kbcli"},
    "server": {"ingest", "kbcli"},
    "trackers": {"server", "ingest", "kbcli"},
}


def test_every_public_name_is_listed_and_loads() -> None:
    assert len(set(kb.__all__)) == len(kb.__all__)
    for name in kb.__all__:
        assert getattr(kb, name) is not None, name
    assert {"KnowledgeBase", "Settings", "Entry", "Hit", "SearchResult", "Answer", "Chat", "KBError"} <= set(kb.__all__)


def test_every_error_the_library_raises_is_a_kb_error() -> None:
    errors = [getattr(kb, name) for name in kb.__all__ if isinstance(getattr(kb, name), type)]
    raised = [e for e in errors if issubclass(e, Exception)]
    assert len(raised) >= 10
    assert all(issubclass(e, kb.KBError) for e in raised)


def test_a_search_through_the_public_api(settings) -> None:
    base = kb.KnowledgeBase.open(settings)
    result = base.search_blocking("how do I resume training")
    assert isinstance(result, kb.SearchResult) and result.answered
    assert result.query == "how do I resume training" and result.lang == "en"


def test_importing_kb_loads_nothing_heavy() -> None:
    out = subprocess.run(
        [sys.executable, "-c", "import sys, kb; print(' '.join(sorted({m.split('.')[0] for m in sys.modules})))"],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    ).stdout.split()
    assert "kb" in out and not {"numpy", "faiss", *WEB} & set(out)


def _imported(path: Path) -> set[str]:
    """The top-level packages a module imports (anywhere in it, also inside functions)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


def test_the_library_never_imports_the_web_app_or_the_ingest() -> None:
    for path in sorted((ROOT / "kb").rglob("*.py")):
        name = path.relative_to(ROOT).as_posix()
        assert not _imported(path) & WEB, f"{name} imports {sorted(_imported(path) & WEB)}"


@pytest.mark.slow
@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_dependencies_run_from_the_command_to_the_library(package: str) -> None:
    for path in sorted((ROOT / package).rglob("*.py")):
        name = path.relative_to(ROOT).as_posix()
        assert not _imported(path) & FORBIDDEN[package], (
            f"{name} imports {sorted(_imported(path) & FORBIDDEN[package])}"
        )


def test_the_command_is_the_console_script() -> None:
    import tomllib

    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["scripts"]
    assert scripts == {"kb": "kbcli.cli:main"}
    assert not (ROOT / "kb" / "cli.py").exists()
