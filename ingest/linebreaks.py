"""Line structure for a document that has lost its newlines (headings, lists and
fences all run together on one line), rebuilt so that a Markdown parser can read it.

Only the breaks Markdown needs are put back: around fences, before headings, between
a heading's question and its answer, and before list items. The splitting into
entries is then done on the parser's tokens, as for any other document.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

__all__ = ["has_lost_newlines", "restore_newlines"]

# A fence written inline: "```bash code ```". The opening run follows whitespace and
# is followed by an optional language and a space; "```name```" (inline code written
# with three backticks) has no space inside and is left alone. The fence closes at the
# first run followed by whitespace or the end. Opening and closing runs are found by two
# patterns that never scan past what they match, the closing one from the opening's end:
# a fence opened and never closed ends the search (none after it can close either), so
# the text is read once however many fences it opens.
_FENCE_OPEN = re.compile(r"(?:^|(?<=\s))```([\w+#.-]*+)\s")
_FENCE_CLOSE = re.compile(r"```(?=\s|$)")
# Each run of whitespace is tried from its start only (`(?<!\s)`), so a long run is read once, not once a character.
_HEADING = re.compile(r"(?<!\s)\s+(?=#{1,6} \S)")
# Where an inline heading's question ends and its answer begins: after a question
# mark, or before a list marker, a link or a bullet.
_QUESTION_END = re.compile(r"(?<=[?？])\s+|(?<!\s)\s+(?=\d{1,3}[.)]\s|\[|[-+*]\s)")
# A list item starts after the end of a sentence or a colon.
_LIST_ITEM = re.compile(r"(?<=[。．.!！?？:：;；])\s+(?=(?:\d{1,3}[.)]|[-+*])\s)")
# Inside code: a shell line continuation, a comment, or a new `name = value` statement.
_CODE_BREAK = re.compile(r"(?<=\\)\s+|(?<!\s)\s+(?=#\S)|(?<!\s)\s+(?=[A-Za-z_][\w.]*\s*=[^=])")


def has_lost_newlines(text: str) -> bool:
    """True for a document on (almost) one line that still holds inline headings."""
    body = text.strip()
    return body.count("\n") <= 1 and len(re.findall(r"(?:^|\s)#{1,6} \S", body)) >= 2


def _code(language: str, code: str) -> str:
    lines = _CODE_BREAK.split(code.strip())
    return "\n".join([f"```{language}", *lines, "```"])


def _heading(line: str) -> list[str]:
    # The first `#` run is the marker; the question stops where the answer starts.
    marker, _, rest = line.partition(" ")
    end = _QUESTION_END.search(rest)
    if not end:
        return [line]
    return [f"{marker} {rest[: end.start()].strip()}", "", *_prose(rest[end.end() :])]


def _prose(text: str) -> list[str]:
    lines: list[str] = []
    for block in _HEADING.split(text):
        block = block.strip()
        if not block:
            continue
        if re.match(r"#{1,6} ", block):
            lines += ["", *_heading(block), ""]
        else:
            lines += [item.strip() for item in _LIST_ITEM.split(block)]
    return lines


def _fences(text: str) -> Iterator[tuple[int, int, str, str]]:
    """Each inline fence: where it starts and ends, its language and its code."""
    pos = 0
    while opening := _FENCE_OPEN.search(text, pos):
        closing = _FENCE_CLOSE.search(text, opening.end())
        if closing is None:
            return
        yield opening.start(), closing.end(), opening.group(1), text[opening.end() : closing.start()]
        pos = closing.end()


def restore_newlines(text: str) -> str:
    """The document with the line breaks its Markdown needs put back."""
    lines: list[str] = []
    pos = 0
    for start, end, language, code in _fences(text):
        lines += _prose(text[pos:start])
        lines += ["", _code(language, code), ""]
        pos = end
    lines += _prose(text[pos:])
    restored = "\n".join(lines)
    return re.sub(r"\n{3,}", "\n\n", restored).strip() + "\n"
