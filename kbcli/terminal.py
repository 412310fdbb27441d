"""Answers for a terminal: Markdown rendered by rich, code blocks kept verbatim, links a
terminal can click, tables whose cells wrap rather than being cut, and a progress bar on
standard error."""

from __future__ import annotations

import io
import re
import shutil
import sys
from contextlib import contextmanager
from typing import Callable, Iterator, Sequence
from urllib.parse import quote

from markdown_it import MarkdownIt
from rich.cells import cell_len
from rich.console import Console
from rich.markdown import Markdown
from rich.table import Table
from rich.text import Text

from kb.answer import elsewhere_note
from kb.entries import Entry
from kb.hits import Hit, SearchResult
from kb.provenance import original_url, version_note
from kb.wording import words

from .progress import STAGES, progress_lines

__all__ = ["clickable", "counted", "render_markdown", "print_result", "print_rows", "progress_bar"]

# Everything a URL may hold as it is; anything else (Chinese in an anchor, a space) is percent-encoded.
_URL_SAFE = ";/?:@&=+$,#%[]!~*'()-._"
PIPED_WIDTH = 80  # cells a column is padded to at most, in a table printed to a pipe or a file
_TRAILING = re.compile(r"(?<!\s)\s+((?:\x1b\[[0-9;]*m)*)$")  # the spaces rich pads a line with, before any colour codes


def counted(n: int, one: str, many: str = "") -> str:
    """`n` things, the noun agreeing: "1 entry", "3 entries" (`many`: `one` + "s" unless given)."""
    return f"{n} {one if n == 1 else many or one + 's'}"


def clickable(url: str) -> str:
    """The URL with non-ASCII characters and spaces percent-encoded, so a terminal sees one link."""
    return quote(url, safe=_URL_SAFE)


def render_markdown(text: str, width: int = 80, color: bool = False) -> str:
    """`text` (Markdown) as terminal text: prose rendered by rich at `width`, code blocks
    exactly as written. rich breaks lines at spaces only and cuts a longer run of text, so
    a paragraph with a run longer than `width` (an identifier, a URL, a Chinese sentence
    with `SPARSE_ATTN` in it) is rendered as wide as that run: the terminal wraps it, and
    the text itself stays whole."""
    lines = text.splitlines()
    parts: list[str] = []
    start = 0
    for token in MarkdownIt("commonmark").parse(text):
        if token.type in ("fence", "code_block") and token.map:
            parts.append(_prose("\n".join(lines[start : token.map[0]]), width, color))
            parts.append(token.content.rstrip("\n"))
            start = token.map[1]
    parts.append(_prose("\n".join(lines[start:]), width, color))
    return "\n\n".join(part for part in parts if part.strip())


def _prose(text: str, width: int, color: bool) -> str:
    """Markdown without code blocks, a paragraph (or list item) at a time, each at `width`
    or as wide as its longest run of text."""
    return "\n\n".join(filter(None, (_paragraph(part, width, color) for part in re.split(r"\n\s*\n", text))))


def _paragraph(text: str, width: int, color: bool) -> str:
    if not text.strip():
        return ""
    # Runs as shown: a link's text and its URL apart (Markdown's brackets split them).
    longest = max((cell_len(run) for run in re.findall(r"[^\s\[\]()]+", text)), default=0)
    out = io.StringIO()
    console = Console(
        file=out, width=max(width, longest + 6), force_terminal=color, no_color=not color, highlight=False
    )
    console.print(Markdown(text, hyperlinks=False))
    return "\n".join(_TRAILING.sub(r"\1", line) for line in out.getvalue().strip("\n").splitlines())


def print_rows(
    title: str, columns: Sequence[str], rows: Sequence[Sequence[object]], console: Console | None = None
) -> None:
    """A table under its title, every value whole: on a terminal each column as wide as the
    terminal allows, a longer value wrapped within its cell; elsewhere (a pipe, a file) one
    line a row, columns aligned, so `grep` and `cut` see each value as it is. A column is
    padded to at most `PIPED_WIDTH` cells: a longer value (a pasted trace) is whole, and
    pushes the rest of its own row along rather than padding every other row by as much.
    A value's own line breaks become " | "."""
    console = console or Console(highlight=False)
    console.out(f"\n{title}", highlight=False)
    if not rows:
        console.out("  (none)", highlight=False)
        return
    cells = [[_flat(value) for value in row] for row in rows]
    numeric = [all(isinstance(row[i], int) for row in rows) for i in range(len(columns))]
    if console.is_terminal:
        table = Table(box=None, pad_edge=False, padding=(0, 0, 0, 2), header_style="bold")
        for name, right in zip(columns, numeric):
            table.add_column(name, justify="right" if right else "left", overflow="fold")
        for row in cells:
            table.add_row(*(Text(cell) for cell in row))
        console.print(table)
        return
    widths = [min(max(cell_len(row[i]) for row in [list(columns), *cells]), PIPED_WIDTH) for i in range(len(columns))]
    for row in [list(columns), *cells]:
        parts = [
            " " * max(w - cell_len(c), 0) + c if right else c + " " * max(w - cell_len(c), 0)
            for c, w, right in zip(row, widths, numeric)
        ]
        console.out("  " + "  ".join(parts).rstrip(), highlight=False)


def _flat(value: object) -> str:
    return " | ".join(line for line in str(value).splitlines() if line.strip())


@contextmanager
def progress_bar(lines: str = "") -> Iterator[Callable[[str, int, int], None]]:
    """A callback `(stage, done, total)` that draws a bar per stage on standard error while
    the block runs. When standard error is not a terminal: with `lines` (the command's name),
    a line every few seconds (`kbcli.progress`); without, nothing."""
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TaskID,
        TextColumn,
        TimeRemainingColumn,
    )

    console = Console(file=sys.stderr)
    if not console.is_terminal:
        if lines:
            with progress_lines(lines, sys.stderr) as reporter:
                yield reporter
        else:
            yield lambda stage, done, total: None
        return
    tasks: dict[str, TaskID] = {}
    columns = (TextColumn("{task.description:<6}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn())
    with Progress(*columns, console=console) as bar:

        def update(stage: str, done: int, total: int) -> None:
            if stage not in tasks:
                tasks[stage] = bar.add_task(STAGES.get(stage, stage), total=total)
            bar.update(tasks[stage], completed=done, total=total)

        yield update


def print_result(result: SearchResult, hl: str, brief: bool = False) -> None:
    """A search for the terminal: the framework note, the best answer whole (unless `brief`),
    then the other entries worth showing, each as its title, framework and link. Below the point,
    the first entry "may answer" (with its confidence, then its answer whole) above the calibration's floor,
    else none does."""
    hits = result.in_language(hl).worth_showing()
    note = elsewhere_note(result, hl)
    if note:
        print(note)
    if hits and result.state.uncertain:
        print(words(result.state, "en", confidence=f"{result.confidence:.2f}"))
        if not brief:  # its answer whole, set apart under that line, then the others
            _print_answer(hits[0], hl)
            hits = hits[1:]
            if hits:
                print("\nOther entries:")
    elif not result.answered:
        opening = "" if note else "The FAQ has no confident answer to this. "
        print(f"{opening}Nearest entries, which may not answer it:" if hits else "No entries matched.")
    elif not brief:
        _print_answer(hits[0], hl)
        hits = hits[1:]
        if hits:
            print("\nAlso close:")
    for hit in hits:
        _print_title(hit, hl)


def _print_title(hit: Hit, hl: str) -> None:
    e = hit.entry
    print(f"{hit.rank}. {e.question}")
    note = _version_line(e, hl)
    if note:
        print(f"   ({note})")
    version = f" · {e.source_version}" if e.source_version else ""
    print(f"   {e.source_label(e.lang)}{version} · score {hit.score:.3f} · {', '.join(e.tags)}")
    print(f"   {_place(e)}")


def _place(e: Entry) -> str:
    """Its link, one a terminal can click; else its file and line (or sheet and row) as a reader names them."""
    return clickable(e.url) if e.url else e.place


def _version_line(e: Entry, hl: str) -> str:
    """The entry's version note, with the original's link when the text is a translation."""
    note = version_note(e, hl)
    original = original_url(e) if e.lang == hl else ""
    return f"{note} Original: {clickable(original)}" if note and original else note


def _print_answer(hit: Hit, hl: str) -> None:
    """The best entry whole: its question, where it is, and its answer rendered for the terminal."""
    e = hit.entry
    color = sys.stdout.isatty()
    width = shutil.get_terminal_size().columns if color else 80
    print(render_markdown(f"## {e.question}", width, color))
    note = _version_line(e, hl)
    if note:
        print(f"({note})")
    version = f" · {e.source_version}" if e.source_version else ""
    print(f"{e.source_label(e.lang)}{version} · {_place(e)}\n")
    print(render_markdown(e.answer, width, color))
