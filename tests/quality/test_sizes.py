"""Sizes the code keeps to: no module over 400 lines, no function over 60, no class over 300, in the packages,
tools/ and bench/.

A module is counted by its lines; a function or a class from its first decorator line (its `def` or `class` line
when it has none) to its last (a nested function counts in its own right and inside the one that holds it; a method
is a function, and counts inside its class). Tests are not counted. An offender is named with its size, so the fix
starts from the message: split the module by what its parts are about, the function into steps and the class into
parts with names a newcomer understands.
"""

from __future__ import annotations

import ast
from pathlib import Path

from tests.support.paths import ROOT

PACKAGES = ("kb", "ingest", "server", "kbcli", "tools", "trackers", "bench")
MODULE_LINES = 400
FUNCTION_LINES = 60
CLASS_LINES = 300


def lines_of(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> int:
    """From the first decorator line (else the `def` or `class` line) to the last line."""
    first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
    return (node.end_lineno or node.lineno) - first + 1


def oversized(path: Path, name: str) -> list[tuple[str, str, int]]:
    """(module, function, class or "" for the module itself, lines) of each part of the file at `path` (named
    `name`) past its limit."""
    text = path.read_text(encoding="utf-8")
    found = []
    lines = len(text.splitlines())
    if lines > MODULE_LINES:
        found.append((name, "", lines))
    for node in ast.walk(ast.parse(text, name)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and lines_of(node) > FUNCTION_LINES:
            found.append((name, node.name, lines_of(node)))
        elif isinstance(node, ast.ClassDef) and lines_of(node) > CLASS_LINES:
            found.append((name, f"class {node.name}", lines_of(node)))
    return found


def measured(root: Path = ROOT) -> list[tuple[str, str, int]]:
    """Every part of the packages under `root` past its limit."""
    found = []
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            if "__pycache__" not in path.parts:
                found += oversized(path, path.relative_to(root).as_posix())
    return found


def described(module: str, part: str, lines: int) -> str:
    if part.startswith("class "):
        return f"{module}: {part} is {lines} lines (at most {CLASS_LINES})"
    if part:
        return f"{module}: {part} is {lines} lines (at most {FUNCTION_LINES})"
    return f"{module} is {lines} lines (at most {MODULE_LINES})"


def test_no_module_function_or_class_is_past_its_limit() -> None:
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


def test_a_functions_decorators_count_and_a_long_class_is_named(tmp_path: Path) -> None:
    body = "".join(f"    x{i} = {i}\n" for i in range(FUNCTION_LINES - 1))  # with its def line, just fits
    methods = "".join(f"    def m{i}(self):\n        return {i}\n\n" for i in range(CLASS_LINES // 3 + 1))
    source = "@register\ndef decorated():\n" + body + "\n\nclass Large:\n" + methods
    (tmp_path / "bench").mkdir()
    (tmp_path / "bench" / "parts.py").write_text(source)
    (tmp_path / "kb").mkdir()
    (tmp_path / "kb" / "fits.py").write_text(
        "def undecorated():\n" + body + "\n\nclass Fits:\n" + methods.split("    def m100")[0]
    )
    found = measured(tmp_path)
    assert found == [
        ("bench/parts.py", "decorated", FUNCTION_LINES + 1),
        ("bench/parts.py", "class Large", CLASS_LINES + 3),
    ]
    assert described(*found[1]) == f"bench/parts.py: class Large is {CLASS_LINES + 3} lines (at most {CLASS_LINES})"
