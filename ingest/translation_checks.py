"""What a machine translation must keep: its original's code, links and Markdown structure, in the other language.

`problem` says what an LLM's reply changed (a code block, inline code, a link, the headings
and list items), or that its prose is still in the original's language; `kb translate`
leaves such an entry out of the draft. `unwrapped` takes off a code fence the model put
around its whole reply.
"""

from __future__ import annotations

import re
from collections import Counter

from markdown_it import MarkdownIt
from markdown_it.token import Token

from .manifest import LANGS, document_lang

__all__ = ["LANG_NAMES", "other_lang", "problem", "holds_language", "unwrapped"]

_md = MarkdownIt("commonmark")
LANG_NAMES = {"zh": "Simplified Chinese", "en": "English"}
_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_LATIN = re.compile(r"[A-Za-z]")
_BARE_URL = re.compile(r"https?://[!#-&(-;=?-_a-~]+")


def other_lang(lang: str) -> str:
    return next(other for other in LANGS if other != lang)


def _inline_tokens(tokens: list[Token]) -> list[Token]:
    return [child for token in tokens if token.type == "inline" for child in token.children or []]


def _codes(tokens: list[Token]) -> list[str]:
    return [f"{t.info}\n{t.content}" for t in tokens if t.type in ("fence", "code_block")]


def _spans(tokens: list[Token]) -> Counter[str]:
    return Counter(child.content for child in _inline_tokens(tokens) if child.type == "code_inline")


def _links(tokens: list[Token]) -> Counter[str]:
    found: Counter[str] = Counter()
    for child in _inline_tokens(tokens):
        if child.type == "link_open":
            found[str(child.attrs.get("href", ""))] += 1
        elif child.type == "image":
            found[str(child.attrs.get("src", ""))] += 1
        elif child.type == "text":
            for url in _BARE_URL.findall(child.content):
                url = url.rstrip(".,;:!?'\"*")
                while url.endswith(")") and url.count(")") > url.count("("):
                    url = url[:-1]
                found[url] += 1
    return found


def _structure(tokens: list[Token], lines: list[str]) -> list[str]:
    """The kinds of the blocks in order: headings with their level, list items with their
    marker and indentation, code, quotes, rules."""
    kinds = []
    for t in tokens:
        if t.type == "heading_open":
            kinds.append(t.tag)
        elif t.type == "list_item_open":
            line = lines[t.map[0]] if t.map and t.map[0] < len(lines) else ""
            indent = len(line) - len(line.lstrip(" >"))
            kinds.append(f"item {indent} {t.info}{t.markup}")
        elif t.type in ("fence", "code_block", "blockquote_open", "hr", "html_block"):
            kinds.append(t.type)
    return kinds


def _prose(tokens: list[Token]) -> str:
    return " ".join(child.content for child in _inline_tokens(tokens) if child.type == "text")


def _speaks(text: str, lang: str) -> bool:
    """Whether `text` holds any words of `lang`."""
    return bool((_CJK if lang == "zh" else _LATIN).search(_BARE_URL.sub("", text)))


def holds_language(markdown: str, lang: str) -> bool:
    """Whether the prose of `markdown` (its text outside code and link targets) holds any words of `lang`."""
    return _speaks(_prose(_md.parse(markdown)), lang)


def problem(original: str, reply: str, source_lang: str, target_lang: str) -> str | None:
    """What the reply changed that a translation must keep, or None when nothing."""
    before, after = _md.parse(original), _md.parse(reply)
    if _codes(before) != _codes(after):
        return "a code block changed"
    lost = _spans(before) - _spans(after)
    if lost or _spans(after) - _spans(before):
        return f"inline code `{next(iter(lost))}` changed" if lost else "inline code was added"
    links = _links(before) - _links(after)
    if links or _links(after) - _links(before):
        return f"the link {next(iter(links))} changed" if links else "a link was added"
    if _structure(before, original.split("\n")) != _structure(after, reply.split("\n")):
        return "the Markdown structure changed (headings, list items or code blocks)"
    prose = _prose(after)
    if _speaks(_prose(before), source_lang) and _speaks(prose, source_lang) and document_lang(prose) != target_lang:
        return f"the reply is not in {LANG_NAMES[target_lang].split()[-1]}"
    return None


def unwrapped(reply: str, original: str) -> str:
    """The reply without a code fence the model put around all of it."""
    text = reply.strip("\n").rstrip()
    lines = text.split("\n")
    if (
        len(lines) >= 2
        and re.fullmatch(r"```\s*(markdown|md)?\s*", lines[0])
        and lines[-1].strip() == "```"
        and not original.lstrip().startswith("```")
    ):
        return "\n".join(lines[1:-1]).strip("\n")
    return text
