"""Markdown to safe HTML: raw HTML off, safe links only, highlighted code blocks, marked terms.

Answers are rendered with markdown-it-py. Raw HTML in the source is escaped, links are
kept only for http(s), mailto and relative targets, and every fenced block gets a small
server-side highlighter (comments, strings, flags, keywords, numbers) and a copy button
that the page script reveals. Query terms passed as `marks` are wrapped in `<mark>`.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Iterable
from urllib.parse import urlsplit

from markdown_it import MarkdownIt
from markdown_it.common.utils import escapeHtml
from markupsafe import Markup

__all__ = ["render_markdown", "mark_terms", "highlight_code", "is_safe_url", "plain_text"]

_SAFE_SCHEMES = {"http", "https", "mailto"}


def is_safe_url(url: str) -> bool:
    """True for http(s), mailto, and relative links; false for javascript:, data:, and the like."""
    cleaned = re.sub(r"[\x00-\x20\x7f]+", "", url)
    scheme = urlsplit(cleaned).scheme.lower() if ":" in cleaned.split("/", 1)[0] else ""
    return scheme == "" or scheme in _SAFE_SCHEMES


# --- the highlighter -------------------------------------------------------------------

_STRING = r"\"(?:\\.|[^\"\\\n])*\"|'(?:\\.|[^'\\\n])*'"
_NUMBER = r"(?<![\w.])\d+(?:\.\d+)?(?:e-?\d+)?\b"
_RULES: dict[str, list[tuple[str, str]]] = {
    "shell": [
        ("comment", r"(?:(?<=\s)|^)#[^\n]*"),
        ("string", _STRING),
        ("variable", r"\$\{[^}\n]*\}|\$\w+"),
        ("flag", r"(?<![\w/.-])--?[A-Za-z][\w.-]*"),
        ("keyword", r"\b(?:export|if|then|else|elif|fi|for|do|done|in|while|case|esac|"
                    r"function|return|source|sudo|cd|echo|pip3?|python3?|bash|git|conda|"
                    r"torchrun|deepspeed|ray|docker|apt-get|nvidia-smi)\b"),
        ("number", _NUMBER),
    ],
    "python": [
        ("comment", r"#[^\n]*"),
        ("string", r"\"\"\"[\s\S]*?\"\"\"|'''[\s\S]*?'''|" + _STRING),
        ("keyword", r"\b(?:def|class|return|import|from|as|if|elif|else|for|while|in|not|"
                    r"and|or|is|None|True|False|with|try|except|finally|raise|lambda|"
                    r"yield|pass|break|continue|async|await|global)\b"),
        ("decorator", r"^\s*@[\w.]+"),
        ("number", _NUMBER),
    ],
    "yaml": [
        ("comment", r"(?:(?<=\s)|^)#[^\n]*"),
        ("key", r"^[ \t-]*[\w.-]+(?=\s*:)"),
        ("string", _STRING),
        ("keyword", r"\b(?:true|false|null|yes|no|True|False)\b"),
        ("number", _NUMBER),
    ],
    "log": [
        ("error", r"\b[\w.]*(?:Error|Exception|Traceback|FAILED|Killed)\b:?"),
        ("string", _STRING),
        ("flag", r"(?<![\w/.-])--[A-Za-z][\w.-]*"),
        ("number", _NUMBER),
    ],
}
_ALIASES = {"bash": "shell", "sh": "shell", "console": "shell", "zsh": "shell",
            "py": "python", "python3": "python", "yml": "yaml", "text": "log", "": "log"}
_SHELL_HINT = re.compile(r"^\s*(?:\$ |export |pip |python |bash |sh |git |conda |torchrun |"
                         r"deepspeed |cd |sudo |docker |apt-get )", re.M)


@lru_cache(maxsize=None)
def _pattern(language: str) -> re.Pattern[str]:
    rules = _RULES[language]
    return re.compile("|".join(f"(?P<{name}>{rx})" for name, rx in rules), re.M)


def _language(info: str, code: str) -> str | None:
    name = info.strip().split(maxsplit=1)[0].lower() if info.strip() else ""
    name = _ALIASES.get(name, name)
    if name == "log" and _SHELL_HINT.search(code):
        return "shell"
    return name if name in _RULES else None


def highlight_code(code: str, info: str = "") -> str:
    """Escaped HTML for a code block, with `<span class="tok-…">` around recognised tokens."""
    language = _language(info, code)
    if language is None:
        return escapeHtml(code)
    out: list[str] = []
    last = 0
    for match in _pattern(language).finditer(code):
        if match.start() == match.end():
            continue
        out.append(escapeHtml(code[last:match.start()]))
        out.append(f'<span class="tok-{match.lastgroup}">{escapeHtml(match.group())}</span>')
        last = match.end()
    out.append(escapeHtml(code[last:]))
    return "".join(out)


# --- marking query terms ---------------------------------------------------------------

def _terms_pattern(terms: Iterable[str]) -> re.Pattern[str] | None:
    # One-letter terms ("续", "a") would light up half the text; they are left unmarked.
    words = sorted({t.strip() for t in terms if t and len(t.strip()) > 1}, key=len, reverse=True)
    if not words:
        return None
    # A Latin word is marked only as a whole word ("train" not inside "trainer"); Chinese
    # has no spaces, so a Chinese term is marked wherever it occurs.
    return re.compile("|".join(_bounded(w) for w in words), re.IGNORECASE)


def _bounded(word: str) -> str:
    body = re.escape(word)
    if re.match(r"[A-Za-z0-9_]", word):
        body = r"(?<![A-Za-z0-9_])" + body
    if re.search(r"[A-Za-z0-9_]$", word):
        body += r"(?![A-Za-z0-9_])"
    return body


def _mark_escaped(text: str, pattern: re.Pattern[str] | None) -> str:
    if pattern is None:
        return escapeHtml(text)
    out, last = [], 0
    for match in pattern.finditer(text):
        out.append(escapeHtml(text[last:match.start()]))
        out.append(f"<mark>{escapeHtml(match.group())}</mark>")
        last = match.end()
    out.append(escapeHtml(text[last:]))
    return "".join(out)


def mark_terms(text: str, terms: Iterable[str] = ()) -> Markup:
    """Plain text escaped, with each of `terms` (case-insensitive) wrapped in `<mark>`."""
    return Markup(_mark_escaped(text, _terms_pattern(terms)))


# --- the Markdown renderer -------------------------------------------------------------

def _render_text(self, tokens, idx, options, env):  # type: ignore[no-untyped-def]
    return _mark_escaped(tokens[idx].content, env.get("marks"))


def _render_code_inline(self, tokens, idx, options, env):  # type: ignore[no-untyped-def]
    return f"<code>{_mark_escaped(tokens[idx].content, env.get('marks'))}</code>"


def _render_fence(self, tokens, idx, options, env):  # type: ignore[no-untyped-def]
    token = tokens[idx]
    info = token.info.strip() if token.type == "fence" else ""
    language = _language(info, token.content)
    label = escapeHtml(info.split(maxsplit=1)[0]) if info else ""
    css = f' class="language-{language}"' if language else ""
    return (
        '<div class="codeblock">'
        f'<div class="codebar"><span class="codelang">{label}</span>'
        '<button type="button" class="copy" hidden></button></div>'
        f"<pre><code{css}>{highlight_code(token.content, info)}</code></pre></div>\n"
    )


def _render_link_open(self, tokens, idx, options, env):  # type: ignore[no-untyped-def]
    token = tokens[idx]
    href = str(token.attrGet("href") or "")
    if href.startswith(("http://", "https://")):
        token.attrSet("rel", "noopener noreferrer")
    return self.renderToken(tokens, idx, options, env)


@lru_cache(maxsize=1)
def _markdown() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
    md.enable(["table", "strikethrough"])
    md.validateLink = lambda url: is_safe_url(url)  # type: ignore[method-assign]
    md.add_render_rule("text", _render_text)
    md.add_render_rule("code_inline", _render_code_inline)
    md.add_render_rule("fence", _render_fence)
    md.add_render_rule("code_block", _render_fence)
    md.add_render_rule("link_open", _render_link_open)
    return md


def render_markdown(text: str, marks: Iterable[str] = ()) -> Markup:
    """Render Markdown to HTML that is safe to insert into a page."""
    pattern = _terms_pattern(marks)
    if pattern is None:
        return _render_plain(text)
    return Markup(_markdown().render(text, {"marks": pattern}))


@lru_cache(maxsize=2048)
def _render_plain(text: str) -> Markup:
    # Entries do not change while the server runs, so their plain renderings are cached.
    return Markup(_markdown().render(text, {"marks": None}))


_MD_NOISE = re.compile(r"```[^\n]*|`|\*\*|__|^#+\s*|^\s*[-*+]\s+|!?\[([^\]]*)\]\([^)]*\)", re.M)


def plain_text(markdown: str, limit: int = 200) -> str:
    """A short plain-text summary of Markdown (for meta descriptions and link titles)."""
    text = _MD_NOISE.sub(lambda m: m.group(1) or "", markdown)
    text = re.sub(r"\s+", " ", text).strip()
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"
