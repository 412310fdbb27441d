"""The library's rooms: the search loads nothing of the insights, and no module of kb imports, however far round, itself."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_search_loads_nothing_of_the_insights() -> None:
    code = "import sys, kb.search; print(' '.join(sorted(m for m in sys.modules if m.startswith('kb.'))))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    loaded = out.stdout.split()
    assert "kb.search" in loaded
    assert not [m for m in loaded if m == "kb.insights" or m.startswith("kb.insights.")], loaded


def modules(root: Path, package: str) -> dict[str, Path]:
    """Every module of `package` (a folder of `root`) by its dotted name; a package by its own name."""
    found = {}
    for path in sorted((root / package).rglob("*.py")):
        parts = path.relative_to(root).with_suffix("").parts
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def imported(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The modules of `known` that module `name` imports: absolute and relative imports, anywhere in it
    (inside functions, under `TYPE_CHECKING`). Importing `a.b.c` from outside package `a.b` imports `a.b` too
    (its `__init__` runs first)."""
    package = name if known[name].name == "__init__.py" else name.rpartition(".")[0]
    targets: list[str] = []
    for node in ast.walk(ast.parse(known[name].read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package.split(".")[: len(package.split(".")) - node.level + 1] if node.level else []
            module = ".".join(base + ([node.module] if node.module else []))
            # `from a import b`: module a.b when there is one, else a name of a
            targets += [f"{module}.{a.name}" if f"{module}.{a.name}" in known else module for a in node.names]
    edges = set()
    for target in targets:
        while target and target not in known:
            target = target.rpartition(".")[0]
        if not target or target == name:
            continue
        edges.add(target)
        parent = target.rpartition(".")[0]
        while "." in parent:
            if not (name == parent or name.startswith(parent + ".")):
                edges.add(parent)
            parent = parent.rpartition(".")[0]
    return edges


def import_graph(root: Path, package: str) -> dict[str, set[str]]:
    """Module -> the modules of the same top-level package it imports."""
    known = modules(root, package)
    return {name: imported(name, known[name], known) for name in known}


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """A cycle of `graph` as the path round it (its first module again at the end); None when there is none."""
    done: set[str] = set()
    for start in sorted(graph):
        if start in done:
            continue
        path, on_path = [start], {start}
        stack = [iter(sorted(graph[start]))]
        while stack:
            step = next(stack[-1], None)
            if step is None:  # every module it imports is done: so is it
                on_path.discard(path[-1])
                done.add(path.pop())
                stack.pop()
            elif step in on_path:
                return path[path.index(step) :] + [step]
            elif step not in done:
                path.append(step)
                on_path.add(step)
                stack.append(iter(sorted(graph[step])))
    return None


def test_no_module_of_kb_imports_itself_round_a_cycle() -> None:
    graph = import_graph(ROOT, "kb")
    assert len(graph) > 40 and graph["kb.search"], "the graph should hold the library's modules and their imports"
    cycle = find_cycle(graph)
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def test_a_planted_cycle_is_found(tmp_path: Path) -> None:
    (tmp_path / "pkg" / "inner").mkdir(parents=True)
    files = {
        "pkg/__init__.py": "",
        "pkg/a.py": "from .b import B\n",
        "pkg/b.py": "def f():\n    from pkg.inner.c import C\n",
        "pkg/inner/__init__.py": "",
        "pkg/inner/c.py": "from .. import a\n",
        "pkg/d.py": "import pkg.a\n",
    }
    for name, text in files.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    graph = import_graph(tmp_path, "pkg")
    assert graph["pkg.d"] == {"pkg.a"} and graph["pkg.b"] == {"pkg.inner.c", "pkg.inner"}
    assert find_cycle(graph) == ["pkg.a", "pkg.b", "pkg.inner.c", "pkg.a"]
    (tmp_path / "pkg/inner/c.py").write_text("import os\n", encoding="utf-8")
    assert find_cycle(import_graph(tmp_path, "pkg")) is None
    # importing pkg.inner.c runs pkg/inner/__init__.py first
    (tmp_path / "pkg/inner/__init__.py").write_text("from pkg.a import A\n", encoding="utf-8")
    assert find_cycle(import_graph(tmp_path, "pkg")) == ["pkg.a", "pkg.b", "pkg.inner", "pkg.a"]
