"""Every regular expression of the packages, found by reading their code, and the hostile texts each is timed on.

`found()` reads kb/, ingest/, server/ and kbcli/ with `ast` and lists each `re.compile(...)` and each inline `re.`
call (`re.sub`, `re.search`, ...) as a `Found`: its file, its key (the pattern's text, or the expression that makes
it) and the compiled pattern (a literal, or an expression of the module's own constants, compiled as the module
does; a pattern made from a value known only at run time is compiled by its row's `make` in
tests/quality/pattern_inventory.py). `hostile_texts(chars)` are the shapes that make a pattern backtrack: runs of
each kind of character, delimiters never closed, and alternations of both. `worst(pattern, chars)` times a
pattern on all of them, each searched end to end as `re.sub` and `re.finditer` do.
"""

from __future__ import annotations

import ast
import importlib
import re
import time
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("kb", "ingest", "server", "kbcli", "trackers")
CALLS = ("compile", "sub", "subn", "search", "match", "fullmatch", "findall", "finditer", "split")
FLAG_POSITION = {"compile": 1, "search": 2, "match": 2, "fullmatch": 2, "findall": 2, "finditer": 2}
FLAG_POSITION |= {"sub": 4, "subn": 4, "split": 3}

# Runs of one kind of character, delimiters never closed, and alternations of the two.
RUNS = " \t\n\r.,:;-_/\\|=+*#`~!?'\"<>[](){}@$%&^0aAzZ中，。 "
OPENED = ["<!--", "<", "[", "(", "`", "```", "**", "__", "[a](", "![", "<a ", "{{", "http://", '"', "'", "&#"]
ALTERNATIONS = [
    "<!--\n",
    " \n",
    "\t\n",
    "a ",
    "a.",
    "a-",
    "a/",
    "a:",
    "a_",
    "a=",
    "1.",
    "1,",
    "0.0.",
    "[a",
    "[]",
    "[ ",
    "(a",
    "a(",
    "()",
    "( ",
    "- [ ]\n",
    "#\n",
    "# ",
    "- ",
    "* ",
    "*a",
    "`a",
    "a`",
    "\n\n- ",
    "|a",
    "a|",
    "| ",
    "a\\",
    "\\\n",
    "中 ",
    "中a",
    "a中",
    ". ",
    ": ",
    "=\n",
    '"a',
    "'a",
    "<a",
    "a>",
    "<>",
    "&a",
    "%a",
    "Error",
    "Traceback (most recent call last)\n",
    '  File "a.py", line 1, in f\n',
    "ab",
    "```a",  # a fence opened and never closed, repeated: each opening tried against the rest of the text
    "```a ",
    "[](<",  # a link destination opened and never closed, repeated
]


@dataclass(frozen=True)
class Found:
    """One pattern in the code: where it is, its key in the inventory, and (when it can be made here) itself."""

    file: str  # relative to the project, e.g. kb/noise.py
    line: int
    key: str  # the pattern's text; for one made at run time, the expression that makes it
    pattern: re.Pattern[str] | None  # None: made from a value known only at run time


def found() -> list[Found]:
    """Every pattern of the packages, in file and line order."""
    patterns = []
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            file = path.relative_to(ROOT).as_posix()
            tree = ast.parse(path.read_text(encoding="utf-8"), file)
            calls = [node for node in ast.walk(tree) if _is_re_call(node)]
            for call in sorted(calls, key=lambda c: (c.lineno, c.col_offset)):
                patterns.append(_found(file, call))
    return patterns


def _is_re_call(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in CALLS
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id == "re"
        and bool(node.args or node.keywords)
    )


def _found(file: str, call: ast.Call) -> Found:
    assert isinstance(call.func, ast.Attribute)
    source = call.args[0] if call.args else next(k.value for k in call.keywords if k.arg == "pattern")
    key = source.value if isinstance(source, ast.Constant) and isinstance(source.value, str) else ast.unparse(source)
    flags_at = FLAG_POSITION[call.func.attr]
    flags = (
        call.args[flags_at]
        if len(call.args) > flags_at
        else next((k.value for k in call.keywords if k.arg == "flags"), None)
    )
    module = importlib.import_module(file.removesuffix(".py").replace("/", "."))
    try:
        text = eval(ast.unparse(source), {"re": re}, vars(module))  # noqa: S307 - the project's own code
        flag = eval(ast.unparse(flags), {"re": re}, vars(module)) if flags is not None else 0  # noqa: S307
        pattern = re.compile(text, flag) if isinstance(text, str) else None
    except NameError:  # a value known only at run time
        pattern = None
    return Found(file, call.lineno, key, pattern)


@lru_cache(maxsize=8)
def hostile_texts(chars: int) -> dict[str, str]:
    """Each hostile shape, `chars` characters long (then one character that matches little), by name."""
    shapes: dict[str, str] = {}
    for unit in [*RUNS, *OPENED, *ALTERNATIONS]:
        shapes[repr(unit)] = (unit * (chars // len(unit) + 1))[:chars] + "\x01"
    return shapes


def timed(pattern: re.Pattern[str], text: str, how: str = "finditer") -> float:
    """Seconds to find every match of `pattern` in `text`, from each position, as `re.sub` does (`how` "finditer"),
    or to match it at the start only ("match")."""
    started = time.perf_counter()
    if how == "match":
        pattern.match(text)
    else:
        pattern.subn("", text)
    return time.perf_counter() - started


def worst(
    pattern: re.Pattern[str], chars: int, bound: float, how: str = "finditer", prepare: Callable[[str], str] = str
) -> tuple[float, str]:
    """The longest time `pattern` takes on a hostile text of `chars`, and that text's name (`how`: "finditer", from
    every position as `re.sub` reads; "match", at the start only, for a pattern only ever matched).

    Every shape is run at a sixteenth of the size; the three slowest there, and any that would pass `bound` at full
    size were they quadratic, at a quarter. One that grew more than eightfold from a sixteenth to a quarter (a
    linear pattern grows fourfold, a quadratic one sixteenfold) and would pass `bound` is reported at its
    quadratic estimate without being run at full size; the others are run at full size. `prepare` is what the
    surface does to text before the pattern sees it (cutting its runs, say); it is not timed."""
    sixteenth = hostile_texts(max(chars // 16, 1))
    probes = {shape: timed(pattern, prepare(text), how) for shape, text in sixteenth.items()}
    ranked = sorted(probes, key=probes.__getitem__, reverse=True)
    suspects = ranked[:3] + [shape for shape in ranked[3:] if probes[shape] * 256 >= bound]
    slowest, name = 0.0, ""
    for shape in suspects:
        quarter_text = prepare(hostile_texts(max(chars // 4, 1))[shape])
        quarter = timed(pattern, quarter_text, how)
        if quarter * 16 >= bound and quarter >= 8 * max(probes[shape], 1e-4):
            # A noisy machine only ever adds time: the least of three runs, before one is extrapolated sixteenfold.
            quarter = min(quarter, *(timed(pattern, quarter_text, how) for _ in range(2)))
        if quarter * 16 >= bound and quarter >= 8 * max(probes[shape], 1e-4):
            return quarter * 16, shape
        took = timed(pattern, prepare(hostile_texts(chars)[shape]), how)
        if took > slowest:
            slowest, name = took, shape
    return slowest, name


Make = Callable[[], list[re.Pattern[str]]]


def patterns_of(item: Found, make: Make | None) -> list[re.Pattern[str]]:
    """The pattern(s) to time for `item`: itself, or what its row's `make` gives for one made at run time."""
    if item.pattern is not None:
        return [item.pattern]
    assert make is not None, f"{item.file}:{item.line}: {item.key!r} is made at run time: its row needs a `make`"
    return make()


def module(name: str) -> Any:
    return importlib.import_module(name)
