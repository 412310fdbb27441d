"""Code blocks highlighted with Pygments: the lexer for a fence's language, `tok-*` classes, and their stylesheet.

The pages' Content-Security-Policy forbids inline styles, so tokens get classes only
(`<span class="tok-c1">`), coloured by templates/static/code.css, which is `stylesheet()`
written out (a test checks that the two agree, and says how to write it again). The
colours are the site's own CSS variables, so dark mode follows.

A fence names its language (`bash`, `python`, `yaml`, anything Pygments knows). A block
with no language, or `text`/`log`, is guessed only where that is safe: shell commands when
a line starts with a common command or a `$ ` prompt, a Python traceback by its first line.
Anything else, an unknown language included, is plain escaped text.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any, Iterator

from markdown_it.common.utils import escapeHtml
from pygments import highlight
from pygments.filter import simplefilter
from pygments.formatters import HtmlFormatter
from pygments.lexer import Lexer
from pygments.lexers import get_lexer_by_name
from pygments.style import Style
from pygments.token import Comment, Generic, Keyword, Name, Number, Operator, String, Text
from pygments.util import ClassNotFound

__all__ = ["highlight_code", "language", "stylesheet", "CLASS_PREFIX"]

CLASS_PREFIX = "tok-"
UNLABELLED = {"", "text", "txt", "plain", "plaintext", "log", "output"}  # guessed, else plain
_PROMPT = re.compile(r"^[ \t]*\$ ", re.M)
_SHELL_HINT = re.compile(
    r"^[ \t]*(?:export |pip3? |python3? |bash |sh |git |conda |torchrun |deepspeed |cd |sudo |"
    r"docker |apt-get |ray |nvidia-smi)",
    re.M,
)
_TRACEBACK = re.compile(r"\A\s*Traceback \(most recent call last\):")


COLOURS = {  # the site's CSS variables (app.css sets them for light and dark); other tokens stay plain text
    Comment: "italic var(--tok-comment)",
    Generic.Prompt: "var(--tok-comment)",
    String: "var(--tok-string)",
    Keyword: "var(--tok-keyword)",
    Operator.Word: "var(--tok-keyword)",
    Name.Builtin: "var(--tok-keyword)",
    Name.Decorator: "var(--tok-keyword)",
    Name.Variable: "var(--tok-flag)",
    Name.Tag: "var(--tok-flag)",  # YAML keys
    Name.Attribute: "var(--tok-flag)",
    Number: "var(--tok-number)",
    Name.Exception: "bold var(--tok-error)",
    Generic.Error: "bold var(--tok-error)",
    Generic.Traceback: "var(--tok-error)",
}


class FAQStyle(Style):
    styles = dict(COLOURS)  # Pygments adds every other token type, uncoloured


_COLOURED = tuple(COLOURS)


@simplefilter
def _coloured_only(
    self: Any, lexer: Lexer, stream: Iterator[tuple[Any, str]], options: Any
) -> Iterator[tuple[Any, str]]:
    """Tokens the style does not colour (names, punctuation, whitespace, what a lexer could not read) as plain text:
    no span for them."""
    for kind, value in stream:
        yield (kind if any(kind in coloured for coloured in _COLOURED) else Text), value


_FORMATTER = HtmlFormatter(style=FAQStyle, classprefix=CLASS_PREFIX, nowrap=True)


@lru_cache(maxsize=64)
def _lexer(name: str) -> Lexer | None:
    try:
        # No newlines stripped, tabs kept. Some lexers drop a last line without a newline, so one is
        # added if missing (`ensurenl`) and taken out again after (`highlight_code`).
        lexer = get_lexer_by_name(name, stripnl=False, ensurenl=True, tabsize=0)
    except ClassNotFound:
        return None
    lexer.add_filter(_coloured_only())
    return lexer


def _guess(code: str) -> str:
    if _TRACEBACK.match(code):
        return "pytb"
    if _PROMPT.search(code):
        return "console"
    if _SHELL_HINT.search(code):
        return "bash"
    return ""


def language(info: str, code: str) -> str:
    """The Pygments name of the lexer for a block (its first alias), or "" for plain text."""
    name = info.strip().split(maxsplit=1)[0].lower() if info.strip() else ""
    if name in UNLABELLED:
        name = _guess(code)
    lexer = _lexer(name) if name else None
    return lexer.aliases[0] if lexer is not None and lexer.aliases and lexer.name != "Text only" else ""


def highlight_code(code: str, info: str = "") -> str:
    """Escaped HTML for a code block, with `<span class="tok-…">` around the tokens its lexer finds."""
    name = language(info, code)
    lexer = _lexer(name) if name else None
    if lexer is None:
        return escapeHtml(code)
    html = highlight(code, lexer, _FORMATTER)
    if not code.endswith("\n"):  # the newline the lexer added: only closing tags can follow it
        at = html.rfind("\n")
        html = html[:at] + html[at + 1 :]
    return html


def stylesheet() -> str:
    """The CSS for the token classes, scoped to code blocks."""
    rules = _FORMATTER.get_token_style_defs(".codeblock")
    head = "/* Code highlighting: written from the token colours in server/rendering/highlight.py (stylesheet()). */"
    return "\n".join([head, *(line for line in rules if line.strip())]) + "\n"
