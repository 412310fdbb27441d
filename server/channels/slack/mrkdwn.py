"""Slack mrkdwn: entry Markdown rewritten for Slack, user text escaped, long text trimmed safely.

The Markdown is parsed by markdown-it-py (the parser the pages use: CommonMark, raw HTML
off, tables and strikethrough on) and its syntax tree written out as mrkdwn: `**bold**`
becomes `*bold*`, `*italic*` `_italic_`, `~~gone~~` `~gone~`, links `<url|text>` (http,
https and mailto only; any other link is just its text), headings bold lines, list items
`•` or `1.` lines, block quotes `>` lines, and code spans and fenced code stay as written
(a fence without its language name, which Slack would print). Slack reads `&`, `<` and `>`
as control characters everywhere, code included, so every one of them is written as an
entity; nothing else is escaped.
"""

from __future__ import annotations

import re
from functools import lru_cache
from urllib.parse import urlsplit

from markdown_it import MarkdownIt
from markdown_it.tree import SyntaxTreeNode

__all__ = ["escape", "to_mrkdwn", "link", "trim"]

_SAFE_SCHEMES = ("http", "https", "mailto")
_MARKS = {"strong": "*", "em": "_", "s": "~"}


def escape(text: str) -> str:
    """Text shown as written: `&`, `<` and `>` as entities, so nothing in it becomes a link or mention."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _url(url: str) -> str | None:
    scheme = urlsplit(url).scheme.lower()
    if scheme not in _SAFE_SCHEMES:
        return None
    return url.replace(" ", "%20").replace("<", "%3C").replace(">", "%3E").replace("|", "%7C")


def link(url: str, text: str) -> str:
    """`<url|text>` with the text escaped; just the text when the URL is not http(s) or mailto."""
    safe = _url(url)
    return f"<{safe}|{escape(text)}>" if safe else escape(text)


@lru_cache(maxsize=1)
def _parser() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
    md.enable(["table", "strikethrough"])
    # Every link is parsed; the writer keeps the safe ones and writes the others as their text.
    md.validateLink = lambda url: True  # type: ignore[method-assign]
    return md


class _Code(str):
    """A line of a code block: written as it is, never indented under a list item."""


# --- inline ------------------------------------------------------------------------------


def _inline(node: SyntaxTreeNode, mode: str = "") -> str:
    """The mrkdwn of an inline node's children. `mode` is "" (all formatting), "heading"
    (no bold: the line is bold already) or "plain" (a link's text: no formatting at all)."""
    out: list[str] = []
    for child in node.children:
        kind = child.type
        if kind == "text":
            out.append(escape(child.content))
        elif kind == "code_inline":
            out.append(escape(child.content) if mode == "plain" else f"`{escape(child.content)}`")
        elif kind in ("softbreak", "hardbreak"):
            out.append(" " if mode == "plain" else "\n")
        elif kind in _MARKS:
            inner = _inline(child, mode)
            bare = mode == "plain" or (mode == "heading" and kind == "strong")
            out.append(inner if bare or not inner else f"{_MARKS[kind]}{inner}{_MARKS[kind]}")
        elif kind in ("link", "image"):
            out.append(_link(child, mode))
        else:
            out.append(escape(child.content))
    return "".join(out)


def _link(node: SyntaxTreeNode, mode: str) -> str:
    label = _inline(node, "plain")
    if node.markup == "autolink":  # `<https://…>` is Slack's own link syntax: shown as written
        return f"&lt;{label}&gt;"
    url = str(node.attrs.get("href" if node.type == "link" else "src", ""))
    safe = _url(url)
    if safe is None or mode == "plain":
        return label
    return f"<{safe}|{label or escape(url)}>"


# --- blocks ------------------------------------------------------------------------------


def _blocks(nodes: list[SyntaxTreeNode], separator: str) -> list[str]:
    """The lines of a run of blocks, `separator` (a blank line or none) between them."""
    lines: list[str] = []
    for node in nodes:
        block = _block(node)
        if not block:
            continue
        if lines and separator:
            lines.append("")
        lines.extend(block)
    return lines


def _block(node: SyntaxTreeNode) -> list[str]:
    kind = node.type
    if kind == "paragraph":
        return _inline(node.children[0]).split("\n")
    if kind == "heading":
        title = _inline(node.children[0], "heading").strip()
        return [f"*{line}*" for line in title.split("\n") if line.strip()]
    if kind in ("fence", "code_block"):
        code = node.content.removesuffix("\n")
        return [_Code("```"), *(_Code(escape(line)) for line in code.split("\n")), _Code("```")]
    if kind == "blockquote":
        return [f"> {line}".rstrip() for line in _blocks(node.children, "\n")]
    if kind in ("bullet_list", "ordered_list"):
        return _list(node)
    if kind == "table":
        return _table(node)
    if kind == "hr":
        return ["---"]
    return [escape(line) for line in node.content.split("\n")] if node.content else []


def _list(node: SyntaxTreeNode) -> list[str]:
    ordered = node.type == "ordered_list"
    start = int(node.attrs.get("start", 1)) if ordered else 1
    tight = all(p.hidden for item in node.children for p in item.children if p.type == "paragraph")
    lines: list[str] = []
    for number, item in enumerate(node.children, start):
        marker = f"{number}. " if ordered else "• "
        body = _blocks(item.children, "" if tight else "\n") or [""]
        lines.append(marker + body[0])
        indent = " " * len(marker)
        lines.extend(line if isinstance(line, _Code) or not line else indent + line for line in body[1:])
    return lines


def _table(node: SyntaxTreeNode) -> list[str]:
    """A table as one line per row, cells split by ` | `, the header cells bold."""
    lines: list[str] = []
    for row in (row for part in node.children for row in part.children):
        cells = [_inline(cell.children[0], "heading") if cell.children else "" for cell in row.children]
        header = row.children and row.children[0].type == "th"
        lines.append(" | ".join(f"*{c}*" if header and c else c for c in cells))
    return lines


def to_mrkdwn(markdown: str) -> str:
    """Slack mrkdwn for Markdown text (an entry's answer, or an answer the LLM wrote)."""
    tree = SyntaxTreeNode(_parser().parse(markdown.replace("\x00", "")))
    return "\n".join(_blocks(tree.children, "\n")).strip("\n")


# --- trimming ------------------------------------------------------------------------------


def trim(text: str, limit: int, more: str = "") -> str:
    """`text` if it fits in `limit` characters; else cut at a line break, then `…` and `more` (a link).

    The cut never ends inside a `<link>`, an `&entity;` or a code block (an open block is closed).
    """
    if len(text) <= limit:
        return text
    tail = "…" + (f"\n{more}" if more else "")
    room = limit - len(tail) - 8  # space to close a code span or block
    if room <= 0:
        raise ValueError(f"limit {limit} leaves no room for the text before {tail!r}")
    cut = text[:room]
    for separator in ("\n\n", "\n", " "):
        at = cut.rfind(separator)
        if at > room * 0.6:
            cut = cut[:at]
            break
    if cut.rfind("<") > cut.rfind(">"):
        cut = cut[: cut.rfind("<")]
    cut = re.sub(r"&[a-z]{0,3}$", "", cut).rstrip()  # half an &amp; / &lt; / &gt;
    if cut.count("```") % 2:
        cut += "\n```\n"
    elif cut.replace("```", "").count("`") % 2:
        cut += "`"
    return cut + tail
