"""A translation as the LLM drafts it: the document in pieces, a request for each, each reply kept or its entry left out.

The pieces are the text before the first entry (the title and section headings), then each
entry, from its question's line to the line before the next entry's. Each piece goes to the
LLM in a request of its own (`messages`); `Draft.offer` keeps a reply only when the draft
still parses into the same entries with it in place and it passes `problem`'s checks, and
`Draft.leave_out` drops an entry but the section headings after it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

from markdown_it import MarkdownIt

from kb.entries import Entry, Source
from kb.errors import SourceError

from .markdown_faq import parse_source
from .translation_checks import LANG_NAMES, other_lang, problem

__all__ = ["SYSTEM_PROMPT", "Piece", "Draft", "pieces_of", "messages"]

_md = MarkdownIt("commonmark")

SYSTEM_PROMPT = """\
You translate a FAQ about training large language models from {source} into {target}.
The user sends one part of a Markdown document: {part}. Reply with that Markdown translated \
into {target}, and nothing else: no preamble, no notes, no code fence around the reply.
Keep the Markdown structure as it is: the same headings at the same levels, the same list \
markers with the same indentation, the same code fences.
Copy code blocks, inline code (`like this`), URLs and link targets exactly, character for \
character; translate the prose and the text of links. Keep names of products, commands, \
flags, configuration keys and error messages as written."""

_PARTS = {
    "entry": "one question and its answer",
    "frame": "the document's title and the headings before its first question",
}


@dataclass
class Piece:
    """The frame (entry None) or one entry, with the lines it has in the draft so far."""

    lines: list[str]  # as written in the original
    entry: Entry | None
    tail: int  # where the headings after the entry's answer start (sections; len(lines): none)
    text: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.text = list(self.lines)

    @property
    def core(self) -> str:
        """The lines to translate, without the blank lines that end them."""
        return "\n".join(self.lines).rstrip("\n").rstrip()

    @property
    def blank_after(self) -> int:
        return len(self.lines) - len(self.core.split("\n")) if self.core else 0


def _tail(lines: list[str], style: str) -> int:
    """In an entry's lines, the first heading past its answer: the start of a new section."""
    headings = [  # (first line, level) of each
        (t.map[0], int(t.tag[1]))
        for t in _md.parse("\n".join(lines))
        if t.type == "heading_open" and t.map and t.level == 0
    ]
    level = headings[0][1] if style == "headings" and headings and headings[0][0] == 0 else 7
    return next((start for start, depth in headings if start > 0 and depth <= level), len(lines))


def pieces_of(text: str, entries: list[Entry], source: Source, path: Path) -> list[Piece]:
    """The document `text` (of the file `path`) cut into the frame, if it has one, and its entries."""
    lines = text.split("\n")
    starts = [e.line - 1 for e in entries]
    if any(b <= a for a, b in zip(starts, starts[1:])) or (starts and starts[0] < 0):
        raise SourceError(path, "its entries cannot be told apart by line (has the file lost its line breaks?)")
    pieces = [Piece(lines[: starts[0]], None, 0)] if starts[0] > 0 else []
    for entry, start, end in zip(entries, starts, [*starts[1:], len(lines)]):
        block = lines[start:end]
        pieces.append(Piece(block, entry, _tail(block, source.entries)))
    return pieces


class Draft:
    """The document as it is being translated: each piece either translated, still the
    original, or (left out) only its section headings."""

    def __init__(self, pieces: list[Piece], source: Source, folder: Path):
        self.pieces, self.source = pieces, source
        self.scratch = folder / "draft.md"
        self.entries = self._parse(self.text())

    def text(self, index: int = -1, lines: Sequence[str] = ()) -> str:
        return "\n".join(line for i, piece in enumerate(self.pieces) for line in (lines if i == index else piece.text))

    def _parse(self, text: str) -> list[Entry]:
        self.scratch.write_text(text, encoding="utf-8")
        return parse_source(self.scratch, self.source)

    def offer(self, index: int, reply: str) -> str | None:
        """Put the reply in place of piece `index` if it fits there; else say why not."""
        piece = self.pieces[index]
        lines = [*reply.split("\n"), *[""] * piece.blank_after]
        start = 1 + sum(len(p.text) for p in self.pieces[:index])
        try:
            after = self._parse(self.text(index, lines))
        except SourceError as exc:
            if piece.entry is None or "no entries found" not in exc.message:
                return f"the draft would not parse: {exc.message}"
            after = []
        inside = [e for e in after if start <= e.line < start + len(lines)]
        wanted = 0 if piece.entry is None else 1
        if len(inside) != wanted:
            if piece.entry is None:
                return f"the reply holds {len(inside)} entries"
            if inside:
                return f"the reply holds {len(inside)} entries, not one"
            return f"the reply is no longer an entry ({_STYLE[self.source.entries]})"
        if piece.entry is not None and inside[0].line != start:
            return "the reply does not begin with the question"
        if len(after) != len(self.entries):
            return "the reply changes the entries around it"
        found = problem(piece.core, reply, self.source.lang, other_lang(self.source.lang))
        if found:
            return found
        piece.text, self.entries = lines, after
        return None

    def leave_out(self, index: int) -> None:
        """Drop the entry, keeping the section headings after it so later entries keep their sections."""
        piece = self.pieces[index]
        piece.text = piece.lines[piece.tail :]
        try:
            self.entries = self._parse(self.text())
        except SourceError:  # nothing left that parses: the caller says no entry was translated
            self.entries = []


_STYLE = {"headings": "a '## question' heading", "list": "a bold list item '1. **question**'"}


def messages(piece: Piece, source_lang: str, target_lang: str) -> list[dict[str, str]]:
    """The LLM's request for one piece: the system prompt for its kind, then its lines."""
    system = SYSTEM_PROMPT.format(
        source=LANG_NAMES[source_lang],
        target=LANG_NAMES[target_lang],
        part=_PARTS["frame" if piece.entry is None else "entry"],
    )
    return [{"role": "system", "content": system}, {"role": "user", "content": piece.core}]
