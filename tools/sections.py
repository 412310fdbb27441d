"""A generated section of a docs page: its marker lines, and the page with a section's text put between them.

    <!-- generated: NAME (python tools/gendocs.py) -->
    ...
    <!-- end generated -->

`tools/gendocs.py` writes every section; the modules that write one raise GenerationError for what
they cannot describe, and use `cell` for text that goes in a table.
"""

from __future__ import annotations

import re

__all__ = ["END", "START", "GenerationError", "cell", "rewrite"]

START = re.compile(r"^<!-- generated: ([a-z][a-z0-9-]*)\b[^>]*-->\n", re.M)
END = "<!-- end generated -->"


class GenerationError(Exception):
    """A page's markers are missing or broken, or the code cannot be described (a module without a docstring)."""


def cell(text: str) -> str:
    """Text fit for one table cell: whitespace collapsed, `|` escaped."""
    return " ".join(text.split()).replace("|", "\\|")


def rewrite(text: str, name: str, body: str, page: str) -> str:
    """`text` with the section `name` holding `body`; GenerationError when its markers are not there once."""
    starts = [m for m in START.finditer(text) if m.group(1) == name]
    if len(starts) != 1:
        raise GenerationError(
            f"{page}: {'no' if not starts else 'more than one'} `<!-- generated: {name} -->` marker line"
        )
    begin = starts[0].end()
    end = text.find(END, begin)
    if end < 0 or START.search(text, begin, end):
        raise GenerationError(f"{page}: the section `{name}` has no `{END}` line after it")
    return text[:begin] + body.rstrip("\n") + "\n\n" + text[end:]
