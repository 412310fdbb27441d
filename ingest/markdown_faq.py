"""The FAQ parser: one Markdown document in, its question-and-answer entries out.

Two layouts are understood, chosen by the manifest's `entries` field:

- "headings": each heading at the question level (the shallowest level below `#`
  that is used, past levels that only group deeper headings: ROLL's English page has
  `## topic` headings with nothing but `### question` headings under them; a closing section after the last
  question, such as a `## Disclaimer`, does not change that) is a question; its answer runs to the next heading at
  that level or above. Shallower headings are sections, and text under a shallower heading with no question is
  no entry's.
- "list": each top-level list item whose first line is bold text alone
  (`1. **question**`) is a question; its answer is the rest of the item, dedented,
  plus any blocks that follow the list up to the next question or heading (bodies
  written without indentation). Headings are sections.

The splitting walks markdown-it tokens; `token.map` gives the source lines, so an
answer is the document's own Markdown text.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

from markdown_it import MarkdownIt
from markdown_it.token import Token

from kb.entries import Entry, Source, entry_id
from kb.errors import SourceError
from kb.hyperlinks import absolutize_links, drop_language_links

from . import headings as outline
from .document import read_text
from .linebreaks import has_lost_newlines, restore_newlines

__all__ = ["parse_source", "title_of", "heading_title", "guess_entries_style"]

_md = MarkdownIt("commonmark")

# Items such as "**Note**" are tips; they are titled by their section: "Note (Qlora)".
_GENERIC_QUESTIONS = {"note", "notes", "tip", "tips", "注意", "注意事项", "备注", "提示", "说明"}
_AFTER_QUESTION = re.compile(r"[\s:：。.!！?？]*")
_LIST_MARKER = re.compile(r"( *)(\d{1,9}[.)]|[-+*])( *)")


@dataclass(frozen=True)
class _Question:
    question: str  # as read: a code span of several words in quotation marks (`outline.plain`'s `quote_code`)
    start: int  # 0-based line of the question
    answer: str
    section: outline.Heading | None
    key: str  # the question's text without those marks, which its id is made of, as it always was


def _bold_question(tokens: list[Token], i: int) -> tuple[str, str, int, int] | None:
    """For a top-level list item at `tokens[i]` whose first line is bold text alone:
    (question, its key, line of the question, number of lines the bold text spans)."""
    if tokens[i].level != 1 or tokens[i + 1].type != "paragraph_open":
        return None
    paragraph, inline = tokens[i + 1], tokens[i + 2]
    children = [c for c in inline.children or [] if not (c.type == "text" and not c.content)]
    if not children or children[0].type != "strong_open" or not paragraph.map:
        return None
    depth = 0
    for end, child in enumerate(children):
        depth += {"strong_open": 1, "strong_close": -1}.get(child.type, 0)
        if depth == 0:
            break
    inner, rest = children[1:end], children[end + 1 :]
    for child in rest:  # nothing but punctuation may follow on the question's line
        if child.type == "softbreak":
            break
        if child.type != "text" or not _AFTER_QUESTION.fullmatch(child.content):
            return None
    question = outline.plain(inner, keep_underscores=True, quote_code=True)
    key = outline.plain(inner, keep_underscores=True)
    spans = 1 + sum(c.type in ("softbreak", "hardbreak") for c in inner)
    return (question, key, paragraph.map[0], spans) if question else None


def _dedent(lines: list[str], first: str) -> list[str]:
    """Lines of a list item without the item's content indentation."""
    marker = _LIST_MARKER.match(first)
    indent = 0
    if marker:
        gap = len(marker.group(3))
        indent = len(marker.group(1)) + len(marker.group(2)) + (gap if 1 <= gap <= 4 else 1)
    out = []
    for line in lines:
        line = line.expandtabs(4) if line.startswith("\t") else line
        strip = min(indent, len(line) - len(line.lstrip(" ")))
        out.append(line[strip:])
    return out


def _answer(lines: list[str], base_url: str) -> str:
    text = "\n".join(line if line.strip() else "" for line in lines).strip("\n")
    return absolutize_links(drop_language_links(text), base_url)


def _by_headings(lines: list[str], headings: list[outline.Heading], base_url: str) -> list[_Question]:
    level = outline.question_level(headings, lines)
    title = outline.title(headings)
    limits = sorted({h.start for h in headings if h.level <= level} | {len(lines)})
    found = []
    for heading in headings:
        if heading.level != level or heading is title or not heading.text:
            continue
        end = min(limit for limit in limits if limit > heading.start)
        answer = _answer(lines[heading.end : end], base_url)
        section = outline.section(headings, heading.start, level)
        found.append(_Question(heading.quoted or heading.text, heading.start, answer, section, heading.text))
    return found


def _by_list(tokens: list[Token], lines: list[str], headings: list[outline.Heading], base_url: str) -> list[_Question]:
    items = []  # (question, key, line, spans, item end)
    for i, token in enumerate(tokens):
        if token.type == "list_item_open" and token.map:
            bold = _bold_question(tokens, i)
            if bold:
                items.append((*bold, token.map[1]))
    limits = sorted({h.start for h in headings} | {line for _, _, line, _, _ in items} | {len(lines)})
    found = []
    for question, key, start, spans, item_end in items:
        end = min(limit for limit in limits if limit > start)
        body = _dedent(lines[start + spans : item_end], lines[start]) + lines[item_end:end]
        section = outline.section(headings, start, below=7)
        found.append(_Question(question, start, _answer(body, base_url), section, key))
    return found


def _short(section: outline.Heading) -> str:
    """A section title without its trailing remark: "FastChat (falsh attention)" -> "FastChat"."""
    return re.sub(r"(?<!\s)\s*[(（][^()（）]*[)）]$", "", section.text) or section.text  # a space run read once


def _titled(found: list[_Question]) -> list[_Question]:
    """Tips ("Note") and questions repeated in several sections get their section's name."""
    counts = Counter(q.key for q in found)
    out = []
    for q in found:
        generic = q.key.rstrip(":：").strip().lower() in _GENERIC_QUESTIONS
        if q.section and (generic or counts[q.key] > 1):
            question, key = (f"{text.rstrip(':：').strip()} ({_short(q.section)})" for text in (q.question, q.key))
            q = _Question(question, q.start, q.answer, q.section, key)
        out.append(q)
    return out


def _document(path: Path) -> tuple[str, bool]:
    text = read_text(path)
    if not text.strip():
        raise SourceError(path, "file is empty")
    if has_lost_newlines(text):
        return restore_newlines(text), True
    return text, False


def title_of(text: str) -> str:
    """The text of the document's first heading ("" when it has none)."""
    headings = outline.headings(_md.parse(restore_newlines(text) if has_lost_newlines(text) else text))
    return headings[0].text if headings else ""


def heading_title(text: str) -> str:
    """The text of the document's first heading when that is a `#` heading, its title ("" when
    the document opens with a question or section heading, or has none)."""
    headings = outline.headings(_md.parse(restore_newlines(text) if has_lost_newlines(text) else text))
    return headings[0].text if headings and headings[0].level == 1 else ""


def guess_entries_style(text: str) -> str:
    """ "headings" when questions are headings, "list" when they are bold list items."""
    text = restore_newlines(text) if has_lost_newlines(text) else text
    tokens = _md.parse(text)
    headings = outline.headings(tokens)
    level, title = outline.question_level(headings, text.split("\n")), outline.title(headings)
    questions = sum(h.level == level and h is not title for h in headings)
    items = [i for i, token in enumerate(tokens) if token.type == "list_item_open"]
    bold = sum(_bold_question(tokens, i) is not None for i in items)
    if bold > questions or (questions < 2 and bold):
        return "list"
    return "headings"


def _deep_link(page: str, anchor: str) -> str:
    """The page with the anchor: a line (`L34`) of a GitHub file goes to its source view
    (`?plain=1#L34`), the rendered page having no per-line anchors."""
    if not page or not anchor:
        return page
    if re.fullmatch(r"L\d+", anchor):
        return f"{page}?plain=1#{anchor}" if "github.com/" in page else page
    # Percent-encoded, as a browser sends it and copies it: `#%E7%BB%AD%E8%B7%91...` for a
    # Chinese heading, in the JSON, the pages and Slack alike (an ASCII anchor is unchanged).
    return f"{page}#{quote(anchor, safe='-_')}"


def parse_source(path: Path, source: Source) -> list[Entry]:
    """The entries of one FAQ document, in document order."""
    path = Path(path)
    text, restored = _document(path)
    lines = text.split("\n")
    tokens = _md.parse(text)
    headings = outline.headings(tokens)
    if source.entries == "headings":
        found = _by_headings(lines, headings, source.url)
        expected = "'## question' headings"
    else:
        found = _by_list(tokens, lines, headings, source.url)
        expected = "bold list items ('1. **question**')"
    if not found:
        raise SourceError(path, f"no entries found: expected {expected} (entries = {source.entries!r})")
    entries: list[Entry] = []
    first_line: dict[str, int] = {}
    for q in _titled(found):
        line = 1 if restored else q.start + 1
        if source.entries == "headings":
            anchor = next(h.anchor for h in headings if h.start == q.start)
        elif not restored:
            anchor = f"L{line}"  # a list item has no anchor: its line in GitHub's source view
        else:
            anchor = q.section.anchor if q.section else ""
        entry = Entry(
            id=entry_id(source.name, q.key),
            question=q.question,
            answer=q.answer,
            source=source.name,
            source_title=source.title,
            source_version=source.version,
            source_url=source.url,
            framework=source.framework,
            section=q.section.text if q.section else "",
            url=_deep_link(source.url, anchor),
            lang=source.lang,
            line=line,
            file=source.file,
        )
        if entry.id in first_line:
            earlier = first_line[entry.id]
            message = f"question {q.question!r} repeats the one on line {earlier} (same id {entry.id})"
            raise SourceError(path, message, line)
        first_line[entry.id] = line
        entries.append(entry)
    return entries
