"""Slack mrkdwn: entry Markdown rewritten for Slack, user text escaped, long text trimmed safely.

Slack reads `&`, `<` and `>` as control characters, so every one that is not part of a
link is written as an entity. Markdown links become `<url|text>` (http, https and mailto
only), `**bold**` becomes `*bold*`, `*italic*` becomes `_italic_`, headings become bold
lines, list bullets become `•`, and fenced code stays fenced (without its language name,
which Slack would print).
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

__all__ = ["escape", "to_mrkdwn", "link", "trim"]

_LINK = re.compile(
    r"(!?)\[((?:\\.|[^\]\\\n])*)\]\(\s*<?((?:[^()\s>]|\([^()\s]*\))+)>?(?:\s+[\"'][^\"'\n]*[\"'])?\s*\)"
)
_CODE_SPAN = re.compile(r"(`+)(.+?)\1")
_ESCAPED = re.compile(r"\\([!-/:-@\[-`{-~])")
_PLACEHOLDER = re.compile(r"\x00(\d+)\x00")
_ITALIC = re.compile(r"(?<![*\w])\*(?![*\s])(.+?)(?<![*\s])\*(?![*\w])")
_BOLD = re.compile(r"\*\*(?=\S)(.+?)(?<=\S)\*\*|__(?=\S)(.+?)(?<=\S)__")
_STRIKE = re.compile(r"~~(?=\S)(.+?)(?<=\S)~~")
_FENCE = re.compile(r"^\s*(`{3,}|~{3,})")
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$")
_BULLET = re.compile(r"^(\s*)[-*+]\s+")
_QUOTE = re.compile(r"^\s*>\s?")
_SAFE_SCHEMES = ("http", "https", "mailto")


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


class _Stash:
    """Finished pieces set aside while the rest of a line is converted, restored at the end."""

    def __init__(self) -> None:
        self.pieces: list[str] = []

    def put(self, text: str) -> str:
        self.pieces.append(text)
        return f"\x00{len(self.pieces) - 1}\x00"

    def restore(self, text: str) -> str:
        for _ in range(3):  # a link's label may hold stashed pieces of its own
            text = _PLACEHOLDER.sub(lambda m: self.pieces[int(m.group(1))], text)
        return text


def _emphasis(text: str) -> str:
    text = _ITALIC.sub(r"_\1_", text)
    text = _BOLD.sub(lambda m: f"*{m.group(1) or m.group(2)}*", text)
    return _STRIKE.sub(r"~\1~", text)


def _inline(text: str) -> str:
    stash = _Stash()
    text = _CODE_SPAN.sub(lambda m: stash.put(f"`{escape(m.group(2))}`"), text)
    text = _ESCAPED.sub(lambda m: stash.put(escape(m.group(1))), text)

    def as_link(match: re.Match[str]) -> str:
        label = re.sub(r"\*\*|__", "", match.group(2)) or match.group(3)
        safe = _url(match.group(3))
        return stash.put(f"<{safe}|{escape(label)}>" if safe else escape(label))

    text = _LINK.sub(as_link, text)
    return stash.restore(escape(_emphasis(text)))


def to_mrkdwn(markdown: str) -> str:
    """Slack mrkdwn for Markdown text (an entry's answer, or an answer the LLM wrote)."""
    out: list[str] = []
    fence = ""
    for line in markdown.replace("\x00", "").replace("\r\n", "\n").split("\n"):
        opener = _FENCE.match(line)
        if fence:
            if opener and opener.group(1)[0] == fence[0] and len(opener.group(1)) >= len(fence):
                out.append("```")
                fence = ""
            else:
                out.append(escape(line))
            continue
        if opener:
            fence = opener.group(1)
            out.append("```")
            continue
        if heading := _HEADING.match(line):
            title = re.sub(r"\*\*|__", "", heading.group(1))
            out.append(f"*{_inline(title)}*" if title else "")
        elif bullet := _BULLET.match(line):
            out.append(f"{bullet.group(1)}• {_inline(line[bullet.end():])}")
        elif quote := _QUOTE.match(line):
            out.append(f"> {_inline(line[quote.end():])}")
        else:
            out.append(_inline(line))
    if fence:
        out.append("```")
    return re.sub(r"\n{3,}", "\n\n", "\n".join(out)).strip()


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
