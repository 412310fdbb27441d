"""The outline of a FAQ document: its headings, their anchors, which level holds the questions."""

from __future__ import annotations

import re
from dataclasses import dataclass

from markdown_it.token import Token

from .anchors import github_anchor

__all__ = ["Heading", "headings", "plain", "question_level", "section", "title"]


@dataclass(frozen=True)
class Heading:
    level: int
    text: str  # rendered text: markers dropped, code-span text kept
    start: int  # 0-based first line
    end: int  # 0-based line after the heading
    anchor: str
    quoted: str = ""  # `text` with a code span of several words in quotation marks: the question as read


# Inline HTML a heading may use for looks, dropped from its text; anything else in angle brackets is text
# a FAQ means (`<unk>`, `List<String>`, `<eos>`), which Markdown parses as HTML all the same.
_MARKUP = re.compile(
    r"</?(?:a|abbr|b|big|br|code|del|em|font|i|img|ins|kbd|mark|small|span|strong|sub|sup|u|wbr)(?:\s[^<>]*)?/?>",
    re.I,
)


def plain(children: list[Token], keep_underscores: bool = False, quote_code: bool = False) -> str:
    """Inline tokens as plain text, HTML markup dropped and other text in angle brackets kept. With
    `keep_underscores`, `__init__` stays `__init__` rather than turning into bold "init": in a technical FAQ
    it is a name. With `quote_code`, a code span of several words (an error message, a setting's title) is
    put in quotation marks, as its backticks set it apart: "shows an `an illegal memory access was
    encountered` error" reads 'shows an “an illegal memory access was encountered” error', not "shows an
    an illegal ..."; a span of one word (`max_tokens_per_gpu`) is a name, and left bare."""
    out: list[str] = []
    for child in children:
        if child.type == "code_inline" and quote_code and len(child.content.split()) > 1:
            out.append(f"“{child.content.strip()}”")
        elif child.type in ("text", "code_inline"):
            out.append(child.content)
        elif child.type in ("softbreak", "hardbreak"):
            out.append(" ")
        elif child.type == "html_inline" and not _MARKUP.fullmatch(child.content):
            out.append(child.content)
        elif child.type == "image":
            out.append(plain(child.children or [], keep_underscores, quote_code))
        elif keep_underscores and child.type.startswith(("em_", "strong_")):
            out.append(child.markup if child.markup.startswith("_") else "")
    return re.sub(r"\s+", " ", "".join(out)).strip()


def headings(tokens: list[Token]) -> list[Heading]:
    """Top-level headings in document order; every heading counts toward anchor repeats."""
    seen: dict[str, int] = {}
    found: list[Heading] = []
    for i, token in enumerate(tokens):
        if token.type != "heading_open":
            continue
        text = plain(tokens[i + 1].children or [])
        anchor = github_anchor(text, seen)
        if token.level == 0 and token.map:
            quoted = plain(tokens[i + 1].children or [], quote_code=True)
            found.append(Heading(int(token.tag[1]), text, token.map[0], token.map[1], anchor, quoted))
    return found


def title(headings: list[Heading]) -> Heading | None:
    """The document title: a first `#` heading that is the only one at its level."""
    if headings and headings[0].level == 1 and sum(h.level == 1 for h in headings) == 1:
        return headings[0]
    return None


def question_level(headings: list[Heading], lines: list[str]) -> int:
    """The shallowest level below `#` whose headings are not all bare groups of deeper ones. Headings after the
    last deeper one do not count: a closing section (a disclaimer, a note on the licence) after the questions
    does not make their group headings questions."""
    levels = sorted({h.level for h in headings if h.level > 1})
    for level in levels:
        last = max((h.start for h in headings if h.level > level), default=-1)
        counted = [h for h in headings if h.level == level and h.start < last]
        if not counted or not all(_groups_only(h, headings, lines) for h in counted):
            return level
    return 1


def _groups_only(heading: Heading, headings: list[Heading], lines: list[str]) -> bool:
    """True when nothing but blank lines separates the heading from a deeper one after it."""
    following = next((h for h in headings if h.start >= heading.end), None)
    if following is None or following.level <= heading.level:
        return False
    return not any(line.strip() for line in lines[heading.end : following.start])


def section(headings: list[Heading], line: int, below: int) -> Heading | None:
    """The nearest heading before `line` shallower than level `below`, not the title."""
    top = title(headings)
    before = [h for h in headings if h.start < line and h.level < below and h is not top]
    return before[-1] if before else None
