"""A maintainer's comment made fit to be an FAQ answer: quoted text dropped, mentions and HTML neutralised.

Every step is a single pass over text already cut to `threads.MAX_TEXT` characters, with patterns
that cannot backtrack (bounded repeats, no nested quantifiers), so a hostile comment (65,536
characters of `>`, `@`, `<`) costs linear time.
"""

from __future__ import annotations

import re

__all__ = ["clean_answer", "clean_question", "MAX_ANSWER"]

MAX_ANSWER = 20_000  # characters of an answer kept (kb.written's limit)

_TAG = re.compile(r"</?[A-Za-z][A-Za-z0-9-]{0,30}(?:\s[^<>]{0,2000})?/?>")  # an HTML tag, its attributes
_MENTION = re.compile(r"(?<![\w`/@.])@([A-Za-z0-9](?:[A-Za-z0-9-]{0,38}))(?![\w/])")
_BLANK_RUN = re.compile(r"\n{3,}")


def _without_html_comments(text: str) -> str:
    """`text` without `<!-- ... -->` (a template's hints), in one pass of `str.find`; an unclosed one runs to the end."""
    kept, at = [], 0
    while True:
        start = text.find("<!--", at)
        if start < 0:
            kept.append(text[at:])
            return "".join(kept)
        kept.append(text[at:start])
        end = text.find("-->", start + 4)
        if end < 0:
            return "".join(kept)
        at = end + 3


def _unquoted(text: str) -> str:
    """The lines that are not quotes (`>` at any depth) and not the "On ... wrote:" line above one."""
    kept: list[str] = []
    for line in text.split("\n"):
        if line.lstrip().startswith(">"):
            if kept and kept[-1].rstrip().endswith(("wrote:", "写道：", "写道:")):
                kept.pop()
            continue
        kept.append(line)
    return "\n".join(kept)


def _outside_code(text: str, change: "re.Pattern[str]", to: str) -> str:
    """`change` replaced by `to` outside fenced code blocks (a log may hold `<module>` or `@decorator`)."""
    parts = text.split("```")
    for i in range(0, len(parts), 2):  # even parts are outside fences
        parts[i] = change.sub(to, parts[i])
    return "```".join(parts)


def clean_answer(text: str) -> str:
    """`text` as an FAQ answer: quotes of earlier comments dropped, HTML comments and tags removed (an
    image tag's picture is lost, not linked), each `@name` shown as code so it notifies no one, blank runs
    squeezed; at most `MAX_ANSWER` characters."""
    text = text.replace("\r\n", "\n")
    text = _without_html_comments(text)
    text = _unquoted(text)
    text = _outside_code(text, _TAG, "")
    text = text.replace("<", "&lt;") if "```" not in text else _outside_code(text, re.compile("<"), "&lt;")
    text = _outside_code(text, _MENTION, r"`@\1`")
    text = _BLANK_RUN.sub("\n\n", text).strip()
    return text[:MAX_ANSWER].rstrip()


def clean_question(text: str) -> str:
    """A thread's question as a draft's: HTML comments and tags removed, each `@name` shown as code, each
    paragraph on one line (the first is the title)."""
    text = _outside_code(_without_html_comments(text), _TAG, "")
    text = _outside_code(text.replace("<", "&lt;"), _MENTION, r"`@\1`")
    paragraphs = (" ".join(p.split()) for p in text.split("\n\n"))
    return "\n\n".join(p for p in paragraphs if p)
