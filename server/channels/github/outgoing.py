"""Text going out in the bot's public comment (an upstream FAQ's or a written answer's words), made harmless.

Outside code, a mention (`@user`, `@org/team`, or an `@` written `&#64;` or `&commat;`) gets a zero-width joiner
after its `@`: it reads the same, but GitHub's mentions need a letter or digit right after the `@`, so nobody is
notified and no team is pinged. An `@` right after an ASCII letter or digit (`a@b.com`) is no mention and is left
alone. Every `<` outside code becomes `&lt;`, so that no raw HTML (a tag, an `<!-- -->` comment hiding text, a
`<details>` swallowing the footer) passes: it is shown as written.

Which text is code is read by a CommonMark parser (markdown-it), not by counting backticks: a code span opened by a
run of N backticks closes only at a run of exactly N (an unmatched run is literal text, and a mention after it is
live); a fence of three or more backticks or tildes, indented up to three spaces, closes only at a fence of the same
character at least as long, and an unclosed one runs to the end; an indented block is code. Each `@`, `<` and
`&#64;` (and where a bare URL starts) is swapped for a private character of its own before the parse, so the tokens
say which of them are in code.

GitHub's parser (cmark-gfm) reads a few shapes otherwise, so code counts only where every reading agrees (`_in_code`):
with GitHub's tables and without them (a table splits its cells at the pipes before reading code spans; a paragraph's
last line can head one); with the backticks of each bare URL GitHub links outside code (`http://…`, `www.…`) taken
into its link, leftmost first, as GitHub reads on (past four such links nothing counts as code); and never an
indented block GitHub reads as a paragraph's continuation, nor a code span in a paragraph GitHub may pair otherwise. The result is parsed again and, should a mention or a tag still be live in it, everything
(code too) is neutralised instead. The text is cut to GitHub's limit on a comment first; the work is a few parses
and passes, linear in its length."""

from __future__ import annotations

import unicodedata
from html.entities import html5
from itertools import accumulate

from markdown_it import MarkdownIt
from markdown_it.token import Token

__all__ = ["public", "live", "JOINER", "MAX_PUBLIC"]

JOINER = "\u200d"  # zero-width joiner: invisible, and not a character a GitHub login can start with
MAX_PUBLIC = 65_536  # characters: GitHub's limit on a comment, and so on any text going into one
_GFM = MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"])  # as GitHub reads a comment
_PLAIN = MarkdownIt("commonmark", {"html": True}).enable(["strikethrough"])  # the same without tables
_MARK = 0xF0000  # supplementary private use planes: a character for each span (`@`, `<`, …), never in the text
_FIRST_MARK = chr(_MARK)
_ALNUM = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
_WORD = _ALNUM | {"_"}  # a word character as GitHub's mention filter reads one: ASCII only (`中@a` is a mention)
_MOST_TICKS = 80  # the longest run of backticks GitHub's parser closes a code span with
_SPACE = frozenset(" \t\n\v\f")  # what ends a bare URL GitHub links
_URL_MARKS = frozenset(":wW")  # where a bare URL starts: the `:` of `://`, the first `w` of `www.`
_ROUNDS = 4  # bare URLs with a backtick GitHub may link, read one by one; past these, nothing counts as code
_DELIMITER_ROW = frozenset("|-: \t")  # a table's second line is made of these
_CLOSED = ("fence", "heading_open", "hr", "code_block")  # blocks after which an indented line starts code


def public(text: str) -> str:
    """`text` with its mentions and raw HTML neutralised outside code, its code left as written."""
    text = _normalised(text[:MAX_PUBLIC])
    spans = _spans(text)
    if all(text[start] in _URL_MARKS for start, _ in spans):
        return text
    parsers = (_GFM, _PLAIN) if "|" in text else (_GFM,)  # no pipe, no table
    code = _agreed(_marked(text, spans), parsers)
    if code and "`" in text:
        code = _linked(text, spans, parsers, code)
    said = _neutralised(text, spans, code)
    return said if not code or not live(said) else _neutralised(text, spans, set())


def _agreed(marked: str, parsers: tuple[MarkdownIt, ...]) -> set[int]:
    """The spans in code in every reading of `marked`."""
    code = _in_code(marked, parsers[0])
    for parser in parsers[1:]:
        code &= _in_code(marked, parser) if code else set()
    return code


def live(markdown: str) -> bool:
    """Whether `markdown`, as GitHub renders it, holds raw HTML or a mention outside code (in a run of text)."""
    for token in _GFM.parse(markdown):
        if token.type == "html_block" or (token.children and _live_inline(token.children)):
            return True
    return False


def _live_inline(children: list[Token]) -> bool:
    run: list[str] = []
    for child in [*children, Token("end", "", 0)]:
        if child.type == "text":
            run.append(child.content)
            continue
        if run and _mentions("".join(run)):
            return True
        run = []
        if child.type == "html_inline":
            return True
    return False


def _mentions(text: str) -> bool:
    """Whether `text` (one text node) holds what GitHub reads as a mention: `@` then a letter or digit, at the
    start or after anything but an ASCII word character."""
    at = text.find("@")
    while at >= 0:
        if text[at + 1 : at + 2] in _ALNUM and (at == 0 or text[at - 1] not in _WORD):
            return True
        at = text.find("@", at + 1)
    return False


def _normalised(text: str) -> str:
    """`text` as the parser reads it (CommonMark's line endings, NUL replaced), with no character of the marks'."""
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\0", "\ufffd")
    if any(ch >= _FIRST_MARK for ch in text):
        text = "".join("\ufffd" if ch >= _FIRST_MARK else ch for ch in text)
    return text


def _spans(text: str) -> list[tuple[int, int]]:
    """Where `text` holds an `@`, a `<`, an entity that reads as `@`, or where a bare URL may start (the `:` of
    `://`, the first `w` of `www.`): (start, end), in order."""
    found: list[tuple[int, int]] = []
    at = 0
    while at < len(text):
        ch, end = text[at], at + 1
        if ch == "&":
            end = _at_entity(text, at) or end
        if ch in "@<" or end > at + 1 or (ch in _URL_MARKS and _bare_url(text, at)):
            found.append((at, end))
        at = end
    return found


def _bare_url(text: str, at: int) -> bool:
    """Whether GitHub may link a bare URL here: `://` after `http`, `https` or `ftp` (and nothing else of letters),
    or `www.` at the start, after a space or one of `*_~(` (or `>` and `|`, where they end a quote's or a cell's
    marks: `_linked` sees to it); then a host without `_` in its last two labels."""
    if text[at] == ":":
        if text[at + 1 : at + 3] != "//":
            return False
        scheme = at
        while scheme > 0 and text[scheme - 1].isascii() and text[scheme - 1].isalpha():
            scheme -= 1
        if text[scheme:at].lower() not in ("http", "https", "ftp"):
            return False
        host = at + 3
    else:
        if text[at : at + 4].lower() != "www." or (at and text[at - 1] not in "*_~(>|" and not text[at - 1].isspace()):
            return False
        host = at
    labels = [0]  # underscores in each label of the host, as GitHub counts them
    for ch in text[host + 1 : host + 256]:
        if ch == "_":
            labels[-1] += 1
        elif ch == ".":
            labels.append(0)
        elif ch != "-" and (ch.isspace() or unicodedata.category(ch)[0] in "PSZ"):
            break
    return not any(labels[-2:])


def _at_entity(text: str, at: int) -> int:
    """The end of the entity starting at `at` when it reads as `@` (`&#64;`, `&#x40;`, `&commat;`), else 0."""
    semicolon = text.find(";", at + 1, at + 34)
    if semicolon < 0:
        return 0
    name = text[at + 1 : semicolon]
    if name[:2] in ("#x", "#X"):
        digits, valid, base, most = name[2:], "0123456789abcdefABCDEF", 16, 6
    elif name[:1] == "#":
        digits, valid, base, most = name[1:], "0123456789", 10, 7
    else:
        return semicolon + 1 if name.isascii() and name.isalnum() and html5.get(name + ";") == "@" else 0
    if not 0 < len(digits) <= most or any(d not in valid for d in digits):
        return 0
    return semicolon + 1 if int(digits, base) == ord("@") else 0


def _marked(text: str, spans: list[tuple[int, int]]) -> str:
    """`text` with each span swapped for its own private character."""
    parts: list[str] = []
    at = 0
    for index, (start, end) in enumerate(spans):
        parts += [text[at:start], chr(_MARK + index)]
        at = end
    parts.append(text[at:])
    return "".join(parts)


def _linked(text: str, spans: list[tuple[int, int]], parsers: tuple[MarkdownIt, ...], code: set[int]) -> set[int]:
    """`code` less what GitHub reads otherwise once it has linked the bare URLs outside code, as it does from left to
    right, backticks and all (up to a space: its `<` is written `&lt;` by now): each URL with a backtick in its
    link, leftmost first, is taken as a link and the text read again; past a few, nothing counts as code."""
    ticks = list(accumulate((ch == "`" for ch in text), initial=0))  # backticks before each position
    ends, end = [0] * len(text), len(text)  # where the run of characters without a space holding each one ends
    for at in range(len(text) - 1, -1, -1):
        end = at if text[at] in _SPACE else end
        ends[at] = end
    unread = {start for start, _ in spans if start and text[start] in "wW" and text[start - 1] in ">|"}
    if unread:  # `www.` after `>` or `|` is linked where it starts a quote's or a cell's text
        tokens = _GFM.parse(_marked(text, spans))
        heads = {ord(t.content[0]) - _MARK for t in tokens if t.type == "inline" and t.content[:1] >= _FIRST_MARK}
        unread -= {spans[index][0] for index in heads}
    chars, reading, after = list(text), code, 0
    for taken in range(_ROUNDS + 1):
        linking = [
            start
            for index, (start, _) in enumerate(spans)
            if start >= after
            and text[start] in _URL_MARKS
            and start not in unread
            and index not in reading
            and ticks[ends[start]] > ticks[start]
        ]
        if not linking:
            return code
        if taken == _ROUNDS:
            return set()
        after = ends[linking[0]]
        for at in range(linking[0], after):
            chars[at] = "'" if chars[at] == "`" else chars[at]
        reading = _agreed(_marked("".join(chars), spans), parsers)
        code &= reading
    return code


def _in_code(marked: str, parser: MarkdownIt) -> set[int]:
    """The spans (by index) that `parser` puts in code in `marked`, less those GitHub may read as text:

    - an indented block right after a line of a paragraph, a table or a link reference definition (`[a]: /url`,
      or a footnote's `[^1]: …`), or after such a definition and blank lines: GitHub continues the paragraph or the
      footnote there, and reads the text on either side of the block with it;
    - the code spans of a paragraph that holds a literal backtick (once an unmatched run has sent GitHub's parser
      through the paragraph, what it remembers of the runs it saw can hide a later span's closing run), a line
      like a table's second (GitHub can make the line above it a table's head), or text on a line either side of
      such an indented block; a code span with a pipe (GitHub's table cells end at one) or opened by more than 80
      backticks (which GitHub never closes)."""
    tokens = parser.parse(marked)
    lines = marked.split("\n")
    closed = bytearray(len(lines) + 1)  # 1: a line of a paragraph, a table or HTML; 2: of a block after which code
    for token in tokens:
        if token.map and (token.type in _CLOSED or token.type in ("paragraph_open", "table_open", "html_block")):
            closed[token.map[0] : token.map[1]] = bytes([2 if token.type in _CLOSED else 1]) * (
                token.map[1] - token.map[0]
            )
    for line, text in enumerate(lines):
        if text.lstrip(" \t>").startswith("[^") and "]:" in text:
            closed[line] = 0  # GitHub's footnote, whatever the parser here makes of it
    inside: set[int] = set()
    doubtful: set[int] = set()  # lines next to an indented block GitHub reads as text
    for token in tokens:
        if token.type == "fence":
            inside.update(_marks(token.content))
        elif token.type == "code_block" and token.map:
            if _code_after(token.map[0], lines, closed):
                inside.update(_marks(token.content))
            else:
                doubtful.update((token.map[0] - 1, token.map[1]))
    for token in tokens:
        if token.type == "inline" and not _doubtful(token, doubtful, parser is _GFM):
            inside.update(
                mark
                for child in token.children or ()
                if child.type == "code_inline" and len(child.markup) <= _MOST_TICKS and "|" not in child.content
                for mark in _marks(child.content)
            )
    return inside


def _code_after(line: int, lines: list[str], closed: bytearray) -> bool:
    """Whether an indented block starting at `line` is code as GitHub reads it: the first line, or after a
    heading, a fence, a rule or code, or after a paragraph, a table or HTML and a blank line."""
    for before in range(line - 1, -1, -1):
        if lines[before].strip(" \t>"):
            return closed[before] == 2 or (closed[before] == 1 and before < line - 1)
    return True


def _doubtful(inline: Token, doubtful: set[int], tables: bool) -> bool:
    """Whether GitHub may pair the backticks of a paragraph (a heading, a cell) otherwise than the parser here
    (with `tables`, it reads a table's second line as GitHub does, and a paragraph holding one is no table)."""
    if inline.map and any(line in doubtful for line in range(inline.map[0], inline.map[1])):
        return True
    if (
        tables
        and "\n" in inline.content
        and any("|" in line and "-" in line and not set(line) - _DELIMITER_ROW for line in inline.content.split("\n"))
    ):
        return True
    return _stray_backtick(inline.children or [])


def _stray_backtick(children: list[Token]) -> bool:
    """Whether a paragraph's text (an image's description included) holds a backtick that opens no code span."""
    for child in children:
        if child.type == "text" and "`" in child.content:
            return True
        if child.children and _stray_backtick(child.children):
            return True
    return False


def _marks(code: str) -> list[int]:
    return [ord(ch) - _MARK for ch in code if ch >= _FIRST_MARK]


def _neutralised(text: str, spans: list[tuple[int, int]], code: set[int]) -> str:
    """`text` with the spans outside code made inert: `<` as `&lt;`, an `@` with the joiner after it (unless an
    ASCII letter or digit comes before it: an address, not a mention)."""
    parts: list[str] = []
    at = 0
    for index, (start, end) in enumerate(spans):
        parts.append(text[at:start])
        at = end
        if index in code or text[start] in _URL_MARKS:
            parts.append(text[start:end])
        elif text[start] == "<":
            parts.append("&lt;")
        else:
            parts.append("@" if start and text[start - 1] in _ALNUM else "@" + JOINER)
    parts.append(text[at:])
    return "".join(parts)
