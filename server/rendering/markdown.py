"""Markdown to safe HTML: raw HTML off, safe links only, highlighted code blocks, marked terms.

Answers are rendered with markdown-it-py. Raw HTML in the source is escaped, links are
kept only for http(s), mailto and relative targets, and every fenced block is highlighted
on the server (Pygments, server/rendering/highlight.py) and gets a copy button that the
page script reveals. Query terms passed as `marks` are wrapped in `<mark>`.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Iterable
from urllib.parse import urlsplit

from markdown_it import MarkdownIt
from markdown_it.common.utils import escapeHtml
from markupsafe import Markup

from .highlight import highlight_code
from .highlight import language as code_language

__all__ = ["render_markdown", "mark_terms", "is_safe_url", "plain_text", "breakable"]

_SAFE_SCHEMES = {"http", "https", "mailto"}


def is_safe_url(url: str) -> bool:
    """True for http(s), mailto, and relative links; false for javascript:, data:, and the like."""
    cleaned = re.sub(r"[\x00-\x20\x7f]+", "", url)
    scheme = urlsplit(cleaned).scheme.lower() if ":" in cleaned.split("/", 1)[0] else ""
    return scheme == "" or scheme in _SAFE_SCHEMES


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
        out.append(escapeHtml(text[last : match.start()]))
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


SHORT_CODE = 30  # characters: inline code without spaces up to this long fits a phone's line whole


def _render_code_inline(self, tokens, idx, options, env):  # type: ignore[no-untyped-def]
    """Inline code; a short one without spaces (a flag, a name) is marked `word`, kept on one line by the page;
    a longer one may break after the dots, underscores and slashes of its names (`word_breaks`)."""
    content = tokens[idx].content
    if len(content) <= SHORT_CODE and not any(c.isspace() for c in content):
        return f'<code class="word">{_mark_escaped(content, env.get("marks"))}</code>'
    return f"<code>{word_breaks(_mark_escaped(content, env.get('marks')))}</code>"


_BREAK_AFTER = re.compile(r"(<[^>]*>)|([._/=])(?=\S)")  # a tag (skipped), or a separator inside a name
LONG_NAME = 20  # characters: a name this long may not fit a phone's line beside other words


def word_breaks(html: str) -> str:
    """`html` (escaped text, maybe with `<mark>`s) with a line-break opportunity (`<wbr>`) after each `.`, `_`,
    `/` and `=` inside a long name: `models.policy_trainer.max_token_in_packing` breaks on a phone as
    `models.policy_trainer.` / `max_token_in_packing`, at the parts of the name, not mid-word."""

    def run(match: re.Match[str]) -> str:
        name = match.group()
        if len(re.sub(r"<[^>]*>", "", name)) <= LONG_NAME:
            return name
        return _BREAK_AFTER.sub(lambda m: m[1] or f"{m[2]}<wbr>", name)

    return re.sub(r"\S+", run, html)


def _render_fence(self, tokens, idx, options, env):  # type: ignore[no-untyped-def]
    token = tokens[idx]
    info = token.info.strip() if token.type == "fence" else ""
    language = code_language(info, token.content)
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


SUMMARY_READ = 20_000  # characters of Markdown read for a summary: its first 200 are all it shows
# Inline Markdown dropped from a summary: a fence's line, code and bold marks, a link or image kept as its text.
# No part can run past the next opening delimiter, so each is read in time linear in the text.
_SPACES = re.compile(r"\s+")
_MD_NOISE = re.compile(r"```[^\n]*|`|\*\*|__|!?\[([^\[\]\n]*)\]\([^()\n]*\)")


def plain_text(markdown: str, limit: int = 200) -> str:
    """A short plain-text summary of Markdown (for meta descriptions and link titles): its first lines, without
    headings' and list items' marks, code marks and link targets, up to `limit` characters."""
    text = markdown[:SUMMARY_READ]
    want = limit * 4  # characters of lines kept before the marks are dropped
    kept: list[str] = []
    size, at = 0, 0
    while at < len(text) and size < want:
        if blank := _SPACES.match(text, at):  # a run of blank lines, skipped at once
            at = blank.end()
        end = text.find("\n", at)
        end = len(text) if end == -1 else end
        line = text[at : min(end, at + want)].strip()
        at = end + 1
        if line.startswith("#"):
            line = line.lstrip("#").strip()
        elif line[:1] in ("-", "*", "+") and line[1:2].isspace():
            line = line[2:].strip()
        if line:
            kept.append(line)
            size += len(line) + 1
    text = " ".join(_MD_NOISE.sub(lambda m: m.group(1) or "", "\n".join(kept)).split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def breakable(url: str) -> Markup:
    """A URL, escaped, with a line-break opportunity (`<wbr>`) after each slash, so a narrow page breaks it
    between its parts rather than mid-word."""
    scheme, sep, rest = url.rpartition("://")
    return Markup(escapeHtml(scheme + sep) + "/<wbr>".join(escapeHtml(part) for part in rest.split("/")))
