"""Sizes the code keeps to: no module over 400 lines, no function over 60, in the packages and tools/.

A module is counted by its lines, a function from its `def` line to its last (a nested function
counts in its own right and inside the one that holds it; a method is a function). Tests and
bench/ are not counted. An offender is named with its size, so the fix starts from the message:
split the module by what its parts are about, the function into steps with names a newcomer
understands.
"""

from __future__ import annotations

import ast
from pathlib import Path

from tests.support.paths import ROOT

PACKAGES = ("kb", "ingest", "server", "kbcli", "tools", "trackers")
MODULE_LINES = 400
FUNCTION_LINES = 60


def oversized(path: Path, name: str) -> list[tuple[str, str, int]]:
    """(module, function or "" for the module itself, lines) of each part of the file at `path` (named `name`)
    past its limit."""
    text = path.read_text(encoding="utf-8")
    found = []
    lines = len(text.splitlines())
    if lines > MODULE_LINES:
        found.append((name, "", lines))
    for node in ast.walk(ast.parse(text, name)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            length = (node.end_lineno or node.lineno) - node.lineno + 1
            if length > FUNCTION_LINES:
                found.append((name, node.name, length))
    return found


def measured(root: Path = ROOT) -> list[tuple[str, str, int]]:
    """Every part of the packages under `root` past its limit."""
    found = []
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            if "__pycache__" not in path.parts:
                found += oversized(path, path.relative_to(root).as_posix())
    return found


def described(module: str, function: str, lines: int) -> str:
    if function:
        return f"{module}: {function} is {lines} lines (at most {FUNCTION_LINES})"
    return f"{module} is {lines} lines (at most {MODULE_LINES})"


def test_no_module_or_function_is_past_its_limit() -> None:
    over = [described(*part) for part in measured()]
    assert not over, "split by meaning:\n" + "\n".join(over)


def test_a_long_function_and_a_long_module_are_named(tmp_path: Path) -> None:
    body = "".join(f"    x{i} = {i}\n" for i in range(FUNCTION_LINES))  # the def line makes one more
    source = "async def steps():\n" + body + "\n\ndef short():\n    return 1\n"
    source += "\n" * (MODULE_LINES + 1 - len(source.splitlines()))
    (tmp_path / "kb").mkdir()
    (tmp_path / "kb" / "long.py").write_text(source)
    (tmp_path / "kb" / "fits.py").write_text(
        "def f():\n" + body[: -len(f"    x{FUNCTION_LINES - 1} = {FUNCTION_LINES - 1}\n")]
    )
    found = measured(tmp_path)
    assert found == [("kb/long.py", "", MODULE_LINES + 1), ("kb/long.py", "steps", FUNCTION_LINES + 1)]
    assert [described(*part) for part in found] == [
        f"kb/long.py is {MODULE_LINES + 1} lines (at most {MODULE_LINES})",
        f"kb/long.py: steps is {FUNCTION_LINES + 1} lines (at most {FUNCTION_LINES})",
    ]
