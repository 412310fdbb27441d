"""Every call into a third-party library that reads text, found by reading the code, and how one is timed on
hostile text.

`found()` reads kb/, ingest/, server/ and kbcli/ with `ast` and lists each call of a reader: `json.load(s)`,
`tomllib.load(s)`, `tomlkit`'s parsers, jieba's `cut`s, and a markdown-it parser's `parse` and `render` (the module's
`_md`, a `MarkdownIt(...)` made on the spot, or the function that makes one: `_markdown()`, `_parser()`), as a
`Call`: its file, line and the call as written (`_md.parse`). Pygments' lexers have an inventory of their own.
`worst(run, chars, bound)` times a surface's use of the library on every hostile text of
tests/support/hostile_patterns.py and the shapes that make a Markdown, JSON or TOML reader work hard, as
`hostile_patterns.worst` does for a pattern: at a sixteenth of the size, then the slowest at a quarter, and only
those that grew linearly at full size.
"""

from __future__ import annotations

import ast
import time
from dataclasses import dataclass
from functools import lru_cache
from typing import Callable

from tests.support.hostile_patterns import ALTERNATIONS, OPENED, PACKAGES, ROOT, RUNS

READERS = {"json": {"load", "loads"}, "tomllib": {"load", "loads"}, "tomlkit": {"parse", "loads", "load"}}
JIEBA = {"cut", "lcut", "cut_for_search", "lcut_for_search"}
MARKDOWN = {"parse", "render", "parseInline", "renderInline"}
MARKDOWN_MAKERS = ("_md", "_markdown()", "_parser()", "MarkdownIt(")

# What makes a Markdown, JSON or TOML reader work hard, repeated: nesting opened and never closed, a block's
# marker on each line, a delimiter run and a reference at each step.
SHAPES = [
    "> ",
    ">",
    "- ",
    "  - ",
    "1. ",
    "* a\n",
    "> - ",
    "**a",
    "*a_",
    "~~a",
    "[a]: b\n",
    "[a][",
    "![",
    "[![",
    "| a ",
    "|-",
    "a\n=\n",
    "    a\n",
    "``` ",
    "<a href=",
    "&amp;",
    "\\`",
    '{"a":',
    '["',
    '"\\u00e9',
    "1",
    "a = [",
    "[[a]]\n",
    'a = """',
    "a.",
    "中文",
    # 997 different Chinese characters (a prime, so no cut of a long run repeats another): text a cache cannot
    # answer, for a reader of Chinese.
    "".join(chr(0x4E00 + (i * 7919) % 20902) for i in range(997)),
]


@dataclass(frozen=True)
class Call:
    file: str
    line: int
    call: str  # as written: `_md.parse`, `json.loads`, `_jieba().cut_for_search`


def found() -> list[Call]:
    """Every call of a third-party reader of text in the packages, in file and line order."""
    calls = []
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            file = path.relative_to(ROOT).as_posix()
            tree = ast.parse(path.read_text(encoding="utf-8"), file)
            nodes = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and _is_reader(n)]
            for node in sorted(nodes, key=lambda n: (n.lineno, n.col_offset)):
                calls.append(Call(file, node.lineno, ast.unparse(node.func)))
    return calls


def _is_reader(call: ast.Call) -> bool:
    func = call.func
    if not isinstance(func, ast.Attribute):
        return False
    owner = ast.unparse(func.value)
    if owner in READERS:
        return func.attr in READERS[owner]
    if func.attr in JIEBA:
        return "jieba" in owner
    return func.attr in MARKDOWN and owner.startswith(MARKDOWN_MAKERS)


UNITS = [*RUNS, *OPENED, *ALTERNATIONS, *SHAPES]


@lru_cache(maxsize=64)
def text(unit: str, chars: int) -> str:
    """`unit` repeated to `chars` characters."""
    return (unit * (chars // len(unit) + 1))[:chars]


def _name(unit: str) -> str:
    return repr(unit) if len(unit) <= 20 else f"{len(unit)} different characters"


def timed(run: Callable[[str], object], text: str) -> float:
    started = time.perf_counter()
    try:
        run(text)
    except Exception:  # noqa: BLE001, S110 - refused is as good as read: only the time is measured here
        pass
    return time.perf_counter() - started


def worst(run: Callable[[str], object], chars: int, bound: float) -> tuple[float, str]:
    """The longest `run` takes on a hostile text of `chars`, and that text's name (one that grew more than
    eightfold from a sixteenth to a quarter of the size and would pass `bound` is reported at its quadratic
    estimate, not run at full size)."""
    probes = {unit: timed(run, text(unit, max(chars // 16, 1))) for unit in UNITS}
    ranked = sorted(probes, key=probes.__getitem__, reverse=True)
    suspects = ranked[:3] + [unit for unit in ranked[3:] if probes[unit] * 256 >= bound]
    slowest, name = 0.0, ""
    for unit in suspects:
        quarter = timed(run, text(unit, max(chars // 4, 1)))
        if quarter * 16 >= bound and quarter >= 8 * max(probes[unit], 1e-3):
            # A noisy machine only ever adds time: the least of three runs, before one is extrapolated sixteenfold.
            quarter = min(quarter, *(timed(run, text(unit, max(chars // 4, 1))) for _ in range(2)))
        if quarter * 16 >= bound and quarter >= 8 * max(probes[unit], 1e-3):
            return quarter * 16, _name(unit)
        took = timed(run, text(unit, chars))
        if took > slowest:
            slowest, name = took, _name(unit)
    return slowest, name
