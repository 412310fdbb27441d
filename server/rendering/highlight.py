"""Code blocks highlighted with Pygments: the lexer for a fence's language, `tok-*` classes, and their stylesheet.

The pages' Content-Security-Policy forbids inline styles, so tokens get classes only
(`<span class="tok-c1">`), coloured by templates/static/code.css, which is `stylesheet()`
written out (a test checks that the two agree, and says how to write it again). The
colours are the site's own CSS variables, so dark mode follows.

A fence names its language. Only the languages FAQs use are highlighted (`LEXERS`: shell,
console sessions, Python and its tracebacks, YAML, JSON, TOML, INI, diffs); a block with no
language, or `text`/`log`, is guessed only where that is safe: shell commands when a line
starts with a common command or a `$ ` prompt, a Python traceback by its first line.
Anything else, every other language Pygments knows included, is plain escaped text.

The text is from outside (a written or harvested answer, an LLM's reply), so its cost is
bounded by construction. Pygments' lexers are regular expressions written for trusted
files: some loop forever on a few characters, and many take time quadratic in the block
(the Python lexer 11 s on 20,000 characters of tab-newline pairs). So a block is lexed one
line at a time, each line afresh: a line longer than `MAX_LINE` or a block longer than
`MAX_CODE` is plain text. A construct spanning lines (a triple-quoted string) is coloured
line by line, the price of a cost linear in the block. tests/quality/test_lexers.py times
every lexer of `LEXERS` on hostile text at these sizes.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any, Iterator

from markdown_it.common.utils import escapeHtml
from pygments import format as format_tokens
from pygments.filter import simplefilter
from pygments.formatters import HtmlFormatter
from pygments.lexer import Lexer
from pygments.lexers import get_lexer_by_name
from pygments.style import Style
from pygments.token import Comment, Generic, Keyword, Name, Number, Operator, String, Text

__all__ = ["highlight_code", "language", "stylesheet", "CLASS_PREFIX", "LEXERS", "MAX_CODE", "MAX_LINE"]

CLASS_PREFIX = "tok-"
UNLABELLED = {"", "text", "txt", "plain", "plaintext", "log", "output"}  # guessed, else plain
# A fence's language, as written (lower-cased), to the Pygments lexer it is read with: nothing else is highlighted.
LEXERS = {
    **dict.fromkeys(("bash", "sh", "shell", "zsh"), "bash"),
    **dict.fromkeys(("console", "shell-session", "shellsession"), "console"),
    **dict.fromkeys(("python", "py", "python3", "py3"), "python"),
    **dict.fromkeys(("pycon", "python-console"), "pycon"),
    **dict.fromkeys(("pytb", "py3tb", "traceback"), "pytb"),
    **dict.fromkeys(("yaml", "yml"), "yaml"),
    "json": "json",
    "toml": "toml",
    **dict.fromkeys(("ini", "cfg"), "ini"),
    **dict.fromkeys(("diff", "patch", "udiff"), "diff"),
}
MAX_CODE = 10_000  # characters of a block highlighted; a longer one is plain text
MAX_LINE = 400  # characters of a line highlighted; a longer one is plain text
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


@lru_cache(maxsize=len(set(LEXERS.values())))
def _lexer(name: str) -> Lexer:
    # No newlines stripped, tabs kept. Some lexers drop a last line without a newline, so one is
    # added if missing (`ensurenl`) and taken out again after (`highlight_code`).
    lexer = get_lexer_by_name(name, stripnl=False, ensurenl=True, tabsize=0)
    lexer.add_filter(_coloured_only())
    return lexer


def _tokens(lexer: Lexer, code: str) -> Iterator[tuple[Any, str]]:
    """The block's tokens, each line lexed on its own; blank and over-long lines as plain text."""
    for line in code.splitlines(keepends=True):
        if len(line) > MAX_LINE or not line.strip():
            yield Text, line
            continue
        yield from lexer.get_tokens(line)


def _guess(code: str) -> str:
    if _TRACEBACK.match(code):
        return "pytb"
    if _PROMPT.search(code):
        return "console"
    if _SHELL_HINT.search(code):
        return "bash"
    return ""


def language(info: str, code: str) -> str:
    """The Pygments name of the lexer for a block, or "" for plain text (an unknown language, or too long a block)."""
    name = info[:64].strip().split(maxsplit=1)[0].lower() if info.strip() else ""
    if name in UNLABELLED:
        name = _guess(code[:MAX_CODE])
    return LEXERS[name] if name in LEXERS and len(code) <= MAX_CODE else ""


def highlight_code(code: str, info: str = "") -> str:
    """Escaped HTML for a code block, with `<span class="tok-…">` around the tokens its lexer finds."""
    name = language(info, code)
    if not name:
        return escapeHtml(code)
    html = format_tokens(_tokens(_lexer(name), code), _FORMATTER)
    if not code.endswith("\n"):  # the newline the lexer added: only closing tags can follow it
        at = html.rfind("\n")
        html = html[:at] + html[at + 1 :]
    return html


def stylesheet() -> str:
    """The CSS for the token classes, scoped to code blocks."""
    rules = _FORMATTER.get_token_style_defs(".codeblock")
    head = "/* Code highlighting: written from the token colours in server/rendering/highlight.py (stylesheet()). */"
    return "\n".join([head, *(line for line in rules if line.strip())]) + "\n"
