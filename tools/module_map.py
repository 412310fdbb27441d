"""The docs' sections about the packages' own files: the module map, and how many modules have a test file of their own.

Both are read from the source tree without importing anything: each module's first docstring
sentence (read with `ast`), and the test files' names in the folders that mirror the packages.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from tools.sections import GenerationError, cell

__all__ = ["PACKAGES", "TEST_FOLDERS", "module_rows", "modules", "own_test_files", "summary", "test_files"]

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = (
    ("kb", "the library"),
    ("ingest", "FAQ pages and Q&A files in, index builds out"),
    ("server", "the web app"),
    ("kbcli", "the `kb` command"),
    ("trackers", "the trackers the harvest reads, and GitHub's REST rules the GitHub bot shares"),
)


# The module map -----------------------------------------------------------------------------------


def summary(path: Path, name: str) -> str:
    """A module's first docstring sentence (within its first paragraph), on one line; GenerationError naming
    the module when it has none."""
    try:
        docstring = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"), str(path)))
    except SyntaxError as exc:
        raise GenerationError(f"{name}: cannot be parsed: {exc}") from None
    if not docstring or not docstring.strip():
        raise GenerationError(f"{name}: no docstring; its first line should say what the module is")
    paragraph = " ".join(docstring.strip().split("\n\n")[0].split())
    return _SENTENCE_END.split(paragraph, maxsplit=1)[0]


# Where a docstring's first sentence ends: a full stop, then a capital (not "e.g. `x`" or "v0.4.1").
_SENTENCE_END = re.compile(r"(?<=[a-z0-9)`'\"]\.)\s+(?=[A-Z])")


def module_rows(package: str, root: Path = ROOT) -> list[tuple[str, str]]:
    """(name, summary) of every module of a package under `root`, sorted by path; a package is named by its folder."""
    rows = []
    for path in sorted((root / package).rglob("*.py"), key=lambda p: p.relative_to(root).as_posix()):
        relative = path.relative_to(root)
        if any(part.startswith(".") or part == "__pycache__" for part in relative.parts):
            continue
        name = relative.parent.as_posix() + "/" if path.name == "__init__.py" else relative.as_posix()
        rows.append((name, summary(path, relative.as_posix())))
    return rows


def modules() -> str:
    parts = []
    for package, what in PACKAGES:
        rows = "".join(f"| `{name}` | {cell(text)} |\n" for name, text in module_rows(package))
        parts.append(f"### `{package}/`: {what}\n\n| module | what it is |\n|---|---|\n{rows}")
    return "\n".join(parts)


# The tests' layout -------------------------------------------------------------------------------

# Where each package's tests live: the folders mirror the package's (kbcli/ is tested in tests/cli/).
TEST_FOLDERS = {
    "kb": "tests/kb",
    "ingest": "tests/ingest",
    "server": "tests/server",
    "kbcli": "tests/cli",
    "trackers": "tests/trackers",
}


def own_test_files(package: str, root: Path = ROOT) -> tuple[int, int]:
    """(modules with a test file of their own name in the mirrored folder, modules), `__init__.py` aside:
    `kb/insights/store.py` has one when `tests/kb/insights/test_store.py` exists."""
    modules = [p for p in (root / package).rglob("*.py") if p.name != "__init__.py" and "__pycache__" not in p.parts]
    tests = root / TEST_FOLDERS[package]
    own = [p for p in modules if (tests / p.parent.relative_to(root / package) / f"test_{p.name}").is_file()]
    return len(own), len(modules)


def test_files() -> str:
    rows = []
    for package, _ in PACKAGES:
        own, total = own_test_files(package)
        rows.append(f"| `{package}/` | `{TEST_FOLDERS[package]}/` | {total} | {own} |\n")
    header = "| package | its tests | modules | with a test file of their own name |\n|---|---|---|---|\n"
    return header + "".join(rows)
